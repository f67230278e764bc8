"""Where things are written: manifests read once, declarations bound to their sites before
resolution, spans and locations.

Which declaration a finding points at is decided by resolution (`fixes/search.py`: the edit
that makes cargo's resolution deliver the feature); this module turns that declaration into the
lines and columns a report shows, and says where the member's own declarations sit.
"""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path

from featcheck.boundary import MAX_MANIFEST_BYTES, decode_text, is_inside, read_checkout_file
from featcheck.graph import Node
from featcheck.manifest.crate_root import NoStd, read_no_std
from featcheck.manifest.declarations import Cut, DeclarationSite, written_in
from featcheck.manifest.document import ManifestDocument, parse_text
from featcheck.manifest.spans import KeyPath, Span, declaration_end
from featcheck.report import Edit, Location
from featcheck.semantics.cfg import TargetCfg
from featcheck.workspace.model import NORMAL, Declaration, Package
from featcheck.workspace.workspace import Workspace


class ManifestCache:
    """Each manifest is read and parsed once per audit."""

    def __init__(self, checkout: Path | None = None) -> None:
        self.checkout = checkout
        """The root of the audited checkout: no manifest is read through a link out of it."""
        self._documents: dict[Path, ManifestDocument] = {}
        self._resolved: dict[Path, Path] = {}
        self._no_std: dict[Path, NoStd] = {}

    def get(self, path: Path) -> ManifestDocument:
        key = self._resolved.get(path)
        if key is None:
            key = self._resolved[path] = path.resolve()
        document = self._documents.get(key)
        if document is None:
            # Read by the name it was given, which boundary.py resolves link by link.
            raw = read_checkout_file(path, path.name, MAX_MANIFEST_BYTES, self.checkout)
            document = self._documents[key] = parse_text(key, decode_text(raw, path))
        return document

    def no_std(self, path: Path) -> NoStd:
        """When the crate root at `path` is no_std, read once per audit: the members' own
        `src/lib.rs` and `src/main.rs` while cargo works, as their manifests are."""
        known = self._no_std.get(path)
        if known is None:
            known = self._no_std[path] = read_no_std(path, self.checkout)
        return known


def bind_declarations(metadata: Workspace, manifests: ManifestCache) -> Workspace:
    """The model with each local package's declarations bound to where its manifest writes
    them (members and path dependencies: all a finding points at), each site with the
    workspace entry it inherits: matched once, before resolution, for cargo's model and the
    files' alike. A package `--no-exec` left unread stays unbound (it declares nothing), and
    so does a path package outside the checkout: cargo reads it, featcheck neither quotes nor
    edits it (a finding points at the checkout's line that brings it)."""
    root_path = metadata.root / "Cargo.toml"
    root = manifests.get(root_path) if root_path.is_file() else None
    checkout = manifests.checkout
    return replace(
        metadata,
        written={
            package.id: written_in(manifests.get(package.manifest_path), package.declarations, root)
            for package in metadata.unpublished()
            if package.ref.is_local and package.id not in metadata.unread
            if checkout is None or is_inside(package.manifest_path, checkout)
        },
    )


class Locator:
    """Maps declarations to locations in the manifests, relative to the report root: a
    finding's declarations are looked up where the model bound them (`bind_declarations`),
    never read or matched again.
    """

    def __init__(self, metadata: Workspace, report_root: Path, manifests: ManifestCache) -> None:
        self.metadata = metadata
        self.report_root = report_root
        self.manifests = manifests
        self._relative_paths: dict[Path, str] = {}
        self._declarations: dict[tuple[Path, KeyPath], Location | None] = {}

    def _relative(self, manifest: Path) -> str:
        """`manifest` relative to the report root with `/` (asked for every edit and span)."""
        relative = self._relative_paths.get(manifest)
        if relative is None:
            relative = os.path.relpath(manifest, self.report_root).replace(os.sep, "/")
            self._relative_paths[manifest] = relative
        return relative

    def place(self, edit: Edit) -> Edit:
        """The edit with its file (relative to the report root) and declaration line filled."""
        relative = self._relative(edit.manifest)
        line = 0
        if not edit.adds_declaration:
            entry = self.manifests.get(edit.manifest).spans.get(edit.declaration)
            line = entry.key.line if entry is not None else 0
        return replace(edit, file=relative, line=line)

    def location(self, cut: Cut) -> Location:
        return self._span_location(cut.site, cut.entry.key, cut.entry.value or cut.entry.key)

    def declared_sites(
        self, package: Package, dependency: Node, cfg: TargetCfg | None
    ) -> list[DeclarationSite]:
        """A local package's (a member's, a path dependency's) normal declarations of
        `dependency` that apply to `cfg`, in file order: where the declarations bound to its
        edges to it are written."""
        written = self.metadata.written.get(package.id)
        if written is None:
            return []
        bound = self.bound_declarations(package, dependency)
        paths = {site.path for declaration in bound for site in written.of[declaration]}
        return [site for site in written.sites if site.path in paths and site.applies(cfg)]

    def bound_declarations(self, package: Package, dependency: Node) -> list[Declaration]:
        """The package's normal declarations the resolution bound to its edge to `dependency`."""
        target = self.metadata.package_of(dependency.package)
        if target is None:
            return []
        return [
            edge.declaration
            for edge in package.edges
            if edge.dep == target.index and edge.kind is NORMAL and edge.declaration is not None
        ]

    def inheriting_sites(self, entry: DeclarationSite) -> list[tuple[Package, DeclarationSite]]:
        """Every member line `KEY = { workspace = true }` that inherits the workspace entry at
        `entry`: the lines an edit of the entry changes too."""
        return [
            (member, site)
            for member in self.metadata.members
            for site in self.metadata.written[member.id].sites
            if site.inherits and site.key == entry.key
        ]

    def declaration_of(self, site: DeclarationSite | None) -> Location | None:
        """The whole declaration at `site`: its key (or table header) to its last value."""
        if site is None:
            return None
        key = (site.manifest.path, site.path)
        if key not in self._declarations:
            start, found = site.manifest.spans.get(site.path), None
            if start is not None:
                end = declaration_end(site.manifest.spans, site.path)
                found = self._span_location(site, start.key, end)
            self._declarations[key] = found
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
