"""The packages of one `cargo metadata` output, indexed for the feature resolver.

Everything that does not depend on the member or the target is computed here once: feature
tables parsed into `FeatureValue`s, each resolved edge paired with its declarations, and what a
declaration asks of the package it names (its features, plus `default` when used and defined).
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import PurePath
from typing import Any, NamedTuple
from urllib.parse import unquote, urlparse

from featcheck.graph import PackageRef
from featcheck.resolution.edges import declarations_for_edge
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


@dataclass
class PackageIndex:
    """All packages of a metadata output, with ids mapped to list positions."""

    packages: list[Package]
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


def _package_shell(index: int, raw: Mapping[str, Any]) -> Package:
    kinds = {kind for target in raw.get("targets", ()) for kind in target.get("kind", ())}
    features = {name: parse_feature_values(values) for name, values in raw["features"].items()}
    ref = PackageRef(raw["name"], raw["version"], display_source(raw), raw["id"])
    return Package(index, raw["id"], ref, "proc-macro" in kinds, features, (), raw["edition"])


def _edge(decl: Mapping[str, Any], target: Package) -> Edge:
    requested = parse_feature_values(decl.get("features", ()))
    if decl.get("uses_default_features", True) and "default" in target.features:
        requested += (_DEFAULT,)
    return Edge(
        dep=target.index,
        name_in_toml=decl.get("rename") or decl["name"],
        kind=_KINDS[decl.get("kind")],
        platform=decl.get("target"),
        optional=bool(decl.get("optional", False)),
        requested=requested,
    )


def _path_edges_without_library(
    declarations: list[Mapping[str, Any]],
    edges: list[Edge],
    by_directory: Mapping[tuple[str, str], int],
    packages: list[Package],
) -> list[Edge]:
    """Edges to path packages that have no lib target, which metadata's resolve leaves out.

    cargo warns ("ignoring invalid dependency ... which is missing a lib target") and links
    nothing, but the package stays in the feature resolution: what it and its dependencies ask
    for still unifies, and `cargo tree` draws the edge.
    """
    named = {edge.name_in_toml for edge in edges}
    found: list[Edge] = []
    for decl in declarations:
        path = decl.get("path")
        if path is None or (decl.get("rename") or decl["name"]) in named:
            continue
        position = by_directory.get((str(decl["name"]), str(PurePath(path))))
        if position is not None:
            found.append(_edge(decl, packages[position]))
    return found


def build_index(metadata: Mapping[str, Any]) -> PackageIndex:
    """Index `cargo metadata --format-version 1` output (already parsed from JSON)."""
    raw_packages: dict[str, Mapping[str, Any]] = {p["id"]: p for p in metadata["packages"]}
    by_id = {package_id: i for i, package_id in enumerate(raw_packages)}
    packages = [_package_shell(i, raw) for i, raw in enumerate(raw_packages.values())]
    resolve = metadata.get("resolve") or {"nodes": []}
    by_directory = {
        (str(raw["name"]), str(PurePath(raw["manifest_path"]).parent)): by_id[package_id]
        for package_id, raw in raw_packages.items()
        if raw.get("source") is None
    }
    for node in resolve["nodes"]:
        parent = packages[by_id[node["id"]]]
        declarations = raw_packages[node["id"]]["dependencies"]
        listed = {dep["pkg"]: dep for dep in node.get("deps", ())}
        edges: list[Edge] = []
        for dep_id in node.get("dependencies", listed):
            dependency = raw_packages[dep_id]
            target = packages[by_id[dep_id]]
            for decl in declarations_for_edge(declarations, dependency, listed.get(dep_id)):
                edges.append(_edge(decl, target))
        edges += _path_edges_without_library(declarations, edges, by_directory, packages)
        parent.edges = tuple(edges)
        declared = {d.get("rename") or d["name"] for d in declarations if d.get("kind") != "dev"}
        parent.unresolved = frozenset(declared - {edge.name_in_toml for edge in edges})
    members = tuple(metadata.get("workspace_members", ()))
    return PackageIndex(packages, by_id, str(metadata.get("workspace_root", "")), members)
