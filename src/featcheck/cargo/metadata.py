"""Package data from `cargo metadata --format-version 1`: members, manifests, feature tables.

Only package data is taken from metadata. Its `resolve.nodes[].features` are a union over dev-
and build-dependencies and every target, so they never decide a verdict (see `resolution`).
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from featcheck.errors import FeatcheckError

if TYPE_CHECKING:
    from featcheck.resolution.index import PackageIndex

_FINAL_ARTIFACTS = frozenset({"bin", "cdylib", "staticlib"})
"""Target kinds that are built for someone to run or load, not to depend on."""


@dataclass(frozen=True)
class DependencyDeclaration:
    """One entry of a package's dependency tables, as cargo normalised it."""

    name: str
    """The depended-on package's real name (after `package = ...` renames)."""
    rename: str | None
    """The key the manifest uses when it differs from the package name."""
    req: str
    """The version requirement, e.g. `=0.22.1` or `^1`."""
    kind: str
    """`normal`, `dev` or `build`."""
    target: str | None
    """`cfg(...)` expression or target triple of a `[target.X]` table; None if unconditional."""
    optional: bool
    uses_default_features: bool
    features: tuple[str, ...]
    path: str | None
    """Absolute directory of a path dependency."""

    @property
    def key(self) -> str:
        """The name under which the dependency is declared in the manifest."""
        return self.rename or self.name


@dataclass(frozen=True)
class PackageInfo:
    """One package of the resolve: identity, manifest and feature table."""

    id: str
    """cargo's package ID spec, usable with `cargo tree -p`."""
    name: str
    version: str
    manifest_path: Path
    is_registry: bool
    features: dict[str, tuple[str, ...]]
    dependencies: tuple[DependencyDeclaration, ...]
    target_kinds: frozenset[str]

    @property
    def is_library_only(self) -> bool:
        """True when the package builds no final artifact (a binary, or a `cdylib`/`staticlib`
        such as a Python extension, a wasm module or a C library): its features are chosen by
        the packages that depend on it. Examples and tests do not count: nobody ships them."""
        return not self.target_kinds & _FINAL_ARTIFACTS


@dataclass(frozen=True)
class WorkspaceMetadata:
    """The workspace as cargo sees it."""

    root: Path
    members: tuple[PackageInfo, ...]
    packages: PackagesById
    raw: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)
    """The whole `cargo metadata` document, for featcheck's own feature resolver."""
    unread: dict[str, str] = field(default_factory=dict, compare=False)
    """Packages whose manifests a `--no-exec` audit could not read (id -> why): they are in
    `packages` with no features or declarations, and `noexec.gaps` says what they may change.
    Always empty when cargo produced the data."""
    index: PackageIndex | None = field(default=None, repr=False, compare=False)
    """The same document indexed for the resolver (feature tables parsed, declarations bound
    to resolved edges): made once, here, so that nothing reads the document a second time."""

    def unpublished(self) -> list[PackageInfo]:
        """The packages not from a registry (members, path and git dependencies), read
        without reading the hundreds of registry packages."""
        return [
            self.packages[raw["id"]]
            for raw in self.raw.get("packages", ())
            if not _is_registry(raw)
        ]

    def find(self, name: str, version: str) -> PackageInfo | None:
        """The package with this name and version, if metadata lists it."""
        for package in self.packages.values():
            if package.name == name and package.version == version:
                return package
        return None


def _declaration(raw: dict[str, Any]) -> DependencyDeclaration:
    return DependencyDeclaration(
        name=raw["name"],
        rename=raw.get("rename"),
        req=raw.get("req", "*"),
        kind=raw.get("kind") or "normal",
        target=raw.get("target"),
        optional=bool(raw.get("optional", False)),
        uses_default_features=bool(raw.get("uses_default_features", True)),
        features=tuple(raw.get("features", ())),
        path=raw.get("path"),
    )


def _is_registry(raw: dict[str, Any]) -> bool:
    return str(raw.get("source") or "").startswith(("registry+", "sparse+"))


def _package(raw: dict[str, Any]) -> PackageInfo:
    kinds: set[str] = set()
    for target in raw.get("targets", ()):
        kinds.update(target.get("kind", ()))
    return PackageInfo(
        id=raw["id"],
        name=raw["name"],
        version=raw["version"],
        manifest_path=Path(raw["manifest_path"]),
        is_registry=_is_registry(raw),
        features={k: tuple(v) for k, v in raw.get("features", {}).items()},
        dependencies=tuple(_declaration(d) for d in raw.get("dependencies", ())),
        target_kinds=frozenset(kinds),
    )


class PackagesById(Mapping[str, PackageInfo]):
    """Packages by id, each read from the document the first time it is asked for: an audit
    looks at a few of the hundreds metadata lists."""

    def __init__(self, raw: dict[str, Any]) -> None:
        self._raw = raw
        self._made: dict[str, PackageInfo] = {}

    def __getitem__(self, package_id: str) -> PackageInfo:
        made = self._made.get(package_id)
        if made is None:
            made = self._made[package_id] = _package(self._raw[package_id])
        return made

    def __iter__(self) -> Iterator[str]:
        return iter(self._raw)

    def __len__(self) -> int:
        return len(self._raw)

    def document(self, package_id: str) -> dict[str, Any]:
        """The package's entry in the metadata document, as cargo printed it."""
        document: dict[str, Any] = self._raw[package_id]
        return document


def parse_metadata(text: str) -> WorkspaceMetadata:
    """Read `cargo metadata --format-version 1` output."""
    try:
        data = json.loads(text)
    except ValueError as error:
        raise FeatcheckError(f"cargo metadata printed something unexpected ({error})") from None
    return metadata_from_document(data)


def metadata_from_document(data: Any) -> WorkspaceMetadata:
    """The same, from the document already parsed (or built from files by `--no-exec`)."""
    try:
        packages = PackagesById({p["id"]: p for p in data["packages"]})
        members = tuple(packages[i] for i in data["workspace_members"])
        from featcheck.resolution.index import build_index  # resolution imports this module

        index = build_index(data)
        root = Path(data["workspace_root"])
        return WorkspaceMetadata(root, members, packages, data, index=index)
    except (ValueError, KeyError, TypeError) as error:
        raise FeatcheckError(f"cargo metadata printed something unexpected ({error})") from None
