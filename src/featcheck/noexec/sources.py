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

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from featcheck.boundary import TrustContext, is_inside
from featcheck.cargo.config_files import configuration_documents, setting_error
from featcheck.noexec.files import printable
from featcheck.noexec.packages import CRATES_IO

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
            start = self._name_of(lock_source)
            self._answers[lock_source] = None if start is None else self._follow(start)
        return self._answers[lock_source]

    def _name_of(self, lock_source: str) -> str | None:
        """The `[source.NAME]` that stands for `lock_source`: `crates-io`, or the one whose
        `registry` is that registry's URL."""
        if lock_source == CRATES_IO:
            return "crates-io"
        kind, _, url = lock_source.partition("+")
        wanted = lock_source if kind == "sparse" else url
        for name, table in self.tables.items():
            registry = table.get("registry")
            if registry is not None and registry.value.rstrip("/") == wanted.rstrip("/"):
                return name
        return None

    def _follow(self, start: str) -> LocalSource | RefusedSource | None:
        """Follow `replace-with` from `start` to the source cargo builds from."""
        name, seen = start, [start]
        self._check(start)
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
            self._check(name)
        return self._location(name)

    def _check(self, name: str) -> None:
        """cargo's refusal of a source with no location (but crates-io's own) or with two."""
        table = self.tables.get(name, {})
        kinds = [key for key in _LOCATIONS if key in table]
        if len(kinds) == 1 or (not kinds and name == "crates-io"):
            return
        some = next(iter(table.values()))
        problem = "more than one source location" if kinds else "no source location"
        raise setting_error(
            some.document,
            ("source", name),
            f"{problem} for `source.{printable(name)}` (cargo needs exactly one of `registry`,"
            " `local-registry`, `directory` or `git`)",
        )

    def _location(self, name: str) -> LocalSource | RefusedSource | None:
        table = self.tables.get(name, {})
        kinds = [key for key in _LOCATIONS if key in table]
        if not kinds or kinds[0] not in _LOCAL:
            return None  # remote: its packages are in the cargo home, if anywhere
        setting = table[kinds[0]]
        path = Path(setting.value)
        inside = is_inside(path, self.root)
        if setting.from_checkout and not inside:
            return RefusedSource(
                f"the checkout's cargo configuration replaces their registry with "
                f"`{printable(setting.value)}` (source `{printable(name)}`), outside the "
                "checkout, which --no-exec does not read"
            )
        return LocalSource(name, path, kinds[0] == "local-registry", inside)


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
        sources = document.data.get("source")
        if not isinstance(sources, dict):
            continue
        for name, table in sources.items():
            if not isinstance(table, dict):
                continue
            for key in _KEYS:
                value = table.get(key)
                if not isinstance(value, str) or not value:
                    continue
                if key in _LOCAL:
                    value = str(base / value)  # an absolute value stays as it is
                tables.setdefault(name, {})[key] = _Setting(value, document, from_checkout)
    return SourceConfig(tables, places.root)
