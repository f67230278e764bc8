"""Where a registry package's manifest is on this machine: `vendor/` in the checkout, the
unpacked cargo registry (`$CARGO_HOME/registry/src`), or the downloaded `.crate` archives
(`registry/cache`); distilled results are kept by `ManifestCache` below. A package of the cargo
home is looked for only in the directories cargo names after its exact source id (sources.py).
A registry that the cargo configuration replaces with a local source (sources.py) is read from
that source alone.

CI caches usually keep `$CARGO_HOME/registry/cache/*/NAME-VERSION.crate` (the downloads) and
leave out `registry/src` (cargo unpacks it again when it builds), and cargo's own cleaning
removes unpacked sources before the archives. A `.crate` is a gzipped tar of `NAME-VERSION/...`;
`read_archive` reads only its file list and its `Cargo.toml`, in memory, without unpacking it,
with a size limit on each. A manifest normalised by `cargo publish` (1.78 and later) names every
target itself (`autolib = false`, `autobins = false`, `build = ...`): reading stops at it,
before the sources.
"""

from __future__ import annotations

import contextlib
import os
import re
import tarfile
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeGuard

from featcheck.boundary import MAX_MANIFEST_BYTES, TrustContext, is_inside
from featcheck.cargo.failures import printable
from featcheck.errors import FeatcheckError
from featcheck.fileio import read_cache, write_cache
from featcheck.noexec.packages import ArchiveFiles, PackageManifest, read_package
from featcheck.noexec.sources import (
    LocalSource,
    RefusedSource,
    read_source_config,
    source_directories,
)
from featcheck.noexec.workspace import WorkspaceLayout
from featcheck.toml_read import toml_data


def _registry_dirs(cargo_home: Path | None, root: Path, kind: str = "src") -> list[Path]:
    """Where registry packages may be: vendor/ first, then the cargo registry's `kind`
    directories (`src`: unpacked packages; `cache`: the downloaded `.crate` archives)."""
    dirs = [root / "vendor"] if kind == "src" and (root / "vendor").is_dir() else []
    if cargo_home is not None:
        src = cargo_home / "registry" / kind
        # No registry on this machine: every registry package stays unread.
        with contextlib.suppress(OSError):
            dirs.extend(sorted(p for p in src.iterdir() if p.is_dir()))
    return dirs


class Registry:
    """Finds registry packages' manifests in vendor/ (inside the checkout) or the cargo home."""

    def __init__(
        self,
        layout: WorkspaceLayout,
        places: TrustContext,
        workdir: Path | None = None,
    ) -> None:
        self.layout = layout
        self.vendor = layout.root / "vendor"
        # A cargo home or cache inside the checkout holds the checkout's files: a planted
        # "registry" package there is never read, nothing distilled there is believed.
        self.root = places.root
        self.untrusted_home = places.untrusted_cargo_home is not None
        """Whether the cargo home was left unread for lying inside the checkout."""
        self.dirs = _registry_dirs(places.cargo_home, layout.root)
        self._places = [(d, os.path.join(d, "")) for d in self.dirs]
        self.archives = _registry_dirs(places.cargo_home, layout.root, "cache")
        # The configuration of cargo run where featcheck was pointed (a member, perhaps).
        self.sources = read_source_config(workdir or layout.root, places)
        kept = places.cache if self.dirs or self.archives or self.sources.tables else None
        self.cache = ManifestCache(kept, layout.root)

    def find(self, name: str, version: str, source: str) -> PackageManifest | None:
        names = source_directories(source)
        for directory, base in self._places:
            vendored = directory == self.vendor
            if not vendored and directory.name not in names:
                continue  # another source's packages
            for folder in (f"{name}-{version}", name):
                # A string until something is there: a path object for each of the few
                # hundred lookups was a tenth of building the package data.
                found = self._read(f"{base}{folder}/Cargo.toml", name, version, vendored)
                if found is not None:
                    return found
        for directory in self.archives:
            if directory.name in names:
                found = self._read_archive(directory / f"{name}-{version}.crate", name, version)
                if found is not None:
                    return found
        return None

    def _read_archive(
        self, archive: Path, name: str, version: str, keep: bool = True
    ) -> PackageManifest | None:
        """The package `name` `version` from a `.crate`, if that is what it holds."""
        kept = self.cache.get(archive) if keep else None
        if kept is not None:
            with contextlib.suppress(KeyError, TypeError):
                return _named(PackageManifest.from_distilled(archive, kept), name, version)
        if not archive.is_file():
            return None
        package = read_archive(archive, name, version)
        if package is None:
            return None
        try:
            data = toml_data(package.manifest)
            found = read_package(
                archive, self.layout, local=False, data=data, files=ArchiveFiles(package.files)
            )
        except (FeatcheckError, ValueError):
            return None  # unreadable: the package stays unread
        if keep:
            self.cache.put(archive, found.distilled())
        return _named(found, name, version)

    def _read(
        self, location: str, name: str, version: str, vendored: bool
    ) -> PackageManifest | None:
        """The package `name` `version` from a manifest, if that is what it holds."""
        if vendored and not is_inside(location, self.root):
            return None  # a link out of the checkout: not read
        kept = None if vendored else self.cache.get(location)
        if kept is not None:
            with contextlib.suppress(KeyError, TypeError):
                return _named(PackageManifest.from_distilled(Path(location), kept), name, version)
        manifest = Path(location)
        try:
            if not manifest.is_file():
                return None
            found = read_package(manifest, self.layout, local=False)
        except (FeatcheckError, OSError):
            return None  # unreadable: the package stays unread
        if not vendored:
            self.cache.put(manifest, found.distilled())
        return _named(found, name, version)

    def find_configured(self, name: str, version: str, source: str) -> PackageManifest | None:
        """`find`, unless the cargo configuration replaces `source` with a local source: then
        from that source alone, as cargo builds it (nothing from a refused one)."""
        local = self.sources.replacement(source)
        if local is None:
            return self.find(name, version, source)
        if isinstance(local, RefusedSource):
            return None
        if local.local_registry:
            archive = local.path / f"{name}-{version}.crate"
            if local.inside and not is_inside(archive, self.root):
                return None  # a link out of the checkout: not read
            return self._read_archive(archive, name, version, keep=not local.inside)
        base = os.path.join(local.path, "")
        for folder in (f"{name}-{version}", name):
            if not os.path.isfile(f"{base}{folder}/.cargo-checksum.json"):
                continue  # cargo refuses a directory source package without one
            found = self._read(f"{base}{folder}/Cargo.toml", name, version, local.inside)
            if found is not None:
                return found
        return None

    def unread_reason(self, source: str) -> str | None:
        """Why a package of `source` that `find_configured` did not find stays unread, where
        the configuration replaces `source` (None: it does not)."""
        local = self.sources.replacement(source)
        if isinstance(local, RefusedSource):
            return local.reason
        if isinstance(local, LocalSource):
            kind = "local registry" if local.local_registry else "directory source"
            return f"not in the {kind} `{printable(local.name)}` that replaces its registry"
        return None


def _named(found: PackageManifest, name: str, version: str) -> PackageManifest | None:
    return found if found.name == name and found.version == version else None


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


# What `--no-exec` read from registry manifests, kept between runs.
#
# A package unpacked in `$CARGO_HOME/registry/src` never changes, yet parsing the TOML of a few
# hundred published manifests is most of a --no-exec audit. The package data distilled from each
# one (name, version, declarations, features, targets, edition) is kept under the user's cache
# directory (`$XDG_CACHE_HOME/featcheck/`, default `~/.cache/featcheck/`), keyed by the manifest's
# path and checked against its size and modification time, in two files:
#
# - `noexec/WORKSPACE.json` holds what the last audit of one workspace used, and nothing else: the
#   one file an audit of an unchanged project reads.
# - `noexec-manifests.json` holds every manifest featcheck has distilled, whichever project it
#   was for; it grows with every project audited, so it is read only when the first file lacks a
#   manifest (a new project, a dependency updated).
#
# Only the cargo home's manifests are kept, never the checkout's (`vendor/` included): nothing a
# checkout writes is remembered. A cache that cannot be read or written is ignored.

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
