"""Which verdicts a `--no-exec` audit could not see all of, and why.

An unread package (see `noexec.metadata`) resolves as a library with no features and no
dependencies. Every declaration that would have pointed at it is known (its dependents were
read), so the resolver decides exactly whether a build reaches it: one that no build reaches —
an optional dependency nothing enables, a package for another platform — changes nothing and is
simply absent. One that a build does reach may, through its own unseen declarations, turn on
features of anything below it in Cargo.lock, and bring in packages the build does not show.
Since features only ever add up, everything *outside* that reach is resolved exactly; inside
it, a finding may be cleared by the unseen declarations (its confidence is `incomplete`), and a
clean verdict holds only if no crate a rule checks lies there.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, cast

from featcheck.cargo.failures import printable
from featcheck.graph import closure
from featcheck.report import BuildGap
from featcheck.severity import plural
from featcheck.workspace.model import crate_key

OUTSIDE = "a path outside the workspace root, which --no-exec does not read"
GIT = "a git dependency, which --no-exec does not read"
NOT_FOUND = "a path package no manifest leads to"
_NOT_FETCHED = frozenset({OUTSIDE, GIT, NOT_FOUND})
"""Why a package is unread where `cargo fetch` changes nothing: only cargo itself reads it."""

if TYPE_CHECKING:
    from featcheck.graph import DependencyGraph
    from featcheck.noexec.metadata import FilePackages
    from featcheck.rules import Rule
    from featcheck.workspace.model import Package, PackageRef
    from featcheck.workspace.workspace import Workspace


@dataclass(frozen=True)
class BuildReach:
    """What unread packages may change in one build."""

    unread_nodes: frozenset[PackageRef]
    """Unread packages in the build: nothing is known of their features."""
    uncertain: frozenset[PackageRef]
    """Packages whose features or presence unread packages may change."""
    gap: BuildGap | None
    """Set when a rule that ran checks a crate among `uncertain`."""


class Completeness:
    """What the unread packages of a --no-exec audit may change, per build."""

    def __init__(self, metadata: Workspace, resolver: int) -> None:
        self.unread = dict(metadata.unread)
        self.resolver = resolver
        self.refs: dict[str, PackageRef] = {}
        self.below: dict[str, tuple[str, ...]] = {}
        if self.unread:  # else nothing to index
            # Only the files source leaves packages unread, and its table is FilePackages.
            table = cast("FilePackages", metadata.packages)
            self.refs, self.below = table.refs(), table.resolved_dependencies()
        self.unread_refs = {self.refs[i]: i for i in self.unread if i in self.refs}

    def _below(self, package_id: str) -> tuple[str, ...]:
        return self.below.get(package_id, ())

    def reach(
        self, graph: DependencyGraph, member: Package, target: str, rules: Iterable[Rule]
    ) -> BuildReach:
        if not self.unread:
            return BuildReach(frozenset(), frozenset(), None)
        if self.resolver == 1:
            # Resolver 1 unifies build- and dev-dependencies into the build, which the graph
            # of normal edges does not show: count every unread package the member may reach.
            active = {i for i in closure([member.id], self._below) if i in self.unread}
        else:
            in_build = {node.package for node in graph.nodes()}
            active = {i for r, i in self.unread_refs.items() if r in in_build}
        uncertain = frozenset(self.refs[i] for i in closure(active, self._below) if i in self.refs)
        # The crates the rules look at: those they check, and those whose features select
        # them (as crates.io compares names).
        names: set[str] = set()
        for rule in rules:
            names.update(rule.crate_names())
            if rule.used_when.selected_by is not None:
                names.update(rule.used_when.selected_by.crates)
        watched = {crate_key(name) for name in names}
        gap = None
        if any(crate_key(ref.name) in watched for ref in uncertain):
            gap = BuildGap(
                member.name,
                target,
                tuple(sorted(f"{self.refs[i].name}@{self.refs[i].version}" for i in active)),
                tuple(sorted({self.unread[i] for i in active})),
            )
        return BuildReach(frozenset(self.refs[i] for i in active), uncertain, gap)

    def unread_note(self) -> str | None:
        """For a complete audit that still left packages unread: how many, and why."""
        if not self.unread:
            return None
        reasons = "; ".join(sorted(set(self.unread.values())))
        return (
            f"--no-exec did not read {plural(len(self.unread), 'package')} of Cargo.lock "
            f"({reasons}); no audited verdict depends on them"
        )


def gap_notes(gaps: Iterable[BuildGap]) -> list[str]:
    """One note per distinct set of unread packages."""
    grouped: dict[tuple[tuple[str, ...], tuple[str, ...]], list[str]] = {}
    for gap in gaps:
        grouped.setdefault((gap.unread, gap.reasons), []).append(f"{gap.member} ({gap.target})")
    return [
        f"incomplete audit: --no-exec could not read {_some(unread, 10)} "
        f"({'; '.join(reasons)}), and "
        f"the verdict for {', '.join(printable(b) for b in builds)} depends on them; "
        f"{_remedy(reasons)} for a complete audit"
        for (unread, reasons), builds in grouped.items()
    ]


def _remedy(reasons: Iterable[str]) -> str:
    """What makes the packages readable: `cargo fetch` downloads registry crates; paths outside
    the root and git checkouts only cargo reads."""
    if set(reasons) <= _NOT_FETCHED:
        return "drop --no-exec (cargo reads them)"
    return "run `cargo fetch` once (or drop --no-exec)"


def summary_line(gaps: Iterable[BuildGap]) -> str:
    """One line for stderr: the audit is incomplete, and why."""
    listed = list(gaps)
    shown = _some(sorted({u for g in listed for u in g.unread}), 5)
    builds = len({(g.member, g.target) for g in listed})
    return (
        f"incomplete audit: {plural(builds, 'build')} {'depends' if builds == 1 else 'depend'} "
        "on packages --no-exec could not read "
        f"({shown}); {_remedy(r for g in listed for r in g.reasons)}"
    )


def _some(unread: Sequence[str], most: int) -> str:
    shown = ", ".join(printable(u) for u in unread[:most])
    return shown + (f" and {len(unread) - most} more" if len(unread) > most else "")
