"""Confirm a fix the only way that counts: let cargo resolve it on a temporary copy.

The workspace is copied (without build output and VCS data), the edits are applied to the copy,
and `cargo tree -e normal -p MEMBER --target T` must show the missing feature on the crate. Only
then is a fix called safe. The user's files are never touched here.
"""

from __future__ import annotations

import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from featcheck.cargo.metadata import PackageInfo
from featcheck.cargo.runner import CargoRunner
from featcheck.cargo.tree_text import TreeTextError, parse_tree_text
from featcheck.errors import FeatcheckError
from featcheck.featureset import DEFAULT, FeatureSelection
from featcheck.fixes.edits import EditError, apply_edit
from featcheck.graph import Node
from featcheck.report import Edit

_NOT_COPIED = shutil.ignore_patterns("target", ".git", ".hg", ".jj", "node_modules", ".venv")


@dataclass
class FixConfirmer:
    """Confirms fixes for one workspace; cargo runs as the audit's runner does."""

    workspace_root: Path
    offline: bool = False
    timeout: float = 300.0
    trust_checkout: bool = False

    def confirm(
        self,
        edits: tuple[Edit, ...],
        member: PackageInfo,
        target: str,
        node: Node,
        feature: str,
        features: FeatureSelection = DEFAULT,
    ) -> tuple[bool, str]:
        """(True, "") when cargo resolves `feature` on `node` after the edits, in the build
        configuration `features` the finding belongs to; else a reason."""
        with tempfile.TemporaryDirectory(prefix="featcheck-fix-") as temporary:
            copy = Path(temporary) / "workspace"
            try:
                shutil.copytree(self.workspace_root, copy, ignore=_NOT_COPIED, symlinks=True)
                for edit in edits:
                    relative = edit.manifest.resolve().relative_to(self.workspace_root.resolve())
                    manifest = copy / relative
                    manifest.write_text(
                        apply_edit(manifest.read_text(encoding="utf-8"), edit), encoding="utf-8"
                    )
            except ValueError:
                return False, "the manifest to edit lies outside the workspace"
            except (OSError, EditError) as error:
                return False, f"could not prepare the check: {error}"
            runner = CargoRunner(
                copy, offline=self.offline, timeout=self.timeout, trust_checkout=self.trust_checkout
            )
            try:
                text = runner.tree(
                    copy / "Cargo.toml",
                    f"{member.name}@{member.version}",
                    target,
                    features=features,
                )
                graph = parse_tree_text(text).graph
            except (FeatcheckError, TreeTextError) as error:
                return False, f"cargo could not resolve the edited copy: {error}"
        if any(n.version == node.version and feature in n.features for n in graph.named(node.name)):
            return True, ""
        return False, f"cargo still builds {node.name} {node.version} without `{feature}`"
