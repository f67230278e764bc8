"""featcheck's own feature resolution: cargo's feature resolver over the workspace model.

Entry points: `resolve_builds` (graphs of every member on every target, equal to what
`cargo tree -e normal -p MEMBER --target T` prints, from one `cargo metadata` call),
`resolver_version` (which resolver the workspace root selects). `resolve_configurations`
resolves members under cargo's feature selection flags (`featureset.FeatureSelection`).

Which resolver a workspace uses `cargo metadata` does not say. cargo takes it from the workspace
root manifest only (members' settings are ignored, with a warning): `[workspace] resolver`, else
`[package] resolver`, else the root package's edition (2021 gives "2", 2024 gives "3", older
editions "1"). A virtual workspace without `resolver` gets "1" (cargo warns about it).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from featcheck.errors import FeatcheckError
from featcheck.resolution.features import FeatureSelectionError
from featcheck.resolution.resolver import resolve_builds, resolve_configurations

__all__ = [
    "FeatureSelectionError",
    "resolve_builds",
    "resolve_configurations",
    "resolver_version",
]


_EDITION_RESOLVER = {"2015": 1, "2018": 1, "2021": 2, "2024": 3}


def _parse_resolver(value: object, where: str) -> int:
    if str(value) in ("1", "2", "3"):
        return int(str(value))
    raise FeatcheckError(f"unknown feature resolver {value!r} in {where} (cargo knows 1, 2, 3)")


def edition_resolver(edition: str) -> int:
    """The default resolver of an edition; future editions keep the newest one we know."""
    if edition in _EDITION_RESOLVER:
        return _EDITION_RESOLVER[edition]
    return max(_EDITION_RESOLVER.values()) if edition > "2024" else 1


def resolver_version(root_manifest_data: Mapping[str, Any], root_edition: str | None = None) -> int:
    """The resolver of the workspace whose root manifest is `root_manifest_data` (parsed TOML).

    `root_edition` is the root package's edition as `cargo metadata` reports it (`edition` of
    that package: inheritance from `[workspace.package]` already applied); when None it is read
    from the manifest, following `edition.workspace = true`.
    """
    workspace = root_manifest_data.get("workspace")
    package = root_manifest_data.get("package")
    if isinstance(workspace, Mapping) and "resolver" in workspace:
        return _parse_resolver(workspace["resolver"], "[workspace]")
    if not isinstance(package, Mapping):
        return 1  # virtual workspace without `resolver`
    if "resolver" in package:
        return _parse_resolver(package["resolver"], "[package]")
    if root_edition is None:
        edition = package.get("edition", "2015")
        if isinstance(edition, Mapping) and edition.get("workspace"):
            inherited = workspace.get("package", {}) if isinstance(workspace, Mapping) else {}
            edition = inherited.get("edition", "2015")
        root_edition = str(edition)
    return edition_resolver(root_edition)
