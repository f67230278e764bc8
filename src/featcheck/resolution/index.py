"""The packages of one `cargo metadata` output, indexed for the feature resolver.

Everything that does not depend on the member or the target is computed here once: feature
tables parsed into `FeatureValue`s, each resolved edge paired with its declarations, and what a
declaration asks of the package it names (its features, plus `default` when used and defined).
"""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import PurePath
from typing import Any, NamedTuple, overload
from urllib.parse import unquote, urlparse

from featcheck.graph import PackageRef
from featcheck.resolution.edges import declarations_for_edge, library_crate_name
from featcheck.resolution.values import FEATURE, FeatureValue, parse_feature_values

NORMAL = 0
DEV = 1
BUILD = 2
_KINDS = {None: NORMAL, "normal": NORMAL, "dev": DEV, "build": BUILD}
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


class Edge(NamedTuple):
    """One declaration of a dependency, bound to the package it resolved to."""

    dep: int
    """Index of the depended-on package."""
    name_in_toml: str
    """The manifest key (the rename, if any): what `dep:x` and `x/feat` refer to."""
    kind: int
    platform: str | None
    """`cfg(...)` or triple of a `[target.X]` table; None when unconditional."""
    optional: bool
    requested: tuple[FeatureValue, ...]
    """What this declaration turns on in `dep` (cargo's `fvs_from_dependency`)."""


@dataclass(slots=True)
class Package:
    """One package of the resolve."""

    index: int
    id: str
    ref: PackageRef
    proc_macro: bool
    features: dict[str, tuple[FeatureValue, ...]]
    edges: tuple[Edge, ...]
    edition: str
    unresolved: frozenset[str] = frozenset()
    """Keys of normal and build dependencies the resolve holds no package for: optional ones
    nothing in the workspace turns on, so Cargo.lock does not know which version they get."""


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

    def _package(self, position: int) -> Package:
        raw = self._raw[position]
        kinds = {kind for target in raw.get("targets", ()) for kind in target.get("kind", ())}
        ref = PackageRef(raw["name"], raw["version"], display_source(raw), raw["id"])
        package = Package(
            position,
            raw["id"],
            ref,
            "proc-macro" in kinds,
            self.feature_table(position),
            (),
            raw["edition"],
        )
        node = self._nodes.get(raw["id"])
        if node is None:
            return package  # not in the resolve: nothing depends on it in any build
        declarations = raw["dependencies"]
        listed = {dep["pkg"]: dep for dep in node.get("deps", ())}
        edges: list[Edge] = []
        for dep_id in node.get("dependencies", listed):
            target = self._by_id[dep_id]
            dependency = self._raw[target]
            library = self._library_name(target)
            for decl in declarations_for_edge(
                declarations, dependency, listed.get(dep_id), library
            ):
                edges.append(self._edge(decl, target))
        edges += self._path_edges_without_library(declarations, edges)
        package.edges = tuple(edges)
        declared = {d.get("rename") or d["name"] for d in declarations if d.get("kind") != "dev"}
        package.unresolved = frozenset(declared - {edge.name_in_toml for edge in edges})
        return package

    def _library_name(self, position: int) -> str | None:
        """The crate name of the package's library (asked once per edge that leads to it)."""
        if position not in self._libraries:
            self._libraries[position] = library_crate_name(self._raw[position])
        return self._libraries[position]

    def _edge(self, decl: Mapping[str, Any], target: int) -> Edge:
        requested = parse_feature_values(decl.get("features", ()))
        if decl.get("uses_default_features", True) and "default" in self.feature_table(target):
            requested += (_DEFAULT,)
        return Edge(
            dep=target,
            name_in_toml=decl.get("rename") or decl["name"],
            kind=_KINDS[decl.get("kind")],
            platform=decl.get("target"),
            optional=bool(decl.get("optional", False)),
            requested=requested,
        )

    def _path_edges_without_library(
        self, declarations: list[Mapping[str, Any]], edges: list[Edge]
    ) -> list[Edge]:
        """Edges to path packages that have no lib target, which metadata's resolve leaves out.

        cargo warns ("ignoring invalid dependency ... which is missing a lib target") and links
        nothing, but the package stays in the feature resolution: what it and its dependencies
        ask for still unifies, and `cargo tree` draws the edge.
        """
        named = {edge.name_in_toml for edge in edges}
        found: list[Edge] = []
        for decl in declarations:
            path = decl.get("path")
            if path is None or (decl.get("rename") or decl["name"]) in named:
                continue
            position = self._by_directory.get((str(decl["name"]), str(PurePath(path))))
            if position is not None:
                found.append(self._edge(decl, position))
        return found


@dataclass
class PackageIndex:
    """All packages of a metadata output, with ids mapped to list positions."""

    packages: Sequence[Package]
    by_id: dict[str, int]
    workspace_root: str
    members: tuple[str, ...]


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
    raw = list({p["id"]: p for p in metadata["packages"]}.values())
    by_id = {package["id"]: i for i, package in enumerate(raw)}
    resolve = metadata.get("resolve") or {"nodes": []}
    nodes = {node["id"]: node for node in resolve["nodes"]}
    by_directory = {
        (str(package["name"]), str(PurePath(package["manifest_path"]).parent)): i
        for i, package in enumerate(raw)
        if package.get("source") is None
    }
    members = tuple(metadata.get("workspace_members", ()))
    table = PackageTable(raw, by_id, nodes, by_directory)
    return PackageIndex(table, by_id, str(metadata.get("workspace_root", "")), members)
