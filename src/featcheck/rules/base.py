"""What every rule is: a code, a name, a default severity, and a check over one build."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections import deque
from dataclasses import dataclass, field

from featcheck.findings import Severity
from featcheck.graph import DependencyGraph, Node


@dataclass(frozen=True)
class BuildView:
    """One member's resolved build on one target, as a rule sees it."""

    graph: DependencyGraph
    roots: tuple[Node, ...]
    """The member (or, for saved tree text, the top-level packages)."""
    structured: bool = True
    """False when the edges are unknown (`--prefix none`, `--depth 0`): only features are."""

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
    why: str
    """Why it matters, with measured numbers and their source."""

    @abstractmethod
    def detect(self, view: BuildView) -> list[Detection]:
        """Every node of this build that the rule flags."""
