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
from featcheck.workspace.table import PackageIndex, build_index


class PackagesById(Mapping[str, Package]):
    """The packages of the table by id."""

    def __init__(self, index: PackageIndex) -> None:
        self._index = index

    def __getitem__(self, package_id: str) -> Package:
        return self._index.packages[self._index.by_id[package_id]]

    def __iter__(self) -> Iterator[str]:
        return iter(self._index.by_id)

    def __len__(self) -> int:
        return len(self._index.by_id)

    def document(self, package_id: str) -> Mapping[str, Any]:
        """The package's entry in the metadata document, as cargo printed it."""
        return self._index.packages.document(self._index.by_id[package_id])


@dataclass(frozen=True)
class Workspace:
    """The workspace as cargo sees it."""

    root: Path
    members: tuple[Package, ...]
    packages: PackagesById
    index: PackageIndex = field(repr=False, compare=False)
    """The packages by position, for the resolver (the records `packages` gives by id)."""
    unread: dict[str, str] = field(default_factory=dict, compare=False)
    """Packages whose manifests a `--no-exec` audit could not read (id -> why): they are in
    `packages` with no features or declarations, and `noexec.gaps` says what they may change.
    Always empty when cargo produced the data."""

    def unpublished(self) -> list[Package]:
        """The packages not from a registry (members, path and git dependencies), read
        without reading the hundreds of registry packages."""
        table = self.index.packages
        return [table[position] for position in table.unpublished()]

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
        return workspace_of(build_index(data), Path(data["workspace_root"]))
    except (ValueError, KeyError, TypeError) as error:
        raise FeatcheckError(f"cargo metadata printed something unexpected ({error})") from None


def workspace_of(
    index: PackageIndex, root: Path, unread: dict[str, str] | None = None
) -> Workspace:
    """The workspace over a package table (`table.package_index`), with the packages a
    `--no-exec` audit could not read (id -> why)."""
    packages = PackagesById(index)
    members = tuple(packages[i] for i in index.members)
    return Workspace(root, members, packages, index, unread or {})
