"""What `--no-exec` read from registry manifests, kept between runs.

A package unpacked in `$CARGO_HOME/registry/src` never changes, yet parsing the TOML of a few
hundred published manifests is most of a --no-exec audit. The package data distilled from each
one (name, version, declarations, features, targets, edition) is kept under the user's cache
directory (`$XDG_CACHE_HOME/featcheck/`, default `~/.cache/featcheck/`), keyed by the manifest's
path and checked against its size and modification time, in two files:

- `noexec/WORKSPACE.json` holds what the last audit of one workspace used, and nothing else: the
  one file an audit of an unchanged project reads.
- `noexec-manifests.json` holds every manifest featcheck has distilled, whichever project it
  was for; it grows with every project audited, so it is read only when the first file lacks a
  manifest (a new project, a dependency updated).

Only the cargo home's manifests are kept, never the checkout's (`vendor/` included): nothing a
checkout writes is remembered. A cache that cannot be read or written is ignored.
"""

from __future__ import annotations

import os
import zlib
from pathlib import Path
from typing import Any, TypeGuard

from featcheck.fileio import read_cache, write_cache

_VERSION = 1


def _stamp(path: Path | str) -> list[int] | None:
    try:
        stat = os.stat(path)
    except (OSError, ValueError):  # ValueError: a NUL in a name Cargo.lock gave
        return None
    return [stat.st_size, stat.st_mtime_ns]


def _fits(entry: Any, stamp: list[int]) -> TypeGuard[dict[str, Any]]:
    """Whether `entry` is a kept manifest's data, for the file as it is now."""
    return (
        isinstance(entry, dict)
        and entry.get("stamp") == stamp
        and isinstance(entry.get("data"), dict)
    )


class ManifestCache:
    """Distilled registry manifests by path, for the audit of one workspace; `save()` writes
    what changed."""

    def __init__(self, directory: Path | None, workspace: Path) -> None:
        self.directory = directory
        self.own: dict[str, Any] = {}
        self.shared: dict[str, Any] | None = None
        """Loaded on the first manifest the workspace's own file lacks."""
        self.used: dict[str, Any] = {}
        self.added = False
        if directory is not None:
            self.own = read_cache(self._own_file(directory, workspace), _VERSION, "manifests")
        self.workspace = workspace

    @staticmethod
    def _own_file(directory: Path, workspace: Path) -> Path:
        # A checksum, not a secure hash: two workspaces sharing a file only read each other's
        # entries, which the stamps still check (and hashlib's start-up is milliseconds).
        key = f"{zlib.crc32(os.fsencode(str(workspace))):08x}"
        return directory / "noexec" / f"{key}.json"

    def _shared(self) -> dict[str, Any]:
        if self.shared is None:
            assert self.directory is not None
            self.shared = read_cache(
                self.directory / "noexec-manifests.json", _VERSION, "manifests"
            )
        return self.shared

    def get(self, manifest: Path | str) -> dict[str, Any] | None:
        """The distilled data of `manifest`, if kept and the file has not changed since."""
        if self.directory is None:
            return None
        stamp = _stamp(manifest)
        if stamp is None:
            return None  # no manifest there: nothing to look up
        key = str(manifest)
        entry = self.own.get(key)
        if not _fits(entry, stamp):
            entry = self._shared().get(key)
            if not _fits(entry, stamp):
                return None
        self.used[key] = entry
        data: dict[str, Any] = entry["data"]
        return data

    def put(self, manifest: Path, data: dict[str, Any]) -> None:
        """Remember `data` for `manifest` as it is now."""
        stamp = _stamp(manifest)
        if self.directory is not None and stamp is not None:
            entry = {"stamp": stamp, "data": data}
            self.used[str(manifest)] = entry
            self._shared()[str(manifest)] = entry
            self.added = True

    def save(self) -> None:
        """Write the shared file when something was distilled, and the workspace's own file
        when this audit used other manifests than the last one. The shared file keeps only
        manifests that are still there (a temporary cargo home's, a cleaned registry's go)."""
        if self.directory is None:
            return
        if self.added:
            kept = {key: entry for key, entry in self._shared().items() if os.path.exists(key)}
            write_cache(self.directory / "noexec-manifests.json", _VERSION, "manifests", kept)
        if self.used.keys() != self.own.keys() or any(
            self.own[key] is not entry for key, entry in self.used.items()
        ):
            write_cache(
                self._own_file(self.directory, self.workspace), _VERSION, "manifests", self.used
            )
