"""What a rule sees (one member's resolved build on one target) and what it reports."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

from featcheck.graph import DependencyGraph, Node
from featcheck.semantics.cfg import TargetCfg
from featcheck.severity import Severity


@dataclass(frozen=True)
class BuildView:
    """One member's resolved build on one target, as a rule sees it."""

    graph: DependencyGraph
    roots: tuple[Node, ...]
    """The member (or, for saved tree text, the top-level packages)."""
    structured: bool = True
    """False when the edges are unknown (`--prefix none`, `--depth 0`): only features are."""
    target: str | None = None
    """The target triple; None for saved tree text."""
    cfg: TargetCfg | None = None
    """The target's cfg values, where known (what it provides: std, threads)."""

    def target_nodes(self) -> frozenset[Node]:
        """Nodes compiled for the target: proc-macros and what only they use run on the host."""
        return self._target_nodes

    @cached_property
    def _target_nodes(self) -> frozenset[Node]:
        # Once per build: every rule asks, and a workspace has hundreds of builds.
        if not self.structured:
            return frozenset(self.graph.nodes())
        return self.graph.target_side(self.roots)


@dataclass(frozen=True)
class Detection:
    """A rule's raw verdict on one node, before it is placed in a manifest."""

    node: Node
    feature: str
    """The missing feature."""
    message: str
    evidence: str = ""
    """Why the rule considers the crate in use (e.g. which feature selects the backend)."""
    notes: tuple[str, ...] = field(default_factory=tuple)
    severity: Severity | None = None
    """The rule's severity for this case, where it differs from the default (a crate that only
    third-party crates bring in); None: the rule's default."""
    deferred_to: tuple[str, ...] = ()
    """The rule's `requires` features the crate lacks: the finding stands only where no finding
    of the same crate for one of them does (FC003 without `rayon` leaves the crate to FC001,
    whose fix adds `simd` too, unless FC001 is ignored or suppressed)."""


UNKNOWN_SELECTION = (
    "the saved tree shows no dependents of this crate, so featcheck cannot tell whether it is "
    "the selected backend; save the full tree (without --depth, with a --prefix) to know"
)
