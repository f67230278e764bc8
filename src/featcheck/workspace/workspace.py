"""The workspace model: its root, its members, and every package by id and by position.

Built once per answer: from `cargo metadata --format-version 1` (`cargo_metadata.py`), or from
the files a `--no-exec` audit reads (`noexec.metadata.build_metadata`), each source reading its
packages into the model itself (a `PackageTable`).

What does not depend on the member or the target (feature tables parsed into `FeatureValue`s,
edges bound to their declarations) is computed once per package.
"""

from __future__ import annotations

import copy
import sys
from abc import abstractmethod
from collections.abc import Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path, PurePath
from typing import TYPE_CHECKING, NamedTuple, overload
from urllib.parse import unquote, urlparse

from featcheck.semantics.semver import matches
from featcheck.workspace.model import (
    CRATES_IO,
    CRATES_IO_SPARSE,
    DEV,
    FEATURE,
    CrateRoot,
    Declaration,
    DependencyKind,
    Edge,
    FeatureValue,
    Package,
    PackageRef,
    crate_family,
    extern_name,
    parse_feature_values,
    same_crate,
)

if TYPE_CHECKING:
    from featcheck.manifest.declarations import Written


@dataclass(frozen=True, eq=False)
class Workspace(Mapping[str, Package]):
    root: Path
    packages: PackageTable = field(repr=False)
    member_ids: tuple[str, ...]
    resolve_root: str | None = None
    """The package cargo ran for (metadata's `resolve.root`): None for a virtual manifest."""
    unread: dict[str, str] = field(default_factory=dict)
    """Packages whose manifests a `--no-exec` audit could not read (id -> why): they are in
    `packages` with no features or declarations, and `noexec.gaps` says what they may change.
    Always empty when cargo produced the data."""
    written: Mapping[str, Written] = field(default_factory=dict, repr=False)
    """By id, where each local package's declarations are written (`locate.bind_declarations`,
    before resolution): what findings point at."""

    def __post_init__(self) -> None:
        _ = self.members  # indexed with the answer: a malformed one fails where it is read

    @cached_property
    def members(self) -> tuple[Package, ...]:
        return tuple(self[i] for i in self.member_ids)

    def member_named(self, name: str) -> Package | None:
        """The member `-p name` means: the one cargo calls `name`, else the one crates.io would
        (`-p my_app` for `my-app`, which plain cargo refuses with a hint)."""
        exact = next((m for m in self.members if m.name == name), None)
        return exact or next((m for m in self.members if same_crate(name, m.name)), None)

    @property
    def by_id(self) -> dict[str, int]:
        return self.packages.by_id

    def __getitem__(self, package_id: str) -> Package:
        return self.packages[self.by_id[package_id]]

    def __iter__(self) -> Iterator[str]:
        return iter(self.by_id)

    def __len__(self) -> int:
        return len(self.by_id)

    def unpublished(self) -> list[Package]:
        """The packages not from a registry (members, path and git dependencies), read
        without reading the hundreds of registry packages."""
        table = self.packages
        return [table[i] for i, p in enumerate(table.listed) if not is_registry(p.source)]

    def path_packages(self) -> list[Package]:
        """The members and path dependencies (no git ones: cargo fetches those)."""
        table = self.packages
        return [table[i] for i, p in enumerate(table.listed) if p.source is None]

    @cached_property
    def dependents_at(self) -> dict[int, list[int]]:
        """By position, the positions of the packages the resolve binds a dependency of to it
        (every kind), read without indexing any package: what may lead to a package."""
        table, found = self.packages, dict[int, list[int]]()
        for dependent in range(len(table)):
            for dependency in table.resolved_positions(dependent):
                found.setdefault(dependency, []).append(dependent)
        return found

    @cached_property
    def pinned_families(self) -> frozenset[str]:
        """The crate families the user's manifests pin with `=X.Y.Z` (asked for every
        finding with a new dependency: computed once)."""
        return frozenset(
            crate_family(d.name)
            for package in self.unpublished()
            for d in package.declarations
            if d.req.lstrip().startswith("=")
        )

    def package_of(self, ref: PackageRef) -> Package | None:
        """The package a graph node names: by its id, or (a graph from `cargo tree` text
        carries none) by its name, version and source."""
        package_id = ref.id or self._ids_by_ref.get(ref)
        return self.get(package_id) if package_id is not None else None

    @cached_property
    def _ids_by_ref(self) -> dict[PackageRef, str]:
        """Made on first need, without indexing any package: only tree text asks."""
        return {ref: package_id for package_id, ref in self.packages.refs().items()}

    def find(self, name: str, version: str) -> Package | None:
        return next((p for p in self.values() if p.name == name and p.version == version), None)


_DEFAULT = FeatureValue(FEATURE, "default")

if sys.platform == "win32":
    from nturl2path import url2pathname
else:
    # What `urllib.request.url2pathname` is off Windows, without importing urllib.request
    # (http.client, email, ssl: a tenth of the start-up of a --no-exec audit).
    url2pathname = unquote


class Listed(NamedTuple):
    """What a source knows of a package before reading it into the model."""

    id: str
    name: str
    version: str
    source: str | None
    """The source of its id (cargo's, or Cargo.lock's): None for a path package."""
    manifest_path: str

    @property
    def shown(self) -> str | None:
        """The source as cargo tree's `{p}` prints it: None for crates.io, a directory for paths."""
        source = self.source
        if source is None:
            # Path packages: the id is `path+file:///dir#...`, the directory cargo prints.
            url = self.id.partition("#")[0].removeprefix("path+")
            parsed = urlparse(url)
            if parsed.scheme == "file":
                return url2pathname(unquote(parsed.path))
            return self.manifest_path.rsplit("/", 1)[0]
        source = str(source)
        if source in (CRATES_IO, CRATES_IO_SPARSE):
            return None
        if source.startswith("git+"):
            # `git+URL?ref#full-commit` prints as `URL?ref#short-commit`.
            url, _, commit = source[len("git+") :].partition("#")
            return f"{url}#{commit[:8]}" if commit else url
        kind, _, url = source.partition("+")
        return f"registry `{url}`" if kind in ("registry", "sparse") else source


class PackageTable(Sequence[Package]):
    """The packages of a workspace by position, each indexed the first time it is asked for: a
    build reaches a fraction of what the lockfile lists (other targets' dependencies,
    dev-dependencies of dependencies), and an audit pays only for what it reaches."""

    def __init__(self, listed: list[Listed]) -> None:
        self.listed = listed
        self.by_id = {package.id: i for i, package in enumerate(listed)}
        self._by_directory = {
            (package.name, str(PurePath(package.manifest_path).parent)): i
            for i, package in enumerate(listed)
            if package.source is None
        }
        """Positions of the path packages by (name, directory)."""
        count = len(listed)
        self._made: list[Package | None] = [None] * count
        self._features: list[dict[str, tuple[FeatureValue, ...]] | None] = [None] * count
        self._base: PackageTable | None = None
        """The table this one was edited from: it makes what this one has not replaced."""

    def __len__(self) -> int:
        return len(self._made)

    @overload
    def __getitem__(self, position: int) -> Package: ...

    @overload
    def __getitem__(self, position: slice) -> Sequence[Package]: ...

    def __getitem__(self, position: int | slice) -> Package | Sequence[Package]:
        if isinstance(position, slice):
            return [self[i] for i in range(len(self))[position]]
        made = self._made[position]
        if made is None:
            base = self._base
            made = base[position] if base is not None else self._package(position)
            self._made[position] = made
        return made

    def replaced(self, changed: Mapping[int, Package]) -> PackageTable:
        """This table with some packages replaced: an edited model, sharing every other
        package with this one (and indexing it here, once, when either asks)."""
        table = copy.copy(self)
        table._made = [None] * len(self)
        table._base = self
        for position, package in changed.items():
            table._made[position] = package
        return table

    def feature_table(self, position: int) -> dict[str, tuple[FeatureValue, ...]]:
        features = self._features[position]
        if features is None:
            raw = self._written_features(position)
            features = {name: parse_feature_values(values) for name, values in raw.items()}
            self._features[position] = features
        return features

    @abstractmethod
    def _package(self, position: int) -> Package:
        """The package at `position`, read into the model."""

    @abstractmethod
    def _written_features(self, position: int) -> Mapping[str, list[str]]:
        """The `[features]` of the package at `position` as written (implicit ones added)."""

    @abstractmethod
    def resolved_positions(self, position: int) -> Sequence[int]:
        """Positions of the packages the resolve binds a dependency of the package at
        `position` to (every kind), read without indexing any package."""

    @abstractmethod
    def dependents(self, package_id: str) -> list[str]:
        """The ids of the packages the resolve binds a dependency of to `package_id`."""

    def refs(self) -> dict[str, PackageRef]:
        """Every package's name, version and source by id, read without indexing any."""
        return {p.id: PackageRef(p.name, p.version, p.shown) for p in self.listed}

    def registry_versions(self) -> dict[str, list[tuple[str, str]]]:
        """(version, id) of every registry package, by name."""
        found: dict[str, list[tuple[str, str]]] = {}
        for package in self.listed:
            if is_registry(package.source):
                found.setdefault(package.name, []).append((package.version, package.id))
        return found

    @abstractmethod
    def names(self) -> set[str]:
        """The name of every package and of every dependency any of them declares (an
        optional one that no build turns on included), as the manifests spell them."""

    def may_hold_settings(self, position: int) -> bool:
        """Whether the package's manifest may hold `[package.metadata.featcheck]`: true unless
        the source read its `[package.metadata]` table without one."""
        return True

    def _record(
        self,
        position: int,
        declarations: tuple[Declaration, ...],
        edges: list[Edge] | None,
        kinds: frozenset[str],
        gated: tuple[frozenset[str], ...] = (),
        roots: tuple[CrateRoot, ...] = (),
    ) -> Package:
        """The package at `position`, its resolved `edges` completed; `edges` is None for a
        package that is not in the resolve (nothing depends on it in any build). `kinds`: the
        kinds of its build targets but binaries with `required-features`, `gated` theirs;
        `roots`: its crate roots (a local package's)."""
        listed = self.listed[position]
        unresolved: frozenset[str] = frozenset()
        if edges is not None:
            # Edges to path packages that have no lib target, which metadata's resolve leaves
            # out. cargo warns ("ignoring invalid dependency ... which is missing a lib target")
            # and links nothing, but the package stays in the feature resolution: what it and
            # its dependencies ask for still unifies, and `cargo tree` draws the edge.
            named = {edge.name_in_toml for edge in edges}
            for decl in declarations:
                if decl.path is not None and decl.key not in named:
                    at = self._by_directory.get((decl.name, str(PurePath(decl.path))))
                    if at is not None:
                        edges.append(self.edge(decl, at))
            # Per declaration: the resolve binds only those its builds turn on, so an optional
            # line beside a `[target.X]` line of the same dependency has no edge of its own.
            bound = {edge.declaration for edge in edges}
            unresolved = frozenset(
                d.key for d in declarations if d.kind is not DEV and d not in bound
            )
        return Package(
            index=position,
            id=listed.id,
            ref=PackageRef(listed.name, listed.version, listed.shown, listed.id),
            manifest_path=Path(listed.manifest_path),
            target_kinds=kinds,
            proc_macro="proc-macro" in kinds,
            features=self.feature_table(position),
            declarations=declarations,
            edges=tuple(edges or ()),
            unresolved=unresolved,
            gated_binaries=gated,
            crate_roots=roots,
        )

    def edge(self, decl: Declaration, target: int) -> Edge:
        """`decl` bound to the package at `target`: what it asks of it, `default` included
        where it keeps the defaults and the package has one."""
        requested = parse_feature_values(decl.features)
        if decl.uses_default_features and "default" in self.feature_table(target):
            requested += (_DEFAULT,)
        return Edge(
            target, decl.key, decl.kind, decl.target, decl.optional, requested, declaration=decl
        )


def is_registry(source: str | None) -> bool:
    """Whether a package of `source` (cargo's, or Cargo.lock's) comes from a registry."""
    return str(source or "").startswith(("registry+", "sparse+"))


# Pair each resolved edge of `cargo metadata` with the manifest declarations behind it.
#
# `resolve.nodes[].deps[]` names the package an edge leads to and its `(kind, target)` pairs, but
# not the declaration's `optional`, `default-features` and `features`; those live in
# `packages[].dependencies[]`. cargo's own resolver keeps the declarations on each edge, so to
# resolve features like it we have to find them again. A declaration belongs to an edge when it
# names the same package, its `(kind, target)` is one of the edge's, and its extern crate name is
# the edge's `name` (the rename with `-` made `_`, else the library's crate name): that last test
# tells apart two versions of one package declared under two renames.


def _narrow_by_version(candidates: list[Declaration], version: str) -> list[Declaration]:
    """Only a workspace that declares one package twice in the same table under different renames
    gets here; the requirement is the only thing left that says which version each one wants."""
    fitting = [decl for decl in candidates if matches(decl.req, version)]
    return fitting or candidates


Kinds = Collection[tuple[DependencyKind, str | None]]
"""The (kind, target) pairs of one resolved edge: `resolve.nodes[].deps[].dep_kinds`."""


def declarations_for_edge(
    declarations: Sequence[Declaration],
    name: str,
    version: str,
    kinds: Kinds | None,
    extern: str | None,
    library: str | None,
) -> list[Declaration]:
    """`extern` None: not known. `kinds` is None for a dependency that metadata lists only in
    `dependencies` (a package without a library target), matched by name alone."""
    named = [decl for decl in declarations if decl.name == name]
    if kinds is None:
        return _narrow_by_version(named, version)
    if extern is not None:
        named = [d for d in named if (extern_name(d.rename) if d.rename else library) == extern]
    found: list[Declaration] = []
    for kind in dict.fromkeys(kinds):
        candidates = [decl for decl in named if (decl.kind, decl.target) == kind]
        found.extend(candidates if len(candidates) < 2 else _narrow_by_version(candidates, version))
    return found
