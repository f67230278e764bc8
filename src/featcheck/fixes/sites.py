"""Declarations a fix meets: the member's own line nearest to the crate, and the lines that
inherit a `[workspace.dependencies]` entry."""

from __future__ import annotations

from collections.abc import Iterator

from featcheck.graph import DependencyGraph, Node
from featcheck.locate import Cut, Locator
from featcheck.manifest.declarations import DeclarationSite, declaration_sites, workspace_site
from featcheck.semantics.cfg import TargetCfg
from featcheck.workspace.model import Package
from featcheck.workspace.workspace import Workspace


def anchor(
    locator: Locator,
    member: Package,
    cfg: TargetCfg,
    graph: DependencyGraph,
    distance: dict[Node, int],
    root: Node | None = None,
) -> Cut | None:
    """The member's own declaration nearest to the crate: where a finding points when the
    fix is a new dependency, or when no fix is found. `root`: the member's node, where the
    graph is another member's build (a library on the way); its first node by default."""
    root = root if root is not None else next(graph.nodes())
    root_doc = locator.workspace_root_manifest()
    for declared in sorted(graph.dependencies(root), key=lambda n: (distance.get(n, -1), n)):
        if declared not in distance:
            continue
        for site in locator.declared_sites(member, declared, cfg):
            inherited = (
                workspace_site(root_doc, site.key)
                if site.inherits and root_doc is not None
                else None
            )
            where = inherited if inherited is not None and inherited.disables_defaults() else site
            cut_here = where.disables_defaults() and (where is inherited or not where.inherits)
            written = where.default_features_entry() if cut_here else None
            entry = written[1] if written is not None else where.key_entry()
            if entry is None:
                continue
            return Cut(
                where,
                entry,
                declared,
                member,
                cut_here,
                inheriting=site if where is inherited else None,
            )
    return None


def inheriting_lines(
    metadata: Workspace, locator: Locator, where: DeclarationSite
) -> Iterator[tuple[Package, DeclarationSite]]:
    """Every member line `KEY = { workspace = true }` that inherits the entry at `where`."""
    root_doc = where.manifest
    for member in metadata.members:
        if not any(d.name == where.package for d in member.declarations):
            continue  # cargo's metadata lists every declaration: no line to read
        if not _may_inherit(locator.manifests.text(member.manifest_path), where.key):
            continue  # most members of a large workspace are not parsed at all
        manifest = locator.manifests.get(member.manifest_path)
        for kind in ("normal", "dev", "build"):
            for line in declaration_sites(manifest, kind, where.package, None, root_doc):
                if line.inherits and line.key == where.key:
                    yield member, line


def _may_inherit(text: str, key: str) -> bool:
    """Whether a manifest's text can hold `KEY = { workspace = true }` (in any of its shapes):
    both words are written out, unless escapes in a quoted key spell them, and every TOML
    escape starts with a backslash."""
    return "\\" in text or ("workspace" in text and key in text)
