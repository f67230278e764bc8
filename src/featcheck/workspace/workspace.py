"""The workspace from `cargo metadata --format-version 1`: members, packages by id, the table
the resolver indexes. Built once per answer; a `--no-exec` audit builds the same document from
files.

Only package data is taken from metadata. Its `resolve.nodes[].features` are a union over dev-
and build-dependencies and every target, so they never decide a verdict (see `resolution`).
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from featcheck.errors import FeatcheckError
from featcheck.workspace.model import Package
from featcheck.workspace.table import PackageIndex, build_index, is_registry


class PackagesById(Mapping[str, Package]):
    """The packages of the table by id."""

    def __init__(self, raw: dict[str, Any], index: PackageIndex) -> None:
        self._raw = raw
        self._index = index

    def __getitem__(self, package_id: str) -> Package:
        return self._index.packages[self._index.by_id[package_id]]

    def __iter__(self) -> Iterator[str]:
        return iter(self._index.by_id)

    def __len__(self) -> int:
        return len(self._index.by_id)

    def document(self, package_id: str) -> dict[str, Any]:
        """The package's entry in the metadata document, as cargo printed it."""
        document: dict[str, Any] = self._raw[package_id]
        return document


@dataclass(frozen=True)
class Workspace:
    """The workspace as cargo sees it."""

    root: Path
    members: tuple[Package, ...]
    packages: PackagesById
    index: PackageIndex = field(repr=False, compare=False)
    """The packages by position, for the resolver (the records `packages` gives by id)."""
    raw: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)
    """The whole `cargo metadata` document, for featcheck's own feature resolver."""
    unread: dict[str, str] = field(default_factory=dict, compare=False)
    """Packages whose manifests a `--no-exec` audit could not read (id -> why): they are in
    `packages` with no features or declarations, and `noexec.gaps` says what they may change.
    Always empty when cargo produced the data."""

    def unpublished(self) -> list[Package]:
        """The packages not from a registry (members, path and git dependencies), read
        without reading the hundreds of registry packages."""
        return [
            self.packages[raw["id"]] for raw in self.raw.get("packages", ()) if not is_registry(raw)
        ]

    def find(self, name: str, version: str) -> Package | None:
        """The package with this name and version, if metadata lists it."""
        for package in self.packages.values():
            if package.name == name and package.version == version:
                return package
        return None


def parse_metadata(text: str) -> Workspace:
    """Read `cargo metadata --format-version 1` output."""
    try:
        data = json.loads(text)
    except ValueError as error:
        raise FeatcheckError(f"cargo metadata printed something unexpected ({error})") from None
    return workspace_from_document(data)


def workspace_from_document(data: Any) -> Workspace:
    """The same, from the document already parsed (or built from files by `--no-exec`)."""
    try:
        index = build_index(data)
        packages = PackagesById({p["id"]: p for p in data["packages"]}, index)
        members = tuple(packages[i] for i in data["workspace_members"])
        root = Path(data["workspace_root"])
        return Workspace(root, members, packages, index, data)
    except (ValueError, KeyError, TypeError) as error:
        raise FeatcheckError(f"cargo metadata printed something unexpected ({error})") from None
