"""Which toolchain a checkout asks for, read as rustup reads it, without running anything.

The rustup proxy obeys the checkout's `rust-toolchain.toml` (a `path` toolchain is the
checkout's own `bin/cargo`), so featcheck reads the toolchain file itself: it is data, TOML or
one line naming a channel.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Mapping
from pathlib import Path
from typing import NamedTuple

from featcheck.boundary import read_checkout_file
from featcheck.cargo.argv_gate import TOOLCHAIN, GateError
from featcheck.errors import FeatcheckError
from featcheck.fileio import MAX_CONFIG_BYTES, decode_text
from featcheck.manifest.document import parse_text

TOOLCHAIN_FILES = ("rust-toolchain", "rust-toolchain.toml")
"""In the order rustup prefers them when both are in one directory."""


# A NamedTuple, not a dataclass: made before cargo starts (see audit.py).
class ToolchainRequest(NamedTuple):
    """What selects the toolchain for a directory, as rustup would find it."""

    name: str | None
    """A toolchain name (channel or custom name); None means rustup's default."""
    path: str | None = None
    """`[toolchain] path`: a toolchain directory the checkout supplies."""
    origin: Path | None = None
    """The toolchain file (or settings file) that said so."""
    line: int | None = None
    """The line of `channel`/`path` in `origin`."""
    why: str = "rustup's default toolchain"


def _line_of(text: str, key: str) -> int:
    pattern = re.compile(rf"^\s*(?:{re.escape(key)}|\"{re.escape(key)}\"|'{re.escape(key)}')\s*=")
    for number, line in enumerate(text.splitlines(), 1):
        if pattern.match(line):
            return number
    return 1


def parse_toolchain_file(path: Path, root: Path | None = None) -> ToolchainRequest:
    """Read a `rust-toolchain` or `rust-toolchain.toml` file the way rustup does, as data.

    A one-line `rust-toolchain` is a legacy channel name; anything else is TOML with a
    `[toolchain]` table holding `channel` or `path`. One inside the checkout `root` that links
    out of it is refused (boundary.py).
    """
    text = decode_text(read_checkout_file(path, "toolchain file", MAX_CONFIG_BYTES, root), path)
    why = f"{path.name} in {path.parent}"
    if path.name == "rust-toolchain" and len(text.splitlines()) == 1:
        legacy = text.strip()
        if not legacy:
            raise FeatcheckError("empty toolchain file", path=path, line=1)
        return ToolchainRequest(_checked_name(legacy, path, 1), origin=path, line=1, why=why)
    if not text.strip():
        raise FeatcheckError("empty toolchain file", path=path, line=1)
    document = parse_text(path, text).data
    table = document.get("toolchain")
    if not isinstance(table, dict):
        raise FeatcheckError("toolchain file without a [toolchain] table", path=path, line=1)
    channel, directory = table.get("channel"), table.get("path")
    if channel is not None and directory is not None:
        raise FeatcheckError(
            "toolchain file names both a channel and a path", path=path, line=_line_of(text, "path")
        )
    if directory is not None:
        line = _line_of(text, "path")
        if not isinstance(directory, str):
            raise FeatcheckError("toolchain `path` is not a string", path=path, line=line)
        return ToolchainRequest(None, path=directory, origin=path, line=line, why=why)
    if channel is not None:
        line = _line_of(text, "channel")
        if not isinstance(channel, str):
            raise FeatcheckError("toolchain `channel` is not a string", path=path, line=line)
        return ToolchainRequest(_checked_name(channel, path, line), origin=path, line=line, why=why)
    # Only components/targets/profile: rustup uses its default toolchain.
    return ToolchainRequest(None, origin=path, line=1, why=why)


def _checked_name(name: str, origin: Path, line: int) -> str:
    """A toolchain name, never a path (RUSTUP_TOOLCHAIN accepts paths) nor an option."""
    try:
        return TOOLCHAIN.check(name)
    except GateError as error:
        raise FeatcheckError(f"toolchain: {error}", path=origin, line=line) from None


def find_toolchain_request(
    start: Path, overrides: Mapping[Path, str], root: Path | None = None
) -> ToolchainRequest:
    """The nearest directory override or toolchain file from `start` upward, as rustup finds it.

    At each directory rustup checks its own `rustup override set` entries first, then
    `rust-toolchain`, then `rust-toolchain.toml`; the first hit decides.
    """
    directory = start.absolute()
    with contextlib.suppress(OSError):
        directory = directory.resolve()
    for candidate in (directory, *directory.parents):
        if candidate in overrides:
            return ToolchainRequest(
                _checked_name(overrides[candidate], Path("settings.toml"), 1),
                why=f"rustup override for {candidate}",
            )
        for name in TOOLCHAIN_FILES:
            file = candidate / name
            try:
                present = file.exists()
            except OSError:
                present = False
            if present:
                return parse_toolchain_file(file, root)
    return ToolchainRequest(None)
