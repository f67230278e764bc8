"""The workspace from `cargo metadata --format-version 1`: members, packages by id, the table
the resolver indexes. Built once per answer; a `--no-exec` audit builds the same document from
files.

Only package data is taken from metadata. Its `resolve.nodes[].features` are a union over dev-
and build-dependencies and every target, so they never decide a verdict (see `resolution`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from featcheck.errors import FeatcheckError
from featcheck.workspace.model import Package
from featcheck.workspace.table import PackageIndex, build_index


@dataclass(frozen=True)
class Workspace:
    """The workspace as cargo sees it."""

    root: Path
    members: tuple[Package, ...]
    index: PackageIndex = field(repr=False, compare=False)
    """The packages by id, and by position for the resolver."""
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
        for package in self.index.values():
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
    members = tuple(index[i] for i in index.members)
    return Workspace(root, members, index, unread or {})
