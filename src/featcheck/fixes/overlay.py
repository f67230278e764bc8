"""The one cargo check a run may need: fixes that turn on dependencies Cargo.lock lacks.

Resolution in memory answers every candidate whose packages the lockfile already holds. An edit
that turns on an optional dependency nothing in the workspace used before (dropping burn
0.20's `default-features = false` brings `rayon`) needs cargo to pick that dependency's version
first. Those fixes, for all findings of the run together, are written into one temporary copy
of the workspace, cargo metadata runs there once, and the resolver answers again over what it
printed. The user's files are never touched.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from featcheck.cargo.cfg import TargetCfg
from featcheck.cargo.metadata import PackageInfo, WorkspaceMetadata
from featcheck.errors import FeatcheckError
from featcheck.featureset import DEFAULT, FeatureSelection
from featcheck.fixes.apply import plan_edits
from featcheck.graph import DependencyGraph, PackageRef
from featcheck.report import Edit
from featcheck.resolution import resolve_builds

_NOT_COPIED = shutil.ignore_patterns("target", ".git", ".hg", ".jj", "node_modules", ".venv")


@dataclass(frozen=True)
class Pending:
    """A fix that only cargo can confirm, for one member's build on one target."""

    member: PackageInfo
    target: str
    crate: PackageRef
    edits: tuple[Edit, ...]
    selection: FeatureSelection = DEFAULT


StillFlagged = Callable[[PackageInfo, str, DependencyGraph, PackageRef], bool]


@dataclass
class OverlayCheck:
    """Confirms pending fixes with one `cargo metadata` over one edited copy."""

    workspace_root: Path
    metadata_of: Callable[[Path], WorkspaceMetadata]
    """Runs cargo metadata for the manifest at the given path (the audit's cargo settings)."""
    cfgs: dict[str, TargetCfg]
    host: TargetCfg
    resolver: int
    still_flagged: StillFlagged

    def confirm(self, pending: Sequence[Pending]) -> tuple[list[bool], str]:
        """For each pending fix whether cargo's resolution of the copy clears its finding;
        and, when the copy could not be resolved at all, why."""
        if not pending:
            return [], ""
        with tempfile.TemporaryDirectory(prefix="featcheck-fix-") as temporary:
            copy = Path(temporary) / "workspace"
            try:
                shutil.copytree(self.workspace_root, copy, ignore=_NOT_COPIED, symlinks=True)
                edits = [self._moved(e, copy) for p in pending for e in p.edits]
                for change in plan_edits(edits):
                    change.path.write_text(change.updated, encoding="utf-8")
                metadata = self.metadata_of(copy / "Cargo.toml")
            except ValueError:
                return [False] * len(pending), "a manifest to edit lies outside the workspace"
            except (OSError, FeatcheckError) as error:
                return [False] * len(pending), f"cargo could not resolve the fixed copy: {error}"
        return [self._cleared(metadata, p) for p in pending], ""

    def _moved(self, edit: Edit, copy: Path) -> Edit:
        relative = edit.manifest.resolve().relative_to(self.workspace_root.resolve())
        return Edit(copy / relative, edit.declaration, edit.action, edit.features, edit.version)

    def _cleared(self, metadata: WorkspaceMetadata, pending: Pending) -> bool:
        # Path packages have other ids in the copy: find the member by name and version.
        member = next(
            (
                m
                for m in metadata.members
                if (m.name, m.version) == (pending.member.name, pending.member.version)
            ),
            None,
        )
        if member is None:
            return False
        graphs = resolve_builds(
            metadata.raw,
            [member.id],
            [self.cfgs[pending.target]],
            self.resolver,
            host=self.host,
            features=pending.selection,
            index=metadata.index,
        )
        graph = graphs[(member.id, pending.target)]
        crate = pending.crate
        if crate.is_local:
            # The copy's path packages print another directory; name and version identify.
            same = [n.package for n in graph.nodes() if n.name == crate.name]
            crate = next((s for s in same if s.version == crate.version), crate)
        return not self.still_flagged(pending.member, pending.target, graph, crate)
