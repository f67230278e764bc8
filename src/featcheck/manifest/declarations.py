"""Where a dependency is declared in a manifest, in every shape cargo accepts.

One declaration can be written as `burn = { ... }`, as a `[dependencies.burn]` table, with dotted
keys (`burn.workspace = true`), under a rename (`nn = { package = "burn" }`), inside
`[target.'cfg(...)'.dependencies]`, or inherited from the workspace root's
`[workspace.dependencies]`. This module finds them, binds the model's declarations to them,
and gives the span to point at.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, NamedTuple

from featcheck.workspace.model import BUILD, DEV, NORMAL, Declaration, DependencyKind

if TYPE_CHECKING:
    from featcheck.graph import Node
    from featcheck.manifest.document import ManifestDocument
    from featcheck.manifest.spans import Entry, KeyPath
    from featcheck.semantics.cfg import TargetCfg

KIND_TABLES = {
    NORMAL: ("dependencies",),
    DEV: ("dev-dependencies", "dev_dependencies"),
    BUILD: ("build-dependencies", "build_dependencies"),
}
"""The tables of each kind of dependency: cargo's spelling, then the older one it still reads."""
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
    kind: DependencyKind
    inherited: DeclarationSite | None = field(default=None, compare=False)
    """The `[workspace.dependencies]` entry this `workspace = true` declaration inherits, where
    the workspace root was given and has it."""

    @property
    def key(self) -> str:
        return str(self.path[-1])

    @property
    def inherits(self) -> bool:
        """True for `workspace = true`: the workspace root's entry supplies the rest."""
        return isinstance(self.value, dict) and self.value.get("workspace") is True

    @property
    def version(self) -> str | None:
        return self.value if isinstance(self.value, str) else _text(self.value, "version")

    def default_features_entry(self) -> tuple[KeyPath, Entry] | None:
        for key in _DEFAULT_FEATURES_KEYS:
            path = (*self.path, key)
            entry = self.manifest.spans.get(path)
            if entry is not None:
                return path, entry
        return None

    def disables_defaults(self) -> bool:
        """True when this declaration itself says `default-features = false`."""
        if not isinstance(self.value, dict):
            return False
        return any(self.value.get(key) is False for key in _DEFAULT_FEATURES_KEYS)

    def asked_features(self) -> tuple[str, ...]:
        """The features the line asks for (with the workspace entry's it inherits), and
        `default` where the defaults stay on."""
        lines = [self] if self.inherited is None else [self, self.inherited]
        values = [line.value for line in lines if isinstance(line.value, dict)]
        asked = [f for v in values for f in v.get("features", ()) if isinstance(f, str)]
        cuts = self.inherited if self.inherits and self.inherited is not None else self
        return (*asked, *(() if cuts.disables_defaults() else ("default",)))

    @property
    def platform(self) -> str | None:
        """The `[target.X]` table's X (a `cfg(...)` or a triple); None if unconditional."""
        return str(self.path[1]) if self.path[0] == "target" else None

    def applies(self, cfg: TargetCfg | None) -> bool:
        """Whether the declaration counts for the target (every one does when it is unknown)."""
        if cfg is None or self.platform is None:
            return True
        try:
            return cfg.applies(self.platform)
        except ValueError:
            return True  # cargo would have rejected an unreadable cfg; keep the site visible


@dataclass(frozen=True)
class Cut:
    """The declaration to edit, and what it declares."""

    site: DeclarationSite
    """Where the location points (a member's entry, or the workspace entry it inherits)."""
    entry: Entry
    """The span: `default-features = false` when that is the cut, else the declaration key."""
    dependency: Node
    """The package declared there (e.g. burn 0.22.1)."""
    disables_defaults: bool
    inheriting: DeclarationSite | None = None
    """The member's own `workspace = true` declaration when `site` is the workspace entry."""

    @classmethod
    def at(
        cls, where: DeclarationSite, site: DeclarationSite, dependency: Node, defaults: bool = True
    ) -> Cut | None:
        """The cut at `where`: the package's own line `site`, or the workspace entry it
        inherits; on `default-features = false` where that is written there and takes effect
        (a `workspace = true` line's own does not) and the `defaults` would deliver, else on the
        key. None where the key has no span."""
        in_workspace_entry = where is not site
        written_off = where.disables_defaults() and (in_workspace_entry or not where.inherits)
        cut_here = defaults and written_off
        written = where.default_features_entry() if cut_here else None
        entry = written[1] if written is not None else where.manifest.spans.get(where.path)
        if entry is None:
            return None
        inheriting = site if in_workspace_entry else None
        return cls(where, entry, dependency, cut_here, inheriting)


def _text(value: Any, key: str) -> str | None:
    """The string `value`'s table holds at `key`, if it is a table and holds one."""
    found = value.get(key) if isinstance(value, dict) else None
    return found if isinstance(found, str) else None


def _package_name(key: str, value: Any) -> str:
    package = _text(value, "package")
    return key if package is None else package


def all_sites(manifest: ManifestDocument, root: ManifestDocument | None) -> list[DeclarationSite]:
    """Every dependency declaration of the manifest: kind by kind, each kind's top-level tables
    before its `[target.X]` tables, in file order within a table.

    `root` is the workspace root manifest: a `workspace = true` declaration gets the
    `[workspace.dependencies]` entry it inherits, whose `package = ...` may rename it.
    """
    targets = manifest.get("target")
    platforms = targets.items() if isinstance(targets, dict) else ()
    sites: list[DeclarationSite] = []
    for kind, names in KIND_TABLES.items():
        tables: list[tuple[KeyPath, Any]] = [((name,), manifest.get(name)) for name in names]
        for platform, platform_table in platforms:
            if isinstance(platform_table, dict):
                tables += [(("target", platform, n), platform_table.get(n)) for n in names]
        for path, table in tables:
            if not isinstance(table, dict):
                continue
            for key, value in table.items():
                inherited = None
                if root is not None and isinstance(value, dict) and value.get("workspace") is True:
                    inherited = workspace_site(root, key)
                package = _package_name(key, value) if inherited is None else inherited.package
                sites.append(
                    DeclarationSite(manifest, (*path, key), package, value, kind, inherited)
                )
    return sites


class Written(NamedTuple):
    """Where a local package's manifest writes its declarations, matched once."""

    sites: list[DeclarationSite]
    """Every declaration written, in the order of `all_sites`."""
    of: dict[Declaration, list[DeclarationSite]]
    """The sites of each of the model's declarations of the package."""


def written_in(
    manifest: ManifestDocument, declarations: tuple[Declaration, ...], root: ManifestDocument | None
) -> Written:
    """Each declaration bound to the sites that write it: the same kind, package and key, in
    a `[target.X]` table exactly when the declaration has a platform (cargo rewrites a cfg's
    spelling, so which table is left to `DeclarationSite.applies`)."""
    sites = all_sites(manifest, root)
    by_key: dict[tuple[DependencyKind, str, str, bool], list[DeclarationSite]] = {}
    for site in sites:
        key = (site.kind, site.package, site.key, site.platform is None)
        by_key.setdefault(key, []).append(site)
    return Written(
        sites, {d: by_key.get((d.kind, d.name, d.key, d.target is None), []) for d in declarations}
    )


def workspace_site(root: ManifestDocument, key: str) -> DeclarationSite | None:
    """The `[workspace.dependencies]` entry a `workspace = true` declaration inherits."""
    table = root.get("workspace", "dependencies")
    if not isinstance(table, dict) or key not in table:
        return None
    value = table[key]
    return DeclarationSite(
        root, ("workspace", "dependencies", key), _package_name(key, value), value, NORMAL
    )
