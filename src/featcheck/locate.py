"""Where things are written: manifests read once, declaration sites, spans and locations.

Which declaration a finding points at is decided by resolution (`fixes/search.py`: the edit
that makes cargo's resolution deliver the feature); this module turns that declaration into the
lines and columns a report shows, and says where the member's own declarations sit.
"""

from __future__ import annotations

import functools
import os
from dataclasses import replace
from pathlib import Path

from featcheck.graph import Node
from featcheck.manifest.declarations import Cut, DeclarationSite, all_sites
from featcheck.manifest.document import ManifestDocument, parse_text, read_manifest_text
from featcheck.manifest.spans import KeyPath, Span, declaration_end
from featcheck.report import Edit, Location
from featcheck.semantics import semver
from featcheck.semantics.cfg import TargetCfg
from featcheck.workspace.model import NORMAL, Declaration, Package
from featcheck.workspace.workspace import Workspace


class ManifestCache:
    """Each manifest is read once per audit, and parsed only when something asks for its data
    (a large workspace's unflagged members are only scanned for `# featcheck:` comments)."""

    def __init__(self, checkout: Path | None = None) -> None:
        self.checkout = checkout
        """The root of the audited checkout: no manifest is read through a link out of it."""
        self._documents: dict[Path, ManifestDocument] = {}
        self._texts: dict[Path, str] = {}
        self._resolved: dict[Path, Path] = {}

    def _key(self, path: Path) -> Path:
        resolved = self._resolved.get(path)
        if resolved is None:
            resolved = self._resolved[path] = path.resolve()
        return resolved

    def get(self, path: Path) -> ManifestDocument:
        """The parsed manifest at `path`."""
        key = self._key(path)
        if key not in self._documents:
            self._documents[key] = parse_text(key, self.text(path))
            del self._texts[key]  # the document keeps the text
        return self._documents[key]

    def text(self, path: Path) -> str:
        """The text of the manifest at `path`, parsed or not."""
        key = self._key(path)
        document = self._documents.get(key)
        if document is not None:
            return document.text
        if key not in self._texts:
            # Read by the name it was given, which boundary.py resolves link by link.
            self._texts[key] = read_manifest_text(path, root=self.checkout)
        return self._texts[key]


class Locator:
    """Maps declarations to locations in the manifests, relative to the report root.

    Each local package's manifest is walked once for its declarations (`sites`), each with
    the workspace entry it inherits; a finding's declarations, locations and edit lines are
    then looked up in them, never read or matched again.
    """

    def __init__(self, metadata: Workspace, report_root: Path, manifests: ManifestCache) -> None:
        self.metadata = metadata
        self.report_root = report_root
        self.manifests = manifests
        self._relative_paths: dict[Path, str] = {}
        self._declarations: dict[tuple[Path, KeyPath], Location | None] = {}
        self._inheriting: dict[tuple[Path, str], list[tuple[Package, DeclarationSite]]] = {}

    def _relative(self, manifest: Path) -> str:
        """`manifest` relative to the report root with `/` (asked for every edit and span)."""
        relative = self._relative_paths.get(manifest)
        if relative is None:
            relative = os.path.relpath(manifest, self.report_root).replace(os.sep, "/")
            self._relative_paths[manifest] = relative
        return relative

    @functools.cached_property
    def workspace_root_manifest(self) -> ManifestDocument | None:
        """The workspace root's manifest (None without one), looked up once: every finding
        asks for it."""
        path = self.metadata.root / "Cargo.toml"
        return self.manifests.get(path) if path.is_file() else None

    def sites(self, package: Package) -> list[DeclarationSite]:
        """Every declaration written in a local package's manifest, each with the workspace
        entry it inherits: walked on first use (most members of a large workspace have no
        finding), then looked up."""
        manifest = self.manifests.get(package.manifest_path)
        return all_sites(manifest, self.workspace_root_manifest)

    def place(self, edit: Edit) -> Edit:
        """The edit with its file (relative to the report root) and declaration line filled."""
        relative = self._relative(edit.manifest)
        line = 0
        if not edit.adds_declaration:
            entry = self.manifests.get(edit.manifest).entry(edit.declaration)
            line = entry.key.line if entry is not None else 0
        return replace(edit, file=relative, line=line)

    def location(self, cut: Cut) -> Location:
        """The cut's span as a Location relative to the report root."""
        return self._span_location(cut.site, cut.entry.key, cut.entry.value or cut.entry.key)

    def declared_sites(
        self, package: Package, dependency: Node, cfg: TargetCfg | None
    ) -> list[DeclarationSite]:
        """A local package's (a member's, a path dependency's) normal declarations of
        `dependency` that apply to `cfg`, in file order: those the resolution bound to the
        edge to it, else (a graph from `cargo tree` text has no ids) those of its package
        whose requirement its version meets."""
        sites = [
            site
            for site in self.sites(package)
            if site.kind is NORMAL and site.package == dependency.name and site.applies(cfg)
        ]
        bound = self.bound_declarations(package, dependency)
        if not bound:
            return [site for site in sites if _requirement_met(site, dependency)]
        # Where a bound declaration is written: the same key, in a `[target.X]` table exactly
        # when the declaration has a platform (cargo rewrites the cfg's spelling).
        written = {(d.key, d.target is None) for d in bound}
        return [site for site in sites if (site.key, site.platform is None) in written]

    def bound_declarations(self, package: Package, dependency: Node) -> list[Declaration]:
        """The package's normal declarations the resolution bound to its edge to
        `dependency`; none where the graph carries no ids (`cargo tree` text)."""
        # The package as this workspace holds it (the audit may have read metadata again).
        known = self.metadata.get(package.id)
        position = self.metadata.by_id.get(dependency.package.id or "")
        if known is None or position is None:
            return []
        return [
            edge.declaration
            for edge in known.edges
            if edge.dep == position and edge.kind is NORMAL and edge.declaration is not None
        ]

    def inheriting_sites(self, entry: DeclarationSite) -> list[tuple[Package, DeclarationSite]]:
        """Every member line `KEY = { workspace = true }` that inherits the workspace entry at
        `entry`: the lines an edit of the entry changes too (asked by every finding whose fix
        edits it, so gathered once)."""
        found = self._inheriting.get((entry.manifest.path, entry.key))
        if found is not None:
            return found
        found = self._inheriting[(entry.manifest.path, entry.key)] = []
        for member in self.metadata.members:
            if not any(d.name == entry.package for d in member.declarations):
                continue  # cargo's metadata lists every declaration: no line to read
            # Most members of a large workspace are not parsed at all: a text that holds
            # `KEY = { workspace = true }` (in any of its shapes) writes both words out, unless
            # escapes in a quoted key spell them, and every TOML escape starts with a backslash.
            text = self.manifests.text(member.manifest_path)
            if "\\" not in text and ("workspace" not in text or entry.key not in text):
                continue
            found += [(member, s) for s in self.sites(member) if s.inherits and s.key == entry.key]
        return found

    def declaration_of(self, site: DeclarationSite | None) -> Location | None:
        """The whole declaration at `site`: its key (or table header) to its last value."""
        if site is None:
            return None
        key = (site.manifest.path, site.path)
        if key not in self._declarations:
            start = site.key_entry()
            self._declarations[key] = (
                None
                if start is None
                else self._span_location(
                    site, start.key, declaration_end(site.manifest.spans, site.path)
                )
            )
        return self._declarations[key]

    def _span_location(self, site: DeclarationSite, start: Span, end: Span) -> Location:
        return Location(
            file=self._relative(site.manifest.path),
            line=start.line,
            column=start.column,
            end_line=end.end_line,
            end_column=end.end_column,
            source_line=site.manifest.line_text(start.line),
        )


def _requirement_met(site: DeclarationSite, dependency: Node) -> bool:
    """Whether the package at `dependency` can be what `site` declares (a path, or a
    requirement its version meets, written there or in the entry it inherits)."""
    source = site.inherited or site
    if source.local_path is not None:
        return True
    return source.version is None or semver.matches(source.version, dependency.version)
