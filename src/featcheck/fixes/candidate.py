"""One candidate fix, as the candidate finders make it and the search ranks it."""

from __future__ import annotations

from dataclasses import dataclass

from featcheck.fixes.counterfactual import MoreFeatures, NewDependency
from featcheck.locate import Cut
from featcheck.report import Edit
from featcheck.workspace.model import PackageRef


@dataclass(frozen=True, eq=False)
class Candidate:
    """One candidate fix: its edits, the same edits in the resolver's model, and its rank."""

    edits: tuple[Edit, ...]
    model: frozenset[MoreFeatures | NewDependency]
    proximity: tuple[int, int, int]
    """(new dependency, how far the declaring package is from the member, how far the
    declared package is from the crate): smaller is nearer."""
    written_at_cut: bool
    """The edit goes where `default-features = false` takes effect, or into the workspace
    entry every `workspace = true` line inherits."""
    size: int
    cut: Cut
    """The declaration the finding points at when this candidate wins."""
    touches: frozenset[PackageRef]
    """Packages whose declarations change: only builds holding one can change."""
