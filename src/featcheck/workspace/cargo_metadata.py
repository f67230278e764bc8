"""The workspace of `cargo metadata --format-version 1`: its packages read into the model.

Only package data is taken from metadata. Its `resolve.nodes[].features` are a union over dev-
and build-dependencies and every target, so they never decide a verdict (see `resolution`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, cast

from featcheck.errors import FeatcheckError
from featcheck.workspace.model import (
    COMPILED_KINDS,
    LIBRARY_KINDS,
    CrateRoot,
    Declaration,
    DependencyKind,
    Edge,
    Package,
    extern_name,
    gated_binary,
)
from featcheck.workspace.workspace import Listed, PackageTable, Workspace, declarations_for_edge


def parse_metadata(text: str) -> Workspace:
    try:
        return workspace_from_metadata(json.loads(text))
    except (ValueError, KeyError, TypeError) as error:
        raise FeatcheckError(f"cargo metadata printed something unexpected ({error})") from None


def workspace_from_metadata(metadata: Mapping[str, Any]) -> Workspace:
    resolve = metadata.get("resolve") or {}
    raw = list({p["id"]: p for p in metadata["packages"]}.values())
    nodes = {node["id"]: node for node in resolve.get("nodes", ())}
    packages = CargoPackages(raw, nodes)
    root, members = Path(metadata["workspace_root"]), tuple(metadata.get("workspace_members", ()))
    return Workspace(root, packages, members, resolve.get("root"))


def merged_metadata(answers: Sequence[Workspace]) -> Workspace:
    """One workspace from cargo's answers for several sets of features over one lockfile, where
    no one set has them all (diffsol's features exclude each other): every package any answer
    resolved, each with the edges of all (the lockfile decides where each edge leads, whatever
    the features)."""
    first = answers[0]
    if len(answers) == 1:
        return first
    raw: dict[str, Mapping[str, Any]] = {}
    nodes: dict[str, Any] = {}
    for answer in answers:
        packages = answer.packages
        assert isinstance(packages, CargoPackages)
        raw.update((p["id"], p) for p in packages._raw if p["id"] not in raw)
        for node_id, node in packages._nodes.items():
            kept = nodes.setdefault(node_id, {"id": node_id, "dependencies": [], "deps": []})
            known = {dep["pkg"] for dep in kept["deps"]}
            kept["deps"] += [dep for dep in node.get("deps", ()) if dep["pkg"] not in known]
            listed = kept["dependencies"]
            listed += [d for d in node.get("dependencies", ()) if d not in listed]
    packages = CargoPackages(list(raw.values()), dict(nodes))
    return Workspace(first.root, packages, first.member_ids, first.resolve_root)


class CargoPackages(PackageTable):
    """The packages of `cargo metadata`'s answer (`packages`, and `resolve.nodes` for the edges)."""

    def __init__(self, raw: list[Mapping[str, Any]], nodes: dict[str, Mapping[str, Any]]) -> None:
        super().__init__(
            [
                Listed(p["id"], p["name"], p["version"], p.get("source"), p["manifest_path"])
                for p in raw
            ]
        )
        self._raw = raw
        self._nodes = nodes
        self._libraries: dict[int, str | None] = {}

    def _written_features(self, position: int) -> Mapping[str, list[str]]:
        return cast("Mapping[str, list[str]]", self._raw[position]["features"])

    def _library_name(self, position: int) -> str | None:
        # Kept: asked once per edge that leads to the package.
        if position not in self._libraries:
            self._libraries[position] = next(
                (
                    extern_name(str(target["name"]))
                    for target in self._raw[position].get("targets", ())
                    if LIBRARY_KINDS.intersection(target.get("kind", ()))
                ),
                None,
            )
        return self._libraries[position]

    def resolved_positions(self, position: int) -> Sequence[int]:
        node = self._nodes.get(self.listed[position].id, {})
        return [self.by_id[dep["pkg"]] for dep in node.get("deps", ()) if dep["pkg"] in self.by_id]

    def dependents(self, package_id: str) -> list[str]:
        return [
            i
            for i, node in self._nodes.items()
            if any(dep.get("pkg") == package_id for dep in node.get("deps", ()))
        ]

    def names(self) -> set[str]:
        return {str(raw.get("name", "")) for raw in self._raw} | {
            str(d.get("name", "")) for raw in self._raw for d in raw.get("dependencies", ())
        }

    def may_hold_settings(self, position: int) -> bool:
        raw = self._raw[position]
        if "metadata" not in raw:
            return True
        table = raw["metadata"]
        return isinstance(table, dict) and "featcheck" in table

    def _package(self, position: int) -> Package:
        raw = self._raw[position]
        declarations = tuple(declaration(d) for d in raw.get("dependencies", ()))
        node = self._nodes.get(raw["id"])
        edges: list[Edge] | None = None
        if node is not None:
            edges = []
            # Each edge's declarations are among those of its package's name (looking through
            # all of them for each edge was a fifth of reading a package with many).
            named: dict[str, list[Declaration]] = {}
            for decl in declarations:
                named.setdefault(decl.name, []).append(decl)
            listed = {dep["pkg"]: dep for dep in node.get("deps", ())}
            for dep_id in node.get("dependencies", listed):
                target = self.by_id[dep_id]
                dependency = self._raw[target]
                library = self._library_name(target)
                kinds, extern = None, None
                if (edge := listed.get(dep_id)) is not None:
                    pairs = edge.get("dep_kinds", ())
                    kinds = [(DependencyKind.of(k.get("kind")), k.get("target")) for k in pairs]
                    extern = edge.get("name") or None
                name, version = dependency["name"], str(dependency["version"])
                found = declarations_for_edge(
                    named.get(name, ()), name, version, kinds, extern, library
                )
                edges += [self.edge(decl, target) for decl in found]
        targets = raw.get("targets", ())
        gated = [
            gated_binary(t.get("required-features")) if "bin" in t.get("kind", ()) else None
            for t in targets
        ]
        target_kinds = frozenset(
            kind
            for target, required in zip(targets, gated, strict=True)
            if required is None
            for kind in target.get("kind", ())
        )
        binaries = tuple(required for required in gated if required is not None)
        roots: tuple[CrateRoot, ...] = ()
        if raw.get("source") is None:  # a local package: where it may say `#![no_std]`
            roots = tuple(
                CrateRoot(Path(t["src_path"]), required or frozenset())
                for t, required in zip(targets, gated, strict=True)
                if COMPILED_KINDS.intersection(t.get("kind", ())) and "src_path" in t
            )
        return self._record(position, declarations, edges, target_kinds, binaries, roots)


def declaration(raw: Mapping[str, Any]) -> Declaration:
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
