"""Where a dependency is declared in a manifest, in every shape cargo accepts.

One declaration can be written as `burn = { ... }`, as a `[dependencies.burn]` table, with dotted
keys (`burn.workspace = true`), under a rename (`nn = { package = "burn" }`), inside
`[target.'cfg(...)'.dependencies]`, or inherited from the workspace root's
`[workspace.dependencies]`. This module finds the declaration and the span to point at.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from featcheck.manifest.document import ManifestDocument
from featcheck.manifest.spans import Entry, KeyPath
from featcheck.semantics.cfg import TargetCfg

_KIND_TABLES = {
    "normal": ("dependencies",),
    "dev": ("dev-dependencies", "dev_dependencies"),
    "build": ("build-dependencies", "build_dependencies"),
}
_DEFAULT_FEATURES_KEYS = ("default-features", "default_features")


@dataclass(frozen=True)
class DeclarationSite:
    """One dependency declaration as written in one manifest."""

    manifest: ManifestDocument
    path: KeyPath
    """Key path of the declaration, e.g. ("target", "cfg(unix)", "dependencies", "nn")."""
    package: str
    """The depended-on package's real name."""
    value: Any
    """The declared value: a version string or a table."""

    @property
    def key(self) -> str:
        """The key used in the manifest (a rename, if any)."""
        return str(self.path[-1])

    @property
    def inherits(self) -> bool:
        """True for `workspace = true`: the workspace root's entry supplies the rest."""
        return isinstance(self.value, dict) and self.value.get("workspace") is True

    @property
    def version(self) -> str | None:
        """The version requirement written here, if any."""
        if isinstance(self.value, str):
            return self.value
        if isinstance(self.value, dict) and isinstance(self.value.get("version"), str):
            return str(self.value["version"])
        return None

    @property
    def local_path(self) -> str | None:
        """The `path = ...` of a path dependency."""
        if isinstance(self.value, dict) and isinstance(self.value.get("path"), str):
            return str(self.value["path"])
        return None

    def default_features_entry(self) -> tuple[KeyPath, Entry] | None:
        """Where `default-features` is written in this declaration, if it is."""
        for key in _DEFAULT_FEATURES_KEYS:
            path = (*self.path, key)
            entry = self.manifest.entry(path)
            if entry is not None:
                return path, entry
        return None

    def disables_defaults(self) -> bool:
        """True when this declaration itself says `default-features = false`."""
        if not isinstance(self.value, dict):
            return False
        return any(self.value.get(key) is False for key in _DEFAULT_FEATURES_KEYS)

    def key_entry(self) -> Entry | None:
        """Where the declaration's key (or table header) is written."""
        return self.manifest.entry(self.path)


def _package_name(key: str, value: Any) -> str:
    if isinstance(value, dict) and isinstance(value.get("package"), str):
        return str(value["package"])
    return key


def _sites_in_table(
    manifest: ManifestDocument,
    table_path: KeyPath,
    table: Any,
    root: ManifestDocument | None,
    wanted: str,
) -> list[DeclarationSite]:
    """The declarations of package `wanted` in one dependency table."""
    if not isinstance(table, dict):
        return []
    sites = []
    for key, value in table.items():
        package = _package_name(key, value)
        if root is not None and isinstance(value, dict) and value.get("workspace") is True:
            # A rename can live in the inherited entry: `nn = { workspace = true }`.
            inherited = workspace_site(root, key)
            if inherited is not None:
                package = inherited.package
        if package == wanted:
            sites.append(DeclarationSite(manifest, (*table_path, key), package, value))
    return sites


def declaration_sites(
    manifest: ManifestDocument,
    kind: str,
    package: str,
    cfg: TargetCfg | None,
    root: ManifestDocument | None = None,
) -> list[DeclarationSite]:
    """Every declaration of `package` of `kind` that applies to the target, in file order.

    With `cfg` None every `[target.X]` table counts (the target is unknown). `root` is the
    workspace root manifest, for declarations that inherit from `[workspace.dependencies]`.
    """
    tables: list[tuple[KeyPath, Any]] = []
    for name in _KIND_TABLES[kind]:
        tables.append(((name,), manifest.get(name)))
    targets = manifest.get("target")
    if isinstance(targets, dict):
        for platform, platform_table in targets.items():
            if not isinstance(platform_table, dict):
                continue
            if cfg is not None and not _platform_applies(cfg, platform):
                continue
            for name in _KIND_TABLES[kind]:
                tables.append((("target", platform, name), platform_table.get(name)))
    sites: list[DeclarationSite] = []
    for path, table in tables:
        sites.extend(_sites_in_table(manifest, path, table, root, package))
    return sites


def _platform_applies(cfg: TargetCfg, platform: str) -> bool:
    try:
        return cfg.applies(platform)
    except ValueError:
        return True  # cargo would have rejected an unreadable cfg; keep the site visible


def workspace_site(root: ManifestDocument, key: str) -> DeclarationSite | None:
    """The `[workspace.dependencies]` entry a `workspace = true` declaration inherits."""
    table = root.get("workspace", "dependencies")
    if not isinstance(table, dict) or key not in table:
        return None
    value = table[key]
    return DeclarationSite(
        root, ("workspace", "dependencies", key), _package_name(key, value), value
    )
