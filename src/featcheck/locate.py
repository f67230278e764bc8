"""Find the manifest line a user must edit: the declaration that cut a feature off.

A backend crate loses its default features when every declaration on the way to it says
`default-features = false`. Walking the resolved graph from the member towards the backend, the
first declaration the user owns (in a workspace member's or path dependency's manifest) that
turns the defaults off is the place to edit; it may sit in a member's `Cargo.toml` or in the
workspace root's `[workspace.dependencies]`. When no declaration of the user's cuts the
defaults (a third-party crate did), the member's own dependency on the way is the place.
"""

from __future__ import annotations

import os
from collections import deque
from dataclasses import dataclass, replace
from pathlib import Path

from featcheck.cargo import semver
from featcheck.cargo.cfg import TargetCfg
from featcheck.cargo.metadata import DependencyDeclaration, PackageInfo, WorkspaceMetadata
from featcheck.graph import DependencyGraph, Node
from featcheck.manifest.declarations import DeclarationSite, declaration_sites, workspace_site
from featcheck.manifest.document import ManifestDocument, read_manifest
from featcheck.manifest.spans import Entry, Span
from featcheck.report import Edit, Location


@dataclass(frozen=True)
class Cut:
    """The declaration to edit, and what it declares."""

    site: DeclarationSite
    """Where the location points (a member's entry, or the workspace entry it inherits)."""
    entry: Entry
    """The span: `default-features = false` when that is the cut, else the declaration key."""
    dependency: Node
    """The package declared there (e.g. burn 0.22.1)."""
    owner: PackageInfo
    """The local package whose build uses this declaration."""
    disables_defaults: bool
    inheriting: DeclarationSite | None = None
    """The member's own `workspace = true` declaration when `site` is the workspace entry."""


class ManifestCache:
    """Each manifest is read and indexed once per audit."""

    def __init__(self) -> None:
        self._documents: dict[Path, ManifestDocument] = {}
        self._resolved: dict[Path, Path] = {}

    def get(self, path: Path) -> ManifestDocument:
        """The parsed manifest at `path`."""
        resolved = self._resolved.get(path)
        if resolved is None:
            resolved = self._resolved[path] = path.resolve()
        if resolved not in self._documents:
            self._documents[resolved] = read_manifest(resolved)
        return self._documents[resolved]


class Locator:
    """Maps graph nodes to manifests and finds the cut for a finding."""

    def __init__(
        self, metadata: WorkspaceMetadata, audited_root: Path, manifests: ManifestCache
    ) -> None:
        self.metadata = metadata
        self.audited_root = audited_root
        self.manifests = manifests
        self._local = {
            (p.name, p.version, str(p.manifest_path.parent)): p
            for p in metadata.packages.values()
            if not p.is_registry
        }

    def local_package(self, node: Node) -> PackageInfo | None:
        """The metadata of a path package (workspace member or path dependency)."""
        if not node.package.is_local:
            return None
        key = (node.name, node.version, node.package.source or "")
        found = self._local.get(key)
        if found is not None:
            return found
        candidates = [p for (n, v, _), p in self._local.items() if (n, v) == key[:2]]
        return candidates[0] if len(candidates) == 1 else None

    def find_cut(
        self, graph: DependencyGraph, root: Node, backend: Node, cfg: TargetCfg | None
    ) -> Cut | None:
        """The declaration to edit for `backend` as built for the member at `root`."""
        on_the_way = graph.ancestors(backend) | {backend}
        first_link: Cut | None = None
        for owner_node in self._local_nodes_towards(graph, root, on_the_way):
            owner = self.local_package(owner_node)
            if owner is None:
                continue
            for dependency in sorted(graph.dependencies(owner_node)):
                if dependency not in on_the_way:
                    continue
                cut = self._cut_for_link(owner, dependency, cfg)
                if cut is None:
                    continue
                if cut.disables_defaults:
                    return cut
                first_link = first_link or cut
        return first_link

    def _local_nodes_towards(
        self, graph: DependencyGraph, root: Node, on_the_way: set[Node]
    ) -> list[Node]:
        """Local packages that lead to the backend, nearest to the member first."""
        order: list[Node] = []
        seen = {root}
        queue = deque([root])
        while queue:
            node = queue.popleft()
            if node.package.is_local and node in on_the_way:
                order.append(node)
            for dependency in sorted(graph.dependencies(node)):
                if dependency not in seen and dependency in on_the_way:
                    seen.add(dependency)
                    queue.append(dependency)
        return order

    def _declarations(
        self, owner: PackageInfo, dependency: Node, cfg: TargetCfg | None
    ) -> list[DependencyDeclaration]:
        return [
            d
            for d in owner.dependencies
            if d.kind == "normal"
            and d.name == dependency.name
            and (cfg is None or _applies(cfg, d.target))
            and (d.path is not None or semver.matches(d.req, dependency.version))
        ]

    def _cut_for_link(
        self, owner: PackageInfo, dependency: Node, cfg: TargetCfg | None
    ) -> Cut | None:
        declarations = self._declarations(owner, dependency, cfg)
        if not declarations:
            return None
        # Defaults stay on if any declaration on this edge keeps them.
        disables = all(not d.uses_default_features for d in declarations)
        manifest = self.manifests.get(owner.manifest_path)
        root = self.workspace_root_manifest()
        sites = declaration_sites(manifest, "normal", dependency.name, cfg, root)
        sites = [s for s in sites if self.site_matches(s, root, dependency)] or sites
        if not sites:
            return None
        sites.sort(key=lambda s: _line_of(s))
        site = sites[0]
        if disables:
            for candidate in (site, self._inherited(site, root)):
                if candidate is None:
                    continue
                written = candidate.default_features_entry()
                if written is not None and candidate.disables_defaults():
                    inheriting = site if candidate is not site else None
                    return Cut(candidate, written[1], dependency, owner, True, inheriting)
        entry = site.key_entry()
        if entry is None:
            return None
        return Cut(site, entry, dependency, owner, disables)

    def workspace_root_manifest(self) -> ManifestDocument | None:
        path = self.metadata.root / "Cargo.toml"
        return self.manifests.get(path) if path.is_file() else None

    @staticmethod
    def _inherited(site: DeclarationSite, root: ManifestDocument | None) -> DeclarationSite | None:
        if not site.inherits or root is None:
            return None
        return workspace_site(root, site.key)

    def site_matches(
        self, site: DeclarationSite, root: ManifestDocument | None, dependency: Node
    ) -> bool:
        source = self._inherited(site, root) or site
        if source.local_path is not None:
            return True
        version = source.version
        return version is None or semver.matches(version, dependency.version)

    def place(self, edit: Edit) -> Edit:
        """The edit with its file (relative to the audited root) and declaration line filled."""
        relative = os.path.relpath(edit.manifest, self.audited_root).replace(os.sep, "/")
        line = 0
        if edit.action != "add-dependency":
            entry = self.manifests.get(edit.manifest).entry(edit.declaration)
            line = entry.key.line if entry is not None else 0
        return replace(edit, file=relative, line=line)

    def location(self, cut: Cut) -> Location:
        """The cut's span as a Location relative to the audited root."""
        return self._span_location(cut.site, cut.entry.key, cut.entry.value or cut.entry.key)

    def declaration(self, cut: Cut) -> Location | None:
        """The whole declaration the cut lies in: its key (or table header) to its last value."""
        return self._declaration_of(cut.site)

    def inheriting_declaration(self, cut: Cut) -> Location | None:
        """The member's `burn = { workspace = true }` line, when the cut is inherited."""
        return self._declaration_of(cut.inheriting) if cut.inheriting is not None else None

    def member_declarations(
        self,
        member: PackageInfo,
        graph: DependencyGraph,
        root: Node,
        crate: Node,
        cfg: TargetCfg | None,
    ) -> tuple[Location, ...]:
        """The member's own declarations of its dependencies on the way to `crate`."""
        on_the_way = graph.ancestors(crate) | {crate}
        manifest = self.manifests.get(member.manifest_path)
        workspace = self.workspace_root_manifest()
        found: list[Location] = []
        for dependency in sorted(graph.dependencies(root) & on_the_way):
            for site in declaration_sites(manifest, "normal", dependency.name, cfg, workspace):
                if self.site_matches(site, workspace, dependency):
                    location = self._declaration_of(site)
                    if location is not None:
                        found.append(location)
        return tuple(found)

    def _declaration_of(self, site: DeclarationSite) -> Location | None:
        start = site.key_entry()
        if start is None:
            return None
        depth = len(site.path)
        inside = [e for p, e in site.manifest.spans.items() if p[:depth] == site.path]
        end = max((e.value or e.key for e in inside), key=lambda s: (s.end_line, s.end_column))
        return self._span_location(site, start.key, end)

    def _span_location(self, site: DeclarationSite, start: Span, end: Span) -> Location:
        relative = os.path.relpath(site.manifest.path, self.audited_root)
        return Location(
            file=relative.replace(os.sep, "/"),
            line=start.line,
            column=start.column,
            end_line=end.end_line,
            end_column=end.end_column,
            source_line=site.manifest.line_text(start.line),
        )


def _applies(cfg: TargetCfg, platform: str | None) -> bool:
    try:
        return cfg.applies(platform)
    except ValueError:
        return True


def _line_of(site: DeclarationSite) -> int:
    entry = site.key_entry()
    return entry.key.line if entry is not None else 0
