"""The packages of one `cargo metadata` output, by position, one record each.

Everything that does not depend on the member or the target is computed here once: feature
tables parsed into `FeatureValue`s, each resolved edge bound to its declaration, and what a
declaration asks of the package it names (its features, plus `default` when used and defined).
"""

from __future__ import annotations

import sys
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePath
from typing import Any, overload
from urllib.parse import unquote, urlparse

from featcheck.semantics.semver import matches
from featcheck.workspace.model import (
    DEV,
    FEATURE,
    Declaration,
    DependencyKind,
    Edge,
    FeatureValue,
    Package,
    PackageRef,
    parse_feature_values,
)
from featcheck.workspace.names import extern_name

_CRATES_IO = (
    "registry+https://github.com/rust-lang/crates.io-index",
    "sparse+https://index.crates.io/",
)
_DEFAULT = FeatureValue(FEATURE, "default")

if sys.platform == "win32":
    from nturl2path import url2pathname
else:
    # What `urllib.request.url2pathname` is off Windows, without importing urllib.request
    # (http.client, email, ssl: a tenth of the start-up of a --no-exec audit).
    url2pathname = unquote


class PackageTable(Sequence[Package]):
    """The packages of a metadata output by position, each indexed the first time it is asked
    for: a build reaches a fraction of what metadata lists (other targets' dependencies,
    dev-dependencies of dependencies), and an audit pays only for what it reaches."""

    def __init__(
        self,
        raw: list[Mapping[str, Any]],
        by_id: dict[str, int],
        nodes: dict[str, Mapping[str, Any]],
        by_directory: Mapping[tuple[str, str], int],
    ) -> None:
        self._raw = raw
        self._by_id = by_id
        self._nodes = nodes
        self._by_directory = by_directory
        self._made: list[Package | None] = [None] * len(raw)
        self._features: list[dict[str, tuple[FeatureValue, ...]] | None] = [None] * len(raw)
        self._libraries: dict[int, str | None] = {}
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
        table = PackageTable(self._raw, self._by_id, self._nodes, self._by_directory)
        table._base = self
        table._features = self._features
        for position, package in changed.items():
            table._made[position] = package
        return table

    def feature_table(self, position: int) -> dict[str, tuple[FeatureValue, ...]]:
        """The parsed `[features]` of the package at `position`."""
        features = self._features[position]
        if features is None:
            raw = self._raw[position]["features"]
            features = {name: parse_feature_values(values) for name, values in raw.items()}
            self._features[position] = features
        return features

    def refs(self) -> dict[str, PackageRef]:
        """Every package's name, version and source by id, read without indexing any."""
        return {
            raw["id"]: PackageRef(raw["name"], raw["version"], display_source(raw))
            for raw in self._raw
        }

    def resolved_dependencies(self) -> dict[str, tuple[str, ...]]:
        """The ids each package of the resolve depends on, on any target and of any kind."""
        return {i: tuple(node.get("dependencies", ())) for i, node in self._nodes.items()}

    def dependents(self, package_id: str) -> list[str]:
        """The ids of the packages the resolve binds a dependency of to `package_id`."""
        return [
            i
            for i, node in self._nodes.items()
            if any(dep.get("pkg") == package_id for dep in node.get("deps", ()))
        ]

    def registry_versions(self) -> dict[str, list[tuple[str, str]]]:
        """(version, id) of every registry package, by name."""
        found: dict[str, list[tuple[str, str]]] = {}
        for raw in self._raw:
            if is_registry(raw):
                found.setdefault(raw["name"], []).append((raw["version"], raw["id"]))
        return found

    def names(self) -> set[str]:
        """The name of every package and of every dependency any of them declares (an
        optional one that no build turns on included), as the manifests spell them."""
        names = {str(raw.get("name", "")) for raw in self._raw}
        for raw in self._raw:
            names.update(str(d.get("name", "")) for d in raw.get("dependencies", ()))
        return names

    def unpublished(self) -> list[int]:
        """Positions of the packages not from a registry (members, path and git
        dependencies), found without indexing the hundreds of registry packages."""
        return [i for i, raw in enumerate(self._raw) if not is_registry(raw)]

    def document(self, position: int) -> Mapping[str, Any]:
        """The package's entry as metadata gave it: for what the model does not hold (the
        `[package.metadata]` table, a member's feature names as written)."""
        return self._raw[position]

    def _package(self, position: int) -> Package:
        raw = self._raw[position]
        kinds = frozenset(
            kind for target in raw.get("targets", ()) for kind in target.get("kind", ())
        )
        declarations = tuple(declaration(d) for d in raw.get("dependencies", ()))
        node = self._nodes.get(raw["id"])
        edges: list[Edge] = []
        unresolved: frozenset[str] = frozenset()
        if node is not None:  # else not in the resolve: nothing depends on it in any build
            listed = {dep["pkg"]: dep for dep in node.get("deps", ())}
            for dep_id in node.get("dependencies", listed):
                target = self._by_id[dep_id]
                dependency = self._raw[target]
                library = self._library_name(target)
                for decl in declarations_for_edge(
                    declarations, dependency, listed.get(dep_id), library
                ):
                    edges.append(self._edge(decl, target))
            edges += self._path_edges_without_library(declarations, edges)
            declared = {d.key for d in declarations if d.kind is not DEV}
            unresolved = frozenset(declared - {edge.name_in_toml for edge in edges})
        return Package(
            index=position,
            id=raw["id"],
            ref=PackageRef(raw["name"], raw["version"], display_source(raw), raw["id"]),
            manifest_path=Path(raw["manifest_path"]),
            is_registry=is_registry(raw),
            target_kinds=kinds,
            proc_macro="proc-macro" in kinds,
            edition=raw["edition"],
            features=self.feature_table(position),
            declarations=declarations,
            edges=tuple(edges),
            unresolved=unresolved,
        )

    def _library_name(self, position: int) -> str | None:
        """The crate name of the package's library (asked once per edge that leads to it)."""
        if position not in self._libraries:
            self._libraries[position] = library_crate_name(self._raw[position])
        return self._libraries[position]

    def _edge(self, decl: Declaration, target: int) -> Edge:
        requested = parse_feature_values(decl.features)
        if decl.uses_default_features and "default" in self.feature_table(target):
            requested += (_DEFAULT,)
        return Edge(
            target, decl.key, decl.kind, decl.target, decl.optional, requested, declaration=decl
        )

    def _path_edges_without_library(
        self, declarations: tuple[Declaration, ...], edges: list[Edge]
    ) -> list[Edge]:
        """Edges to path packages that have no lib target, which metadata's resolve leaves out.

        cargo warns ("ignoring invalid dependency ... which is missing a lib target") and links
        nothing, but the package stays in the feature resolution: what it and its dependencies
        ask for still unifies, and `cargo tree` draws the edge.
        """
        named = {edge.name_in_toml for edge in edges}
        found: list[Edge] = []
        for decl in declarations:
            if decl.path is None or decl.key in named:
                continue
            position = self._by_directory.get((decl.name, str(PurePath(decl.path))))
            if position is not None:
                found.append(self._edge(decl, position))
        return found


@dataclass
class PackageIndex(Mapping[str, Package]):
    """All packages of a metadata output: by id (as a mapping), and by list position (the
    table, for the resolver), with ids mapped to positions."""

    packages: PackageTable
    by_id: dict[str, int]
    members: tuple[str, ...]
    resolve_root: str | None = None
    """The package cargo ran for (metadata's `resolve.root`): None for a virtual manifest."""

    def __getitem__(self, package_id: str) -> Package:
        return self.packages[self.by_id[package_id]]

    def __iter__(self) -> Iterator[str]:
        return iter(self.by_id)

    def __len__(self) -> int:
        return len(self.by_id)

    def document(self, package_id: str) -> Mapping[str, Any]:
        """The package's entry in the metadata document, as cargo printed it."""
        return self.packages.document(self.by_id[package_id])


def declaration(raw: Mapping[str, Any]) -> Declaration:
    """A `packages[].dependencies[]` entry of `cargo metadata`."""
    return Declaration(
        name=raw["name"],
        rename=raw.get("rename"),
        req=raw.get("req", "*"),
        kind=DependencyKind.of(raw.get("kind")),
        target=raw.get("target"),
        optional=bool(raw.get("optional", False)),
        uses_default_features=bool(raw.get("uses_default_features", True)),
        features=tuple(raw.get("features", ())),
        path=raw.get("path"),
    )


def is_registry(package: Mapping[str, Any]) -> bool:
    """Whether the package comes from a registry (crates.io or another)."""
    return str(package.get("source") or "").startswith(("registry+", "sparse+"))


def display_source(package: Mapping[str, Any]) -> str | None:
    """The source as cargo tree's `{p}` prints it: None for crates.io, a directory for paths."""
    source = package.get("source")
    if source is None:
        # Path packages: the id is `path+file:///dir#...`, the directory cargo prints.
        url = str(package["id"]).partition("#")[0].removeprefix("path+")
        parsed = urlparse(url)
        if parsed.scheme == "file":
            return url2pathname(unquote(parsed.path))
        return str(package["manifest_path"]).rsplit("/", 1)[0]
    source = str(source)
    if source in _CRATES_IO:
        return None
    if source.startswith("git+"):
        # `git+URL?ref#full-commit` prints as `URL?ref#short-commit`.
        url, _, commit = source[len("git+") :].partition("#")
        return f"{url}#{commit[:8]}" if commit else url
    kind, _, url = source.partition("+")
    return f"registry `{url}`" if kind in ("registry", "sparse") else source


def build_index(metadata: Mapping[str, Any]) -> PackageIndex:
    """Index `cargo metadata --format-version 1` output (already parsed from JSON)."""
    resolve = metadata.get("resolve") or {}
    return package_index(
        metadata["packages"],
        resolve.get("nodes", ()),
        tuple(metadata.get("workspace_members", ())),
        resolve.get("root"),
    )


def package_index(
    packages: Sequence[Mapping[str, Any]],
    nodes: Sequence[Mapping[str, Any]],
    members: tuple[str, ...],
    resolve_root: str | None,
) -> PackageIndex:
    """The table of `packages` (entries as `cargo metadata` writes them: cargo's answer, or
    what `--no-exec` read from the manifests) and their resolved edges (`resolve.nodes`)."""
    raw = list({p["id"]: p for p in packages}.values())
    by_id = {package["id"]: i for i, package in enumerate(raw)}
    by_directory = {
        (str(package["name"]), str(PurePath(package["manifest_path"]).parent)): i
        for i, package in enumerate(raw)
        if package.get("source") is None
    }
    table = PackageTable(raw, by_id, {node["id"]: node for node in nodes}, by_directory)
    return PackageIndex(table, by_id, members, resolve_root)


# Pair each resolved edge of `cargo metadata` with the manifest declarations behind it.
#
# `resolve.nodes[].deps[]` names the package an edge leads to and its `(kind, target)` pairs, but
# not the declaration's `optional`, `default-features` and `features`; those live in
# `packages[].dependencies[]`. cargo's own resolver keeps the declarations on each edge, so to
# resolve features like it we have to find them again. A declaration belongs to an edge when it
# names the same package, its `(kind, target)` is one of the edge's, and its extern crate name is
# the edge's `name` (the rename with `-` made `_`, else the library's crate name): that last test
# tells apart two versions of one package declared under two renames.

_LIBRARY_KINDS = frozenset({"lib", "rlib", "dylib", "cdylib", "staticlib", "proc-macro"})


def library_crate_name(package: Mapping[str, Any]) -> str | None:
    """The crate name of the package's library target, or None when it has no library."""
    for target in package.get("targets", ()):
        if _LIBRARY_KINDS.intersection(target.get("kind", ())):
            return extern_name(str(target["name"]))
    return None


def _extern_name(decl: Declaration, library: str | None) -> str | None:
    return extern_name(decl.rename) if decl.rename else library


def _narrow_by_version(candidates: list[Declaration], version: str) -> list[Declaration]:
    """Of several declarations for one (kind, target), keep those whose requirement matches.

    Only a workspace that declares one package twice in the same table under different renames
    gets here; the requirement is the only thing left that says which version each one wants.
    """
    fitting = [decl for decl in candidates if matches(decl.req, version)]
    return fitting or candidates


_UNKNOWN = "\0"


def declarations_for_edge(
    declarations: Sequence[Declaration],
    dependency: Mapping[str, Any],
    edge: Mapping[str, Any] | None,
    library: str | None = _UNKNOWN,
) -> list[Declaration]:
    """The declarations of a package that resolved to `dependency` along `edge`.

    `edge` is the `resolve.nodes[].deps[]` entry; None for a dependency that metadata lists
    only in `dependencies` (a package without a library target), matched by name alone.
    `library` is `library_crate_name(dependency)` when the caller knows it already.
    """
    name = dependency["name"]
    version = str(dependency["version"])
    named = [decl for decl in declarations if decl.name == name]
    if edge is None:
        return _narrow_by_version(named, version)
    if library == _UNKNOWN:
        library = library_crate_name(dependency)
    extern = edge.get("name") or None
    by_kind: dict[tuple[DependencyKind, str | None], list[Declaration]] = {}
    for dep_kind in edge.get("dep_kinds", ()):
        by_kind.setdefault((DependencyKind.of(dep_kind.get("kind")), dep_kind.get("target")), [])
    for decl in named:
        key = (decl.kind, decl.target)
        if key not in by_kind:
            continue
        if extern is not None and _extern_name(decl, library) != extern:
            continue
        by_kind[key].append(decl)
    found: list[Declaration] = []
    for candidates in by_kind.values():
        found.extend(candidates if len(candidates) < 2 else _narrow_by_version(candidates, version))
    return found
