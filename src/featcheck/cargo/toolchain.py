"""Which cargo and rustc an audit runs, chosen without running anything from the checkout.

Running `cargo` in someone else's checkout can run their programs before cargo reads a single
manifest: the rustup proxy obeys the checkout's `rust-toolchain.toml` (a `path` toolchain is
the checkout's own `bin/cargo`). featcheck therefore reads the toolchain file itself (it is
data: TOML, or one line naming a channel), refuses a `path` toolchain unless the user trusts the
checkout, asks rustup for the real binaries of the named toolchain from a neutral directory,
and runs those binaries directly. Without rustup, the cargo and rustc on PATH are used.
"""

from __future__ import annotations

import contextlib
import functools
import os
import re
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any, NamedTuple

from featcheck.background import Background
from featcheck.boundary import (
    checkout_root,
    read_checkout_file,
    refuse_checkout_program,
    refuse_untrusted_rustup_home,
)
from featcheck.cargo.argv_gate import TOOLCHAIN, Argument, GateError, option, word
from featcheck.cargo.process import run_process
from featcheck.errors import FeatcheckError
from featcheck.fileio import MAX_CONFIG_BYTES, decode_text, read_regular_file

TOOLCHAIN_FILES = ("rust-toolchain", "rust-toolchain.toml")
"""In the order rustup prefers them when both are in one directory."""

DEFAULT_TIMEOUT = 60.0
"""How long rustup may take to answer when the caller sets no timeout (--timeout does)."""


def neutral_directory() -> Path:
    """A working directory no checkout controls: the root of the file system.

    cargo reads `.cargo/config.toml` from its working directory and every directory above it,
    and rustup looks for toolchain files the same way; the root has no parent a user can write.
    """
    return Path(os.path.abspath(os.sep))


def read_small_file(path: Path, what: str) -> bytes:
    """The bytes of a regular file of at most MAX_CONFIG_BYTES (a FIFO is refused at once)."""
    return read_regular_file(path, what, MAX_CONFIG_BYTES)


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


# A NamedTuple, not a dataclass: made before cargo starts (see audit.py).
class Toolchain(NamedTuple):
    """The real binaries an audit runs."""

    cargo: Path
    rustc: Path
    rustup_name: str | None
    """The rustup toolchain to pin with RUSTUP_TOOLCHAIN; None without rustup."""
    why: str


# --- reading toolchain files ---------------------------------------------------------------


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
    import tomlkit  # here, not at the top: most checkouts have no toolchain file
    from tomlkit.exceptions import ParseError

    try:
        document = tomlkit.parse(text).unwrap()
    except ParseError as error:
        raise FeatcheckError(
            f"invalid TOML in toolchain file: {error}", path=path, line=error.line
        ) from None
    except Exception as error:  # tomlkit raises a few other types on hostile input
        raise FeatcheckError(f"invalid TOML in toolchain file: {error}", path=path) from None
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


def _rustup_home() -> Path:
    home = os.environ.get("RUSTUP_HOME")
    return Path(home) if home else Path.home() / ".rustup"


# A NamedTuple, not a dataclass: made before cargo starts (see audit.py).
class RustupSettings(NamedTuple):
    """What RUSTUP_HOME/settings.toml (the user's own) says."""

    overrides: dict[Path, str]
    """`rustup override set` entries."""
    default: str | None
    """`rustup default`, as recorded; None when the file does not say."""


def rustup_settings() -> RustupSettings:
    """RUSTUP_HOME/settings.toml, read as data (absent or unreadable: nothing is known)."""
    settings = _rustup_home() / "settings.toml"
    try:
        text = read_small_file(settings, "rustup settings file").decode()
        document = _plain_settings(text)
        if not document:
            from featcheck.toml_read import toml_data  # a TOML parser only where needed

            document = toml_data(text)
    except Exception:
        return RustupSettings({}, None)
    table = document.get("overrides")
    overrides = {
        Path(k): v
        for k, v in (table.items() if isinstance(table, dict) else ())
        if isinstance(k, str) and isinstance(v, str)
    }
    default = document.get("default_toolchain")
    return RustupSettings(overrides, default if isinstance(default, str) and default else None)


_STRING = r'"([^"\\\x00-\x1f\x7f]*)"'  # a basic string without escapes
_SETTING_LINE = rf"[ \t]*(?:([A-Za-z0-9_-]+)|{_STRING})[ \t]*=[ \t]*{_STRING}[ \t]*"


def _plain_settings(text: str) -> dict[str, Any] | None:
    """settings.toml as rustup writes it (`key = "value"` lines, `[overrides]`), read without
    loading a TOML parser before cargo starts (4 ms); None for anything else, which the TOML
    parser reads instead."""
    line_pattern = re.compile(_SETTING_LINE)
    document: dict[str, Any] = {}
    table = document
    for text_line in text.removesuffix("\n").split("\n"):
        line = text_line.removesuffix("\r")
        stripped = line.strip(" \t")
        if not stripped or stripped.startswith("#"):
            continue
        if stripped.startswith("[") and stripped.endswith("]"):
            name = stripped[1:-1].strip(" \t")
            if not (name.isascii() and name.replace("_", "").replace("-", "").isalnum()):
                return None
            if name in document:
                return None
            table = document[name] = {}
            continue
        match = line_pattern.fullmatch(line)
        if match is None:
            return None
        bare, quoted, value = match.groups()
        key = bare if bare is not None else quoted
        if key in table:
            return None
        table[key] = value
    return document


def which(name: str) -> str | None:
    """`shutil.which(name)`, without importing shutil before cargo starts (it brings the zlib,
    bz2 and lzma modules: 2 ms of every audit). The same search: PATH (else the system's
    default), each directory once, the first executable file."""
    if sys.platform == "win32":
        import shutil

        return shutil.which(name)
    path = os.environ.get("PATH")
    if path is None:
        path = os.confstr("CS_PATH") or os.defpath
    seen: set[str] = set()
    for directory in path.split(os.pathsep):
        if directory in seen:
            continue
        seen.add(directory)
        candidate = os.path.join(directory, name)
        if os.access(candidate, os.X_OK) and not os.path.isdir(candidate):
            return candidate
    return None


# --- asking rustup --------------------------------------------------------------------------


def _is_rustup_proxy(cargo: str, rustup: str | None) -> bool:
    if rustup is not None:
        try:
            if os.path.samefile(cargo, rustup):
                return True
        except OSError:
            pass
    return Path(os.path.realpath(cargo)).stem in ("rustup", "rustup-init")


def _rustup(rustup: str, timeout: float, *args: Argument) -> str:
    """Run rustup (the user's own program) from a neutral directory; its stdout."""
    env = {k: v for k, v in os.environ.items() if k != "RUSTUP_TOOLCHAIN"}
    done = run_process(
        rustup,
        args,
        cwd=neutral_directory(),
        env=env,
        timeout=timeout,
        what=f"`rustup {' '.join(args)}`",
    )
    if done.returncode != 0:
        message = done.stderr.strip().splitlines()
        reason = next((m for m in message if m.startswith("error")), message[0] if message else "")
        raise _RustupError(reason.removeprefix("error:").strip() or "no message")
    return done.stdout.strip()


class _RustupError(Exception):
    pass


@functools.lru_cache(maxsize=32)
def _rustup_binaries(rustup: str, name: str, rustup_home: str, timeout: float) -> tuple[Path, Path]:
    toolchain = option("--toolchain", name, TOOLCHAIN)
    # An installed toolchain keeps its binaries in RUSTUP_HOME/toolchains/NAME/bin, which is
    # what `rustup which` answers for it; rustup is asked only for anything else (a short
    # name such as `stable`, a linked toolchain without cargo). The name passed the gate: it
    # holds no path separator, so it stays inside the user's own rustup home.
    installed = Path(rustup_home) / "toolchains" / name / "bin"
    suffix = ".exe" if os.name == "nt" else ""
    cargo_file, rustc_file = installed / f"cargo{suffix}", installed / f"rustc{suffix}"
    if cargo_file.is_file() and rustc_file.is_file():
        return cargo_file, rustc_file
    # Both questions at once: a commit hook waits for each rustup start.
    rustc = Background(lambda: _rustup(rustup, timeout, word("which"), word("rustc"), toolchain))
    try:
        cargo = _rustup(rustup, timeout, word("which"), word("cargo"), toolchain)
    except Exception:
        rustc.join()  # its process ends within the timeout too: nothing is left running
        raise
    return Path(cargo), Path(rustc.result())


@functools.lru_cache(maxsize=4)
def _rustup_default(rustup: str, rustup_home: str, timeout: float) -> str:
    del rustup_home
    answer = _rustup(rustup, timeout, word("default")).split()
    if not answer or answer[0] in ("no", "error:"):
        raise _RustupError("no default toolchain is configured (`rustup default stable`)")
    return answer[0]


def resolve_toolchain(
    workdir: Path, timeout: float = DEFAULT_TIMEOUT, *, root: Path | None = None
) -> Toolchain:
    """The real cargo and rustc for auditing `workdir`, without running anything it supplies.

    rustup, when asked, gets at most `timeout` seconds per call (--timeout). `root` is the
    checkout root (found from `workdir` when not given): no program below it is run, whether
    PATH finds it there or it is a toolchain of a rustup home that lies there, and its
    toolchain files may not link out of it.

    Raises FeatcheckError for a `path` toolchain (the checkout's own binaries), a program of
    the checkout, an invalid toolchain file, or a toolchain that is not installed.
    """
    root = checkout_root(workdir) if root is None else root
    cargo = which("cargo")
    if cargo is None:
        raise FeatcheckError(
            "cargo not found on PATH: install Rust (https://rustup.rs) or add it to PATH"
        )
    refuse_checkout_program(cargo, root, "cargo")
    rustup = which("rustup")
    if not _is_rustup_proxy(cargo, rustup):
        toolchain = _plain_toolchain(Path(cargo))
        refuse_checkout_program(toolchain.rustc, root, "rustc")
        return toolchain
    if rustup is None:
        raise FeatcheckError(
            f"{cargo} is a rustup proxy but rustup is not on PATH; add it, "
            "or put the toolchain's own bin directory first on PATH"
        )
    refuse_checkout_program(rustup, root, "rustup")
    refuse_untrusted_rustup_home(os.environ, root)
    pinned = os.environ.get("RUSTUP_TOOLCHAIN")
    settings = RustupSettings({}, None)
    if pinned:
        try:
            request = ToolchainRequest(TOOLCHAIN.check(pinned), why="RUSTUP_TOOLCHAIN")
        except GateError as error:
            raise FeatcheckError(
                f"RUSTUP_TOOLCHAIN: {error}; featcheck asks rustup for a named toolchain "
                "(or put the toolchain's bin directory first on PATH)"
            ) from None
    else:
        settings = rustup_settings()
        request = find_toolchain_request(workdir, settings.overrides, root)
    if request.path is not None:
        import json

        raise FeatcheckError(
            f"toolchain `path = {json.dumps(request.path)}` would make rustup run cargo and "
            "rustc from the checkout itself; featcheck runs no code from the project "
            "(pass --trust-checkout if you trust it)",
            path=request.origin,
            line=request.line,
        )
    home = str(_rustup_home())
    try:
        # rustup's settings file records its default; asking rustup costs a process start.
        name = request.name or settings.default or _rustup_default(rustup, home, timeout)
        real_cargo, real_rustc = _rustup_binaries(rustup, name, home, timeout)
    except _RustupError as error:
        message = f"rustup cannot provide the toolchain: {error}"
        if request.origin is None:
            message = f"rustup cannot provide the toolchain ({request.why}): {error}"
        if "not installed" in str(error) and request.name:
            message += f" (run `rustup toolchain install {request.name}`)"
        raise FeatcheckError(message, path=request.origin, line=request.line) from None
    except GateError as error:  # rustup's recorded default, which no one else has checked
        raise FeatcheckError(
            f"rustup's default toolchain: {error} (`rustup default stable` sets a plain one)"
        ) from None
    return Toolchain(real_cargo, real_rustc, name, request.why)


def _plain_toolchain(cargo: Path) -> Toolchain:
    """No rustup: the cargo on PATH, and the rustc next to it (else the one on PATH)."""
    sibling = cargo.parent / ("rustc" + (".exe" if cargo.suffix == ".exe" else ""))
    rustc: str | None = str(sibling) if os.access(sibling, os.X_OK) else which("rustc")
    if rustc is None:
        raise FeatcheckError(
            "rustc not found on PATH: install Rust (https://rustup.rs) or add it to PATH"
        )
    return Toolchain(cargo, Path(rustc), None, "cargo and rustc on PATH")
