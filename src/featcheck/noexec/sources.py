"""Which local source the cargo configuration puts in place of a registry, as `cargo vendor`
configures it:

    [source.crates-io]
    replace-with = "vendored-sources"
    [source.vendored-sources]
    directory = "vendor"

cargo takes `[source]` from its configuration files merged key by key (CARGO_HOME's lowest, a
file nearer the working directory higher), follows `replace-with` from source to source, and
builds from the last one's location: a `directory` (`NAME-VERSION/` or `NAME/` folders, each
with `Cargo.toml` and `.cargo-checksum.json`) or a `local-registry` (`NAME-VERSION.crate`
archives). A registry so replaced is never read from anywhere else.

A directory named by the user's own configuration may lie anywhere. One named by the checkout
(its `.cargo/config.toml`, or a CARGO_HOME inside it) is read only inside the checkout: it may
name any directory of the machine (see boundary.py).
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple
from urllib.parse import urlsplit

from featcheck.boundary import TrustContext, is_inside
from featcheck.cargo.config_files import configuration_documents, setting_error
from featcheck.cargo.failures import printable
from featcheck.noexec.files import table
from featcheck.workspace.model import CRATES_IO, CRATES_IO_SPARSE

if TYPE_CHECKING:
    from featcheck.manifest.document import ManifestDocument

_LOCAL = ("directory", "local-registry")
_LOCATIONS = (*_LOCAL, "registry", "git")
_KEYS = ("replace-with", *_LOCATIONS)


@dataclass(frozen=True)
class LocalSource:
    """A source on this machine that replaces a registry."""

    name: str
    """Its name in the configuration (`[source.NAME]`)."""
    path: Path
    """The directory (absolute)."""
    local_registry: bool
    """A `local-registry` (`.crate` archives), not a `directory` (unpacked packages)."""
    inside: bool
    """It lies inside the checkout: read as checkout content (no link out, nothing cached)."""


@dataclass(frozen=True)
class RefusedSource:
    """A replacement featcheck does not read: its packages stay unread, for `reason`."""

    reason: str


class _Setting(NamedTuple):
    value: str
    document: ManifestDocument
    from_checkout: bool


class SourceConfig:
    """The `[source]` tables of the configuration cargo reads, merged as cargo merges them."""

    def __init__(self, tables: Mapping[str, Mapping[str, _Setting]], root: Path) -> None:
        self.tables = tables
        self.root = root
        self._answers: dict[str, LocalSource | RefusedSource | None] = {}

    def replacement(self, lock_source: str) -> LocalSource | RefusedSource | None:
        """What replaces `lock_source` (a Cargo.lock `source`); None when no local source
        does (the registry's own packages are read, as before)."""
        if lock_source not in self._answers:
            # The `[source.NAME]` that stands for `lock_source`: `crates-io`, or the one whose
            # `registry` is that registry's URL.
            kind, _, url = lock_source.partition("+")
            wanted = (lock_source if kind == "sparse" else url).rstrip("/")
            named = (
                name
                for name, settings in self.tables.items()
                if "registry" in settings and settings["registry"].value.rstrip("/") == wanted
            )
            start = "crates-io" if lock_source == CRATES_IO else next(named, None)
            self._answers[lock_source] = None if start is None else self._follow(start)
        return self._answers[lock_source]

    def _follow(self, start: str) -> LocalSource | RefusedSource | None:
        """Follow `replace-with` from `start` to the source cargo builds from."""
        name, seen = start, [start]
        location = self._location(start)
        while (step := self.tables.get(name, {}).get("replace-with")) is not None:
            if step.value in seen:
                raise setting_error(
                    step.document,
                    ("source", name, "replace-with"),
                    f"`replace-with` sources form a cycle ({' -> '.join([*seen, step.value])}),"
                    " which cargo refuses",
                )
            if step.value not in self.tables:
                return None  # an alternative registry by its `[registries]` name: remote
            name = step.value
            seen.append(name)
            location = self._location(name)
        if location is None or location not in _LOCAL:
            return None  # remote: its packages are in the cargo home, if anywhere
        setting = self.tables[name][location]
        path = Path(setting.value)
        inside = is_inside(path, self.root)
        if setting.from_checkout and not inside:
            return RefusedSource(
                f"the checkout's cargo configuration replaces their registry with "
                f"`{printable(setting.value)}` (source `{printable(name)}`), outside the "
                "checkout, which --no-exec does not read"
            )
        return LocalSource(name, path, location == "local-registry", inside)

    def _location(self, name: str) -> str | None:
        """The location key of source `name` (None: crates-io's own); cargo's refusal of a
        source with no location (but crates-io) or with two."""
        settings = self.tables.get(name, {})
        kinds = [key for key in _LOCATIONS if key in settings]
        if len(kinds) == 1 or (not kinds and name == "crates-io"):
            return kinds[0] if kinds else None
        some = next(iter(settings.values()))
        problem = "more than one source location" if kinds else "no source location"
        raise setting_error(
            some.document,
            ("source", name),
            f"{problem} for `source.{printable(name)}` (cargo needs exactly one of `registry`,"
            " `local-registry`, `directory` or `git`)",
        )


def read_source_config(workdir: Path, places: TrustContext) -> SourceConfig:
    """The `[source]` tables of the files cargo reads when run in `workdir`, each setting
    marked with whether the checkout wrote it. Relative paths start from the directory above
    the file's `.cargo` (for CARGO_HOME's file: the directory above CARGO_HOME), as in cargo."""
    tables: dict[str, dict[str, _Setting]] = {}
    documents = configuration_documents(
        workdir, places.cargo_home, places.untrusted_cargo_home, places.root
    )
    for document, base, file in documents:
        from_checkout = is_inside(file, places.root) or is_inside(document.path, places.root)
        for name, source in table(document.data.get("source")).items():
            for key in _KEYS:
                value = table(source).get(key)
                if not isinstance(value, str) or not value:
                    continue
                if key in _LOCAL:
                    value = str(base / value)  # an absolute value stays as it is
                tables.setdefault(name, {})[key] = _Setting(value, document, from_checkout)
    return SourceConfig(tables, places.root)


# The directory names cargo gives a registry source under `$CARGO_HOME/registry/{src,cache}`.
#
# cargo names them `HOST-HASH` (`short_name` in cargo's `sources/registry/mod.rs`), HASH being a
# hash of the full source id, so no other source can share a directory with it. A name is never
# matched by its host prefix: an audit of a hostile checkout that replaced crates-io with
# `sparse+http://index.crates.io-0.evil.example/` has cargo unpack that host's packages under
# `index.crates.io-0.evil.example-<hash>`, which a prefix `index.crates.io-` would take for
# crates.io in every later `--no-exec` audit of any project.
#
# The hash is cargo's `short_hash` of the `SourceId`: its kind (an enum discriminant) and its URL
# as text, through cargo's stable hasher, printed as the 8 little-endian bytes in hex. Since
# cargo 1.85 the hasher is rustc-stable-hash's SipHasher128 (SipHash-1-3, 128 bits folded to 64,
# small integers written as one byte); before, SipHash-2-4 with integers written as 8 bytes. A
# registry filled by either cargo is found. The values are checked against cargo's own tests and
# a real cargo home (tests/noexec/test_noexec_sources.py).

_MASK = (1 << 64) - 1
_REGISTRY, _SPARSE = 2, 3
"""`SourceKind::Registry` and `SourceKind::SparseRegistry`: cargo hashes the discriminant."""


def _rotate(value: int, bits: int) -> int:
    return ((value << bits) | (value >> (64 - bits))) & _MASK


def _round(v: list[int]) -> None:
    v[0] = (v[0] + v[1]) & _MASK
    v[1] = _rotate(v[1], 13) ^ v[0]
    v[0] = _rotate(v[0], 32)
    v[2] = (v[2] + v[3]) & _MASK
    v[3] = _rotate(v[3], 16) ^ v[2]
    v[0] = (v[0] + v[3]) & _MASK
    v[3] = _rotate(v[3], 21) ^ v[0]
    v[2] = (v[2] + v[1]) & _MASK
    v[1] = _rotate(v[1], 17) ^ v[2]
    v[2] = _rotate(v[2], 32)


def siphash(data: bytes, *, compression: int, finalization: int, wide: bool) -> int:
    """SipHash with zero keys: SipHash-c-d's 64 bits, or (`wide`) rustc's SipHasher128 folded
    to 64 bits as its `Hasher::finish` does (`h0 * 3 + h1`)."""
    v = [0x736F6D6570736575, 0x646F72616E646F6D, 0x6C7967656E657261, 0x7465646279746573]
    if wide:
        v[1] ^= 0xEE
    whole = len(data) - len(data) % 8
    words = [int.from_bytes(data[i : i + 8], "little") for i in range(0, whole, 8)]
    words.append(((len(data) & 0xFF) << 56) | int.from_bytes(data[whole:], "little"))
    for word in words:
        v[3] ^= word
        for _ in range(compression):
            _round(v)
        v[0] ^= word
    v[2] ^= 0xEE if wide else 0xFF
    for _ in range(finalization):
        _round(v)
    first = v[0] ^ v[1] ^ v[2] ^ v[3]
    if not wide:
        return first
    v[1] ^= 0xDD
    for _ in range(finalization):
        _round(v)
    return (first * 3 + (v[0] ^ v[1] ^ v[2] ^ v[3])) & _MASK


def short_hashes(kind: int, url: str) -> tuple[str, str]:
    """cargo's `short_hash` of a registry source id, as cargo >= 1.85 and as earlier cargo."""
    text = url.encode() + b"\xff"  # `str::hash`: the bytes, then a 0xff terminator
    current = siphash(bytes([kind]) + text, compression=1, finalization=3, wide=True)
    earlier = siphash(kind.to_bytes(8, "little") + text, compression=2, finalization=4, wide=False)
    return current.to_bytes(8, "little").hex(), earlier.to_bytes(8, "little").hex()


def _names(kind: int, url: str) -> tuple[str, ...]:
    host = urlsplit(url.removeprefix("sparse+")).hostname or ""
    return tuple(f"{host}-{digest}" for digest in short_hashes(kind, url))


@functools.cache  # the same few sources for each of hundreds of packages
def source_directories(source: str) -> frozenset[str]:
    """The names of the directories cargo keeps `source`'s packages in (a Cargo.lock
    `source`); none for a source that is not a registry. crates.io's lockfile id stands for
    both of its indexes, the sparse one cargo uses by default and the git one."""
    if source == CRATES_IO:
        return frozenset(
            (*_names(_SPARSE, CRATES_IO_SPARSE), *_names(_REGISTRY, CRATES_IO[len("registry+") :]))
        )
    kind, plus, url = source.partition("+")
    if not plus or kind not in ("registry", "sparse"):
        return frozenset()
    return frozenset(_names(_SPARSE, source) if kind == "sparse" else _names(_REGISTRY, url))
