"""Finding and reading the cargo configuration files cargo would read, as documents.

cargo reads `.cargo/config.toml` (and `.cargo/config`, and what they `include`) from its working
directory upward, after the configuration of CARGO_HOME. A file outside the project (reached by
`include`) is never quoted in an error, and none is read through a link out of the checkout.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from featcheck.boundary import (
    LeadsOut,
    configured_path_stays_inside,
    is_inside,
    read_checkout_file,
)
from featcheck.errors import FeatcheckError
from featcheck.fileio import MAX_CONFIG_BYTES
from featcheck.manifest.document import ManifestDocument, parse_document
from featcheck.noexec.files import printable

if TYPE_CHECKING:
    # The span index (and `dataclasses`) loads only where a file's error needs a line.
    from featcheck.manifest.spans import KeyPath

_MAX_INCLUDE_DEPTH = 16

NOT_SHOWN = "its text is not shown: it lies outside the project that includes it"


def setting_error(document: ManifestDocument, path: KeyPath, message: str) -> FeatcheckError:
    """`message` at the line where `path` is written in a configuration file."""
    line = column = None
    with contextlib.suppress(ValueError):  # the span index gives up on some odd layouts
        while path:
            entry = document.spans.get(path)
            if entry is not None:
                span = entry.value or entry.key
                line, column = span.line, span.column
                break
            path = path[:-1]
    return FeatcheckError(message, path=document.path, line=line, column=column)


def _within(path: Path, inside: Path) -> bool:
    try:
        return path.resolve().is_relative_to(inside.resolve())
    except (OSError, RuntimeError):
        return False


def _read(path: Path, within: bool, root: Path | None) -> ManifestDocument:
    """A configuration file as a document. A file outside the project (reached by `include`)
    is never quoted in an error: it may be any file of the machine. One that a link inside
    the checkout (`root`) leads to outside it is not read at all (boundary.py)."""
    try:
        raw = read_checkout_file(path, "cargo configuration file", MAX_CONFIG_BYTES, root)
        return parse_document(path, raw)
    except FeatcheckError as error:
        if within or isinstance(error, LeadsOut):
            raise
        raise FeatcheckError(
            f"cannot be read as a cargo configuration file ({NOT_SHOWN})", path=path
        ) from None


def _includes(document: ManifestDocument, checkout: Path | None) -> Iterator[tuple[Path, bool]]:
    """The files `include` names (relative to the including file), as cargo resolves them:
    each must be a `.toml` file; `{ path = "...", optional = true }` may be missing. A file of
    the checkout (`checkout`: its root; None for a file of the user's) includes only files
    inside it: featcheck would read and obey any other file of the machine for it."""
    entries = document.data.get("include")
    if isinstance(entries, str):
        entries = [entries]
    if not isinstance(entries, list):
        return
    for index, entry in enumerate(entries):
        optional = False
        if isinstance(entry, dict):
            optional = entry.get("optional") is True
            entry = entry.get("path")
        if not isinstance(entry, str):
            continue
        if not entry.endswith(".toml"):
            raise setting_error(
                document,
                ("include", index),
                f"cargo includes only `.toml` files, not `{entry[:60]}`",
            )
        directory = document.path.parent
        if checkout is not None and not configured_path_stays_inside(directory, entry, checkout):
            raise setting_error(
                document,
                ("include", index),
                f"`include` names `{printable(entry)}`, outside the checkout: its cargo "
                "configuration includes only files inside it",
            )
        yield directory / entry, optional


def load(
    path: Path, seen: tuple[Path, ...], inside: Path, root: Path | None
) -> Iterator[tuple[ManifestDocument, Path, bool]]:
    """One configuration file and what it includes, lowest precedence first, each with
    whether it lies inside the project (`inside`)."""
    if len(seen) > _MAX_INCLUDE_DEPTH or path in seen:
        raise FeatcheckError("cargo configuration includes itself", path=path)
    within = _within(path, inside)
    document = _read(path, within, root)
    checkout = root if root is not None and is_inside(path, root) else None
    try:
        includes = list(_includes(document, checkout))
    except FeatcheckError:
        if within:
            raise
        raise FeatcheckError(f"`include` refused ({NOT_SHOWN})", path=path) from None
    for included, optional in includes:
        if optional and not included.exists():
            continue
        yield from load(included, (*seen, path), inside, root)
    yield document, path.parent.parent, within


def config_files(
    workdir: Path, cargo_home: Path | None, untrusted_home: Path | None = None
) -> list[Path]:
    """The files cargo would read from `workdir` upward, lowest precedence (root) first, after
    the configuration of an untrusted CARGO_HOME (lowest of all, as cargo reads its home)."""
    found = _config_in(workdir, cargo_home)
    if untrusted_home is not None:
        for name in ("config", "config.toml"):  # cargo prefers `config` when both exist
            file = untrusted_home / name
            if file.is_file():
                if not any(file.samefile(f) for f in found if f.exists()):
                    found.insert(0, file)
                break
    return found


def _config_in(workdir: Path, cargo_home: Path | None) -> list[Path]:
    home_files: list[Path] = []
    if cargo_home is not None:
        home_files = [cargo_home / "config", cargo_home / "config.toml"]
    found: list[Path] = []
    directory = workdir.absolute()
    for candidate in (directory, *directory.parents):
        for name in ("config", "config.toml"):  # cargo prefers `config` when both exist
            file = candidate / ".cargo" / name
            try:
                if not file.exists():
                    continue
                if any(h.exists() and file.samefile(h) for h in home_files):
                    break  # CARGO_HOME's own file: cargo reads it anyway
            except OSError:
                pass
            found.append(file)
            break
    return found[::-1]


def configuration_documents(
    workdir: Path, cargo_home: Path | None, untrusted_home: Path | None, root: Path
) -> Iterator[tuple[ManifestDocument, Path, Path]]:
    """Every configuration file cargo reads when run in `workdir`, with what each includes,
    lowest precedence first: the (trusted) CARGO_HOME's own file, then the files from the
    root down to `workdir` (after an untrusted home's, see `config_files`). Each comes with
    the directory its relative paths start from and the file that was read (or included it).
    No file is read through a link out of the checkout `root` (the user's own home aside)."""
    files = [cargo_home / name for name in ("config", "config.toml")] if cargo_home else []
    home = next((f for f in files if f.is_file()), None)  # cargo prefers `config`
    if home is not None:
        for document, base, _ in load(home, (), home.parent.parent, None):
            yield document, base, home
    for file in config_files(workdir, cargo_home, untrusted_home):
        for document, base, _ in load(file, (), file.parent.parent, root):
            yield document, base, file
