"""Reading a package from the `.crate` archive cargo downloaded, without unpacking it.

CI caches usually keep `$CARGO_HOME/registry/cache/*/NAME-VERSION.crate` (the downloads) and
leave out `registry/src` (cargo unpacks it again when it builds), and cargo's own cleaning
removes unpacked sources before the archives. A `.crate` is a gzipped tar of `NAME-VERSION/...`;
only its file list and its `Cargo.toml` are read, in memory, with a size limit on each. A
manifest normalised by `cargo publish` (1.78 and later) names every target itself (`autolib =
false`, `autobins = false`, `build = ...`): reading stops at it, before the sources.
"""

from __future__ import annotations

import re
import tarfile
from dataclasses import dataclass
from pathlib import Path

from featcheck.fileio import MAX_MANIFEST_BYTES

_MAX_MEMBERS = 200_000
_NAMES_ITS_TARGETS = tuple(
    re.compile(pattern, re.MULTILINE)
    for pattern in (r"^autolib = false$", r"^autobins = false$", r"^build = ")
)


@dataclass(frozen=True)
class ArchivedPackage:
    """What featcheck needs of a `.crate`: its manifest text and its file list."""

    manifest: str
    files: frozenset[str]
    """Paths relative to the package root (`src/lib.rs`)."""


def _names_its_targets(manifest: bytes) -> bool:
    text = manifest.decode("utf-8", errors="replace")
    return all(pattern.search(text) for pattern in _NAMES_ITS_TARGETS)


def read_archive(archive: Path, name: str, version: str) -> ArchivedPackage | None:
    """The manifest and file list of `archive`; None when it cannot be read as a `.crate`."""
    prefix = f"{name}-{version}/"
    manifest: bytes | None = None
    files: set[str] = set()
    try:
        with tarfile.open(archive, "r:gz") as tar:
            for count, member in enumerate(tar):
                if count > _MAX_MEMBERS or not member.name.startswith(prefix):
                    return None
                relative = member.name[len(prefix) :]
                if not member.isfile():
                    continue
                files.add(relative)
                if relative == "Cargo.toml":
                    if member.size > MAX_MANIFEST_BYTES:
                        return None
                    stream = tar.extractfile(member)
                    if stream is None:
                        return None
                    manifest = stream.read(MAX_MANIFEST_BYTES + 1)
                    if _names_its_targets(manifest):
                        break  # the file list is not needed
    except (OSError, tarfile.TarError, EOFError, ValueError):
        return None
    if manifest is None:
        return None
    try:
        text = manifest.decode("utf-8").removeprefix("\ufeff")
    except UnicodeDecodeError:
        return None
    return ArchivedPackage(text, frozenset(files))
