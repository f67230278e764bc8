"""What every rule is: a code, a name, a default severity, its doc text, and a check.

A rule is one file in this package plus an entry in `ALL_RULES`. Most rules have the same shape
— "crate X is built without feature F although the build uses it" — and subclass
`MissingFeatureRule`, which needs only the crate names, the feature, and when the crate counts
as used.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections import deque
from dataclasses import dataclass, field

from featcheck.graph import DependencyGraph, Node
from featcheck.report import Severity


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

    def target_nodes(self) -> set[Node]:
        """Nodes compiled for the target: proc-macros and what only they use run on the host."""
        if not self.structured:
            return set(self.graph.nodes())
        seen: set[Node] = set()
        queue = deque(r for r in self.roots if not r.proc_macro)
        seen.update(queue)
        while queue:
            for dependency in self.graph.dependencies(queue.popleft()):
                if dependency not in seen and not dependency.proc_macro:
                    seen.add(dependency)
                    queue.append(dependency)
        return seen


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


@dataclass(frozen=True)
class RuleDoc:
    """The fixed sections of a rule's documentation (`featcheck rule CODE`, docs/rules.md)."""

    what: str
    """What it checks."""
    why: str
    """Why it matters, with the measured numbers and their source."""
    example: str
    """A manifest that triggers it (TOML)."""
    fix: str
    """The change to make (prose, then TOML where it helps)."""
    ignore: str
    """When to ignore it, and how."""

    @property
    def why_line(self) -> str:
        """The why-section on one line, as findings quote it."""
        return " ".join(self.why.split())


class Rule(ABC):
    """A check with a stable code; subclasses fill in the class attributes and `detect`."""

    code: str
    """Stable code, never reused, e.g. `FC001`."""
    name: str
    """kebab-case name, e.g. `flex-without-rayon`."""
    severity: Severity
    """Default severity for binaries; library-only members get INFO."""
    summary: str
    """One line: what the rule checks."""
    doc: RuleDoc
    enabled_by_default: bool = True
    """Hints are opt-in (`--select`), so that a project with nothing wrong stays silent."""
    companions: tuple[str, ...] = ()
    """Features the fix also adds where they are missing (FC001 adds `simd` with `rayon`)."""

    @property
    def why(self) -> str:
        """The doc's why-section, as findings quote it."""
        return self.doc.why_line

    @abstractmethod
    def detect(self, view: BuildView) -> list[Detection]:
        """Every node of this build that the rule flags."""


class MissingFeatureRule(Rule):
    """Flags nodes of `crates` built without `feature` when `in_use` says the build uses them."""

    crates: tuple[str, ...]
    feature: str
    consequence: str
    """What the missing feature costs, completing "X is built without `F`: ..."."""

    def applies_to(self, target: str | None) -> bool:
        """Whether the rule means anything for this target (None: unknown target)."""
        return True

    def missing_feature(self, node: Node) -> str:
        """The feature this node needs (a rule may depend on the crate's version)."""
        return self.feature

    @abstractmethod
    def in_use(self, view: BuildView, node: Node) -> str | None:
        """Why the build uses this node (the finding's evidence), or None if it does not."""

    def detect(self, view: BuildView) -> list[Detection]:
        if not self.applies_to(view.target):
            return []
        found: list[Detection] = []
        for node in sorted(view.target_nodes()):
            feature = self.missing_feature(node)
            if node.name not in self.crates or feature in node.features:
                continue
            evidence = self.in_use(view, node)
            if evidence is None:
                continue
            notes = () if view.structured else (UNKNOWN_SELECTION,)
            message = f"{node.name} {node.version} is built without `{feature}`: {self.consequence}"
            found.append(Detection(node, feature, message, evidence, notes))
        return found


UNKNOWN_SELECTION = (
    "the saved tree shows no dependents of this crate, so featcheck cannot tell whether it is "
    "the selected backend; save the full tree (without --depth, with a --prefix) to know"
)
