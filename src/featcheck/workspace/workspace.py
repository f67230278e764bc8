"""The workspace model: its root, its members, and every package by id and by position.

Built once per answer: from `cargo metadata --format-version 1` (`parse_metadata`), or from the
files a `--no-exec` audit reads (`noexec.metadata.build_metadata`), each source reading its
packages into the model itself (`table.PackageTable`).

Only package data is taken from metadata. Its `resolve.nodes[].features` are a union over dev-
and build-dependencies and every target, so they never decide a verdict (see `resolution`).
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

from featcheck.errors import FeatcheckError
from featcheck.workspace.model import DependencyKind, Edge, Package
from featcheck.workspace.table import Listed, PackageTable, declaration, declarations_for_edge


@dataclass(frozen=True, eq=False)
class Workspace(Mapping[str, Package]):
    """The workspace as cargo sees it: its packages by id (as a mapping), and by list position
    (`packages`, for the resolver), with ids mapped to positions."""

    root: Path
    packages: PackageTable = field(repr=False)
    by_id: dict[str, int] = field(repr=False)
    member_ids: tuple[str, ...]
    resolve_root: str | None = None
    """The package cargo ran for (metadata's `resolve.root`): None for a virtual manifest."""
    unread: dict[str, str] = field(default_factory=dict)
    """Packages whose manifests a `--no-exec` audit could not read (id -> why): they are in
    `packages` with no features or declarations, and `noexec.gaps` says what they may change.
    Always empty when cargo produced the data."""

    def __post_init__(self) -> None:
        _ = self.members  # indexed with the answer: a malformed one fails where it is read

    @cached_property
    def members(self) -> tuple[Package, ...]:
        return tuple(self[i] for i in self.member_ids)

    def __getitem__(self, package_id: str) -> Package:
        return self.packages[self.by_id[package_id]]

    def __iter__(self) -> Iterator[str]:
        return iter(self.by_id)

    def __len__(self) -> int:
        return len(self.by_id)

    def document(self, package_id: str) -> Mapping[str, Any]:
        return self.packages.document(self.by_id[package_id])

    def unpublished(self) -> list[Package]:
        """The packages not from a registry (members, path and git dependencies), read
        without reading the hundreds of registry packages."""
        table = self.packages
        return [table[position] for position in table.unpublished()]

    def find(self, name: str, version: str) -> Package | None:
        """The package with this name and version, if metadata lists it."""
        for package in self.values():
            if package.name == name and package.version == version:
                return package
        return None


def parse_metadata(text: str) -> Workspace:
    try:
        return workspace_from_metadata(json.loads(text))
    except (ValueError, KeyError, TypeError) as error:
        raise FeatcheckError(f"cargo metadata printed something unexpected ({error})") from None


def workspace_from_metadata(metadata: Mapping[str, Any]) -> Workspace:
    """The workspace of `cargo metadata --format-version 1` output (already parsed from JSON)."""
    resolve = metadata.get("resolve") or {}
    raw = list({p["id"]: p for p in metadata["packages"]}.values())
    nodes = {node["id"]: node for node in resolve.get("nodes", ())}
    packages = CargoPackages(raw, nodes)
    return Workspace(
        Path(metadata["workspace_root"]),
        packages,
        packages.by_id,
        tuple(metadata.get("workspace_members", ())),
        resolve.get("root"),
    )


class CargoPackages(PackageTable):
    """The packages of `cargo metadata`'s answer (`packages`, and `resolve.nodes` for the
    edges), each read into the model when first asked for."""

    def __init__(self, raw: list[Mapping[str, Any]], nodes: dict[str, Mapping[str, Any]]) -> None:
        super().__init__(
            [
                Listed(p["id"], p["name"], p["version"], p.get("source"), p["manifest_path"])
                for p in raw
            ]
        )
        self._raw = raw
        self._nodes = nodes

    def _written_features(self, position: int) -> Mapping[str, list[str]]:
        features: Mapping[str, list[str]] = self._raw[position]["features"]
        return features

    def _targets(self, position: int) -> Sequence[Mapping[str, Any]]:
        targets: Sequence[Mapping[str, Any]] = self._raw[position].get("targets", ())
        return targets

    def dependents(self, package_id: str) -> list[str]:
        return [
            i
            for i, node in self._nodes.items()
            if any(dep.get("pkg") == package_id for dep in node.get("deps", ()))
        ]

    def names(self) -> set[str]:
        names = {str(raw.get("name", "")) for raw in self._raw}
        for raw in self._raw:
            names.update(str(d.get("name", "")) for d in raw.get("dependencies", ()))
        return names

    def document(self, position: int) -> Mapping[str, Any]:
        return self._raw[position]

    def _package(self, position: int) -> Package:
        raw = self._raw[position]
        declarations = tuple(declaration(d) for d in raw.get("dependencies", ()))
        node = self._nodes.get(raw["id"])
        edges: list[Edge] | None = None
        if node is not None:
            edges = []
            listed = {dep["pkg"]: dep for dep in node.get("deps", ())}
            for dep_id in node.get("dependencies", listed):
                target = self.by_id[dep_id]
                dependency = self._raw[target]
                library = self._library_name(target)
                edge = listed.get(dep_id)
                kinds = None
                if edge is not None:
                    pairs = edge.get("dep_kinds", ())
                    kinds = [(DependencyKind.of(k.get("kind")), k.get("target")) for k in pairs]
                for decl in declarations_for_edge(
                    declarations,
                    dependency["name"],
                    str(dependency["version"]),
                    kinds,
                    (edge.get("name") or None) if edge is not None else None,
                    library,
                ):
                    edges.append(self._edge(decl, target))
        return self._record(position, raw["edition"], declarations, edges)
