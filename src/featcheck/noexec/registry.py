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
import functools
import os
import re
import tarfile
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

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
from featcheck.toml_read import toml_data

if TYPE_CHECKING:
    from featcheck.noexec.workspace import WorkspaceLayout


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
    def __init__(self, layout: WorkspaceLayout, places: TrustContext, workdir: Path) -> None:
        self.layout = layout
        self.vendor = layout.root / "vendor"
        # A cargo home or cache inside the checkout holds the checkout's files: a planted
        # "registry" package there is never read, nothing distilled there is believed.
        self.root = places.root
        self.untrusted_home = places.untrusted_cargo_home is not None
        self.dirs = _registry_dirs(places.cargo_home, layout.root)
        self._places_in = [(d, os.path.join(d, "")) for d in self.dirs]
        self.archives = _registry_dirs(places.cargo_home, layout.root, "cache")
        # The configuration of cargo run where featcheck was pointed (a member, perhaps).
        self.sources = read_source_config(workdir, places)
        kept = places.cache if self.dirs or self.archives or self.sources.tables else None
        self.cache = ManifestCache(kept)

    def _places(self, name: str, version: str, source: str) -> list[_Place]:
        """Where the package may be, in the order cargo's layout is looked at: vendor/, the
        unpacked registry, the archives; or only the local source that the configuration puts
        in place of `source` (nothing from a refused one)."""
        local = self.sources.replacement(source)
        if isinstance(local, RefusedSource):
            return []
        folders = (f"{name}-{version}", name)
        if local is None:
            names = source_directories(source)
            places = [
                _Place(f"{base}{folder}/Cargo.toml", inside=directory == self.vendor)
                for directory, base in self._places_in
                if directory == self.vendor or directory.name in names  # not another source's
                for folder in folders
            ]
            places += [
                _Place(str(directory / f"{name}-{version}.crate"), archive=True)
                for directory in self.archives
                if directory.name in names
            ]
            return places
        if local.local_registry:
            archive = local.path / f"{name}-{version}.crate"
            if local.inside and not is_inside(archive, self.root):
                return []  # a link out of the checkout: not read
            return [_Place(str(archive), inside=local.inside, archive=True)]
        base = os.path.join(local.path, "")
        # cargo refuses a directory source package without its `.cargo-checksum.json`.
        return [
            _Place(f"{base}{folder}/Cargo.toml", inside=local.inside, checksum=True)
            for folder in folders
        ]

    def _read_place(self, place: _Place, name: str, version: str) -> PackageManifest | None:
        """The package `name` `version` from `place`, if that is what it holds; one of the
        cargo home is kept distilled (`ManifestCache`), one of the checkout never."""
        if not _checksummed(place):
            return None
        if place.inside and not place.archive and not is_inside(place.path, self.root):
            return None  # a link out of the checkout: not read
        location = Path(place.path)
        kept = None if place.inside else self.cache.get(place.path)
        if kept is not None:
            with contextlib.suppress(KeyError, TypeError, ValueError, IndexError):
                return _named(PackageManifest.from_distilled(location, kept), name, version)
        try:
            if not location.is_file():
                return None
            if not place.archive:
                found = read_package(location, self.layout, local=False)
            elif (package := read_archive(location, name, version)) is None:
                return None
            else:
                text, files = package
                data = toml_data(text)
                found = read_package(location, self.layout, local=False, data=data, files=files)
        except (FeatcheckError, OSError, ValueError):
            return None  # not there or unreadable: the package stays unread
        if not place.inside:
            self.cache.put(location, found.distilled())
        return _named(found, name, version)

    def _first_read(self, places: list[_Place], name: str, version: str) -> PackageManifest | None:
        return next(filter(None, (self._read_place(p, name, version) for p in places)), None)

    def lookup(self, name: str, version: str, source: str) -> PackageManifest | Deferred | None:
        """The package's manifest, read now if it is the checkout's (whether the audit can see
        it must be known before the audit starts); one of the cargo home, or of a source the
        user configured, only found now and read when the audit first asks for it (`Deferred`):
        a build reaches a fraction of what Cargo.lock lists. None: nowhere to be found."""
        places = self._places(name, version, source)
        for index, place in enumerate(places):
            if place.inside:
                found = self._read_place(place, name, version)
                if found is not None:
                    return found
            elif os.path.isfile(place.path) and _checksummed(place):
                read = functools.partial(self._first_read, places[index:], name, version)
                return Deferred(Path(place.path), read, self.unread_reason(source))
        return None

    def unread_reason(self, source: str) -> str:
        """Why a package of `source` that `lookup` did not find (or cannot read) stays unread."""
        local = self.sources.replacement(source)
        if isinstance(local, RefusedSource):
            return local.reason
        if isinstance(local, LocalSource):
            kind = "local registry" if local.local_registry else "directory source"
            return f"not in the {kind} `{printable(local.name)}` that replaces its registry"
        return UNTRUSTED_HOME if self.untrusted_home else NOT_FETCHED


NOT_FETCHED = "not in the local cargo registry or vendor/"
UNTRUSTED_HOME = (
    "CARGO_HOME lies inside the audited checkout, so its registry is the checkout's files and "
    "is not read; set CARGO_HOME outside it"
)
_CHECKSUM = ".cargo-checksum.json"


@dataclass(frozen=True)
class Deferred:
    """A package's manifest found at `path`, to be read when the audit first asks for it."""

    path: Path
    read: Callable[[], PackageManifest | None]
    """The manifest, from `path` or (where that one cannot be read) the places after it."""
    unread: str
    """Why the package stays unread where `read` finds no manifest."""


class _Place(NamedTuple):
    """Where a package may be: its manifest (`.../Cargo.toml`) or its `.crate`."""

    path: str
    inside: bool = False
    """In the checkout: read as checkout content (no link out, nothing cached)."""
    archive: bool = False
    checksum: bool = False
    """A directory source's: taken only beside its `.cargo-checksum.json`."""


def _checksummed(place: _Place) -> bool:
    return not place.checksum or os.path.isfile(place.path[: -len("Cargo.toml")] + _CHECKSUM)


def _named(found: PackageManifest, name: str, version: str) -> PackageManifest | None:
    return found if found.name == name and found.version == version else None


_MAX_MEMBERS = 200_000
_NAMES_ITS_TARGETS = tuple(
    re.compile(pattern, re.MULTILINE)
    for pattern in (r"^autolib = false$", r"^autobins = false$", r"^build = ")
)


def read_archive(archive: Path, name: str, version: str) -> tuple[str, ArchiveFiles] | None:
    """What featcheck needs of the `.crate` `archive`: its manifest's text and its file list
    (paths relative to the package root, `src/lib.rs`); None when it cannot be read as one."""
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
                    text = manifest.decode("utf-8", errors="replace")
                    if all(pattern.search(text) for pattern in _NAMES_ITS_TARGETS):
                        break  # the file list is not needed
    except (OSError, tarfile.TarError, EOFError, ValueError):
        return None
    if manifest is None:
        return None
    try:
        text = manifest.decode("utf-8").removeprefix("\ufeff")
    except UnicodeDecodeError:
        return None
    return text, ArchiveFiles(files)


# What `--no-exec` read from registry manifests, kept between runs.
#
# A package unpacked in `$CARGO_HOME/registry/src` never changes, yet parsing the TOML of a few
# hundred published manifests is most of a --no-exec audit. The package data distilled from each
# one (name, version, declarations, features, target kinds, edition) is kept under the user's cache
# directory (`$XDG_CACHE_HOME/featcheck/`, default `~/.cache/featcheck/`) in a file of its own,
# written when the manifest is read, checked against the manifest's path, size and modification
# time. An audit reads the files of the manifests its builds reach, and nothing else; no file
# is written at its end.
#
# A file is named after the last parts of the manifest's path (`REGISTRY/NAME-VERSION/Cargo.toml`,
# `REGISTRY/NAME-VERSION.crate`), not the whole of it: a temporary cargo home's (a CI job's, a
# benchmark's) are taken over by the next cargo home's, so there are at most as many as package
# versions ever read. Only the cargo home's manifests are kept, never the checkout's (`vendor/`
# included): nothing a checkout writes is remembered. A cache that cannot be read or written is
# ignored.

_VERSION = 4
"""4: targets kept as their kinds and the library's name (`PackageManifest.distilled`)."""


def _stamp(path: Path | str) -> list[int] | None:
    try:
        stat = os.stat(path)
    except (OSError, ValueError):  # ValueError: a NUL in a name Cargo.lock gave
        return None
    return [stat.st_size, stat.st_mtime_ns]


class ManifestCache:
    """Distilled registry manifests, one file each (see above)."""

    def __init__(self, directory: Path | None) -> None:
        self.directory = directory
        if directory is None:
            return
        # What featcheck kept before a file per manifest: a file of every manifest it distilled
        # and one per workspace audited, megabytes each, which nothing reads any more.
        with contextlib.suppress(OSError):
            os.unlink(directory / "noexec-manifests.json")
        with contextlib.suppress(OSError):
            for entry in os.scandir(directory / "noexec"):
                os.unlink(entry.path)
            os.rmdir(directory / "noexec")

    def _file(self, directory: Path, manifest: str) -> Path:
        # A checksum, not a secure hash: two manifests sharing a file only take it over from
        # each other (the path is checked), and hashlib's start-up is milliseconds.
        tail = os.fsencode(manifest).rsplit(os.fsencode(os.sep), 3)[-3:]
        return directory / "noexec-manifests" / f"{zlib.crc32(b'/'.join(tail)):08x}.json"

    def get(self, manifest: Path | str) -> dict[str, Any] | None:
        """The distilled data of `manifest`, if kept and the file has not changed since."""
        if self.directory is None or (stamp := _stamp(manifest)) is None:
            return None  # no cache, or no manifest there: nothing to look up
        entry = read_cache(self._file(self.directory, str(manifest)), _VERSION, "manifest")
        data = entry.get("data")
        fits = entry.get("path") == str(manifest) and entry.get("stamp") == stamp
        return data if fits and isinstance(data, dict) else None

    def put(self, manifest: Path, data: dict[str, Any]) -> None:
        stamp = _stamp(manifest)
        if self.directory is not None and stamp is not None:
            entry = {"path": str(manifest), "stamp": stamp, "data": data}
            write_cache(self._file(self.directory, str(manifest)), _VERSION, "manifest", entry)
