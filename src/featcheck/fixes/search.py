"""Find the declaration whose change delivers a missing feature, by resolving the change.

A declaration is *the cut* only if changing it makes cargo's resolution deliver the feature, so
every candidate (`candidates.py`) is resolved in memory (`counterfactual.WhatIf`) and holds when
no finding of the same crate is left for the member and cargo can pick versions for what it
turns on: Cargo.lock's versions satisfy every new requirement (`lockcheck.py`), and what the
lock lacks cargo resolves once per run (`overlay.py`). Of the candidates that hold, the first
wins in this order:

1. a safe one before one that is not: it adds no new backend, not dozens of packages, and
   nothing to the build of a member without a finding of the crate (`reach.py`: every audited
   build it changes is resolved again, not only the member's);
2. the one that adds the fewest packages to the workspace's builds;
3. a change to a declaration before a new dependency;
4. the edit that clears the same finding for the most members (the workspace entry, or the
   line a workspace library owns: one edit, not one per member);
5. the member's own declaration, of the crate or of its closest declared ancestor, before
   declarations further away (a path library's manifest);
6. the edit written where `default-features = false` really cuts (the workspace entry rather
   than a `workspace = true` line), then the smallest edit.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from featcheck.featureset import DEFAULT, FeatureSelection
from featcheck.fixes import reach
from featcheck.fixes.candidates import CandidateFinder
from featcheck.fixes.lockcheck import Conflict
from featcheck.fixes.reach import Asking, Cost, WorkspaceBuilds, added_packages, safety
from featcheck.graph import DependencyGraph
from featcheck.report import Fix, edit_words
from featcheck.workspace.model import ModelEdit, Package, PackageRef

if TYPE_CHECKING:
    from featcheck.fixes.direct import Candidate
    from featcheck.manifest.declarations import Cut
    from featcheck.placement import Flagged

StillFlagged = Callable[[Package, str, DependencyGraph, PackageRef, frozenset[str]], bool]
"""Whether a member's rules still flag the package in a (counterfactual) build of it, findings
for the last argument's features aside (those a deferred finding leaves to their own rules)."""


@dataclass(frozen=True)
class Verdict:
    """What resolving one candidate in memory showed."""

    cleared: bool
    """No finding of the crate is left for the member."""
    cost: Cost = field(default_factory=Cost)
    """What it adds to the workspace's builds, as far as memory can tell (`reach.py`)."""
    needs: tuple[str, ...] = ()
    """Dependencies it turns on that Cargo.lock holds no version of (cargo must pick)."""
    built: tuple[str, ...] = ()
    """Those of `needs` a build turns on; the rest only Cargo.lock gains (`lockcheck.Need.weak`)."""
    conflict: Conflict | None = None
    """A requirement it adds that Cargo.lock's versions cannot satisfy."""


@dataclass(frozen=True)
class Outcome:
    """What the search found for one finding."""

    cut: Cut | None
    fix: Fix | None
    alternatives: tuple[Fix, ...]
    pending: tuple[tuple[Candidate, Verdict], ...] = ()
    """Candidates that would beat `fix` but turn on dependencies Cargo.lock lacks, best first,
    for cargo to answer (`overlay.py`), each with what memory saw it add to the workspace's
    builds: cargo answers for the member's own build only."""
    refused: str = ""
    """When no candidate holds because of versions: the best one and cargo's reason."""


@dataclass(frozen=True)
class _Query:
    """One finding being searched: its member's build, the crate, the features its detection
    defers to (their findings may stay), and the members with the same finding (`group`: their
    number, for the counts findings share)."""

    member: Package
    target: str
    package: PackageRef
    selection: FeatureSelection
    excused: frozenset[str]
    affected: Sequence[Package]
    asking: Asking
    """The members with a finding of the crate on a target, which ask for its features there."""
    group: int
    others: tuple[FeatureSelection, ...] = ()
    """The member's other builds with the same finding, placed once (`--each-feature`)."""


@dataclass
class FixSearch(CandidateFinder):
    """Candidate fixes for the findings of one audit (as its base class finds them), confirmed
    by resolution in memory."""

    builds: dict[tuple[str, str, FeatureSelection], DependencyGraph]
    """Every audited (member id, target, configuration) build as resolved without edits."""
    still_flagged: StillFlagged
    cargo_checks_new_packages: bool = False
    """True: a fix needing dependencies Cargo.lock lacks waits for cargo (`overlay.py`)."""
    backends: frozenset[str] = frozenset()
    """Crates that are a backend once built: a fix adding one is not safe."""
    with_alternatives: bool = True
    """False: only the best fix is wanted; candidates that cannot beat it are not resolved."""
    audited: frozenset[str] = frozenset()
    """The ids of the members this run audits (`-p`); empty: every member."""
    no_std: reach.NoStdBuild = lambda member, target, selection: False
    left_to_users: Mapping[reach.BuildCrate, frozenset[str]] = field(default_factory=dict)
    """Features of a crate a library leaves to its users, by build (stages/place.py)."""

    def __post_init__(self) -> None:
        members = {m.id: m for m in self.metadata.members}
        self.workspace = WorkspaceBuilds(self.builds, self.what_if, members, self.no_std)
        self._cleared: dict[
            tuple[frozenset[ModelEdit], str, str, PackageRef, FeatureSelection, frozenset[str]],
            bool,
        ] = {}
        self._coverage_counts: dict[
            tuple[frozenset[ModelEdit], str, PackageRef, FeatureSelection, int], int
        ] = {}
        self._groups: dict[tuple[str, ...], int] = {}
        """Each set of affected members (by id, in order) as a number, for the keys below."""
        self._safety: dict[Cost, str] = {}

    def find(
        self,
        item: Flagged,
        wanted: tuple[str, ...],
        affected: Sequence[Package],
        required: Iterable[str],
        asking: Asking,
        exhaustive: bool = False,
    ) -> Outcome:
        """`affected`: the members with the same finding; `required`: the features no fix can
        leave the crate without (`WorkspaceBuilds.least_added`); `asking`: the members with a
        finding of the crate on a target; `exhaustive`: every candidate resolved, as with
        alternatives. A fix holds when no finding of the crate is left but the deferred ones."""
        member, target, backend = item.member, item.target, item.detection.node
        selection = item.selection
        group = self._groups.setdefault(tuple(m.id for m in affected), len(self._groups))
        excused = frozenset(item.detection.deferred_to)
        excused |= self.left_to_users.get((member.id, target, selection, backend.package), set())
        others = tuple(item.also_in)
        query = _Query(
            member, target, backend.package, selection, excused, affected, asking, group, others
        )
        builds = [(self.builds[(member.id, target, s)], s) for s in (selection, *others)]
        avoiding = item.rule.used_when.avoiding
        candidates = self.candidates(member, item.cfg, builds, backend, wanted, avoiding)
        required = tuple(sorted(f for f in required if f not in excused))
        least = functools.cache(
            lambda: self.workspace.least_added(member, backend, target, selection, required)
        )
        verdicts, chosen = self._search(candidates, query, least, exhaustive)
        best = self.rank(chosen, verdicts[chosen]) if chosen is not None else None
        pending = sorted(
            (
                c
                for c in candidates
                if c in verdicts
                and self.cargo_checks_new_packages
                and verdicts[c].cleared
                and verdicts[c].conflict is None
                and verdicts[c].needs
                and (best is None or self.rank(c, verdicts[c], waiting=True) < best)
            ),
            key=lambda c: (
                self.rank(c, verdicts[c], waiting=True)[:2],
                c.proximity[0],
                -self._coverage(c, query),
                c.proximity,
            ),
        )
        alternatives = tuple(
            self.candidate_fix(c, verdicts[c])
            for c in candidates
            if c is not chosen and c in verdicts and verdicts[c].cleared
        )
        refused = self._refused(candidates, verdicts) if chosen is None and not pending else ""
        waiting = tuple((c, verdicts[c]) for c in pending)
        if chosen is None:
            return Outcome(None, None, alternatives, waiting, refused)
        fix = self.candidate_fix(chosen, verdicts[chosen])
        return Outcome(chosen.cut, fix, alternatives, waiting)

    def rank(
        self, candidate: Candidate, verdict: Verdict, waiting: bool = False
    ) -> tuple[bool, int, tuple[int, int, int]]:
        """The first keys of the order in the module's docstring. `waiting`: the best rank a
        candidate cargo still has to answer can reach: it adds at least what memory saw (and
        is unsafe when that is) and one package per dependency it turns on."""
        added = self.least_added(verdict) if waiting else len(verdict.cost.added)
        return bool(self._unsafe(verdict)), added, candidate.proximity

    @staticmethod
    def least_added(verdict: Verdict) -> int:
        """The fewest packages a candidate cargo still has to answer for can add: what memory
        saw, and one per dependency it turns on that the build gets (not those only Cargo.lock
        gains). Cargo's answer within that keeps its place ahead of the fix memory found."""
        return len(verdict.cost.added) + len(verdict.built)

    def _unsafe(self, verdict: Verdict) -> str:
        # Asked several times per candidate while ranking; a cost is shared by every finding
        # its candidate comes up for (`reach.WorkspaceBuilds`).
        known = self._safety.get(verdict.cost)
        if known is None:
            known = self._safety[verdict.cost] = safety(verdict.cost, self.backends)
        return known

    def _holds(self, verdict: Verdict) -> bool:
        """Cleared, and versions can be picked (without cargo to ask, memory is all there is)."""
        waits_for_cargo = bool(verdict.needs) and self.cargo_checks_new_packages
        return verdict.cleared and verdict.conflict is None and not waits_for_cargo

    def _lock_only(self, verdict: Verdict) -> bool:
        """Cleared, with only dependencies Cargo.lock must take in for cargo to check."""
        needs = verdict.needs
        return bool(needs) and not verdict.built and self.cargo_checks_new_packages

    def candidate_fix(self, candidate: Candidate, verdict: Verdict) -> Fix:
        if verdict.conflict is not None:
            note = f"cargo cannot resolve it: {verdict.conflict.reason()}"
            return Fix(candidate.edits, note=note)
        note, listed = self._unsafe(verdict), reach.needs_listed(verdict.needs, verdict.built)
        if not self._holds(verdict):
            # What only Cargo.lock gains leaves the builds known: they gain what memory saw.
            known = not verdict.built
            unchecked = f"{reach.UNCHECKED[0 if known else 1]} ({listed})"
            added = len(verdict.cost.added) if known else None
            return Fix(candidate.edits, note=note or unchecked, added=added)
        if verdict.needs and not note:
            note = f"{reach.LOCK_GAINS} ({listed})"
        # Resolved in memory, it turns on nothing Cargo.lock lacks: the lock gains nothing.
        added, locked = len(verdict.cost.added), None if verdict.needs else 0
        return Fix(
            candidate.edits, confirmed=True, safe=not note, note=note, added=added, locked=locked
        )

    def _refused(self, candidates: list[Candidate], verdicts: dict[Candidate, Verdict]) -> str:
        """The one line for a finding no candidate holds for because of versions."""
        for c in candidates:
            if verdicts[c].conflict is not None:  # its fix's note is cargo's reason
                return f"{edit_words(c.edits[0])}: {self.candidate_fix(c, verdicts[c]).note}"
        return ""

    def _verdict(self, candidate: Candidate, query: _Query) -> Verdict:
        # The one finding of several builds: its fix must clear it in each (a line behind
        # `extra` leaves `--features fast` as it was).
        for selection in (query.selection, *query.others):
            if not self._clears(candidate, query.member, replace(query, selection=selection)):
                return Verdict(False)
        edited = self._edited(candidate, query)
        cost = self.workspace.cost(candidate, query.asking, query.package.name, query.target)
        if self.audited:
            asks = self._flagged_as_audited(query)
            gained = self.workspace.unaudited(candidate, query.target, self.audited, asks)
            cost = cost.with_gained(gained, query.package.name)
        needs = self.what_if.needs(edited)
        lock = self.what_if.lock
        for need in needs:
            verdict = lock.check(need) if lock is not None else None
            if isinstance(verdict, Conflict):
                return Verdict(True, cost, conflict=verdict)
        described = tuple(sorted({self.what_if.describe(n) for n in needs}))
        built = sorted({self.what_if.describe(n) for n in needs if not n.weak})
        return Verdict(True, cost, described, tuple(built))

    def _search(
        self, candidates: list[Candidate], query: _Query, least: Callable[[], int], every: bool
    ) -> tuple[dict[Candidate, Verdict], Candidate | None]:
        """The verdict of each candidate resolved, and the one that holds and comes first in the
        module docstring's order (of equals, the first listed). Without alternatives, one that
        cannot come before the best found is not resolved: at best it is safe, adds nothing and
        clears every affected member whose build holds a package it changes (`_coverage`
        counts among those only), or adds the `least` packages any fix adds (`_behind`)."""
        floors: dict[Candidate, tuple[bool, int, int, int]] = {}
        if not (self.with_alternatives or every):
            for c in candidates:
                floors[c] = (False, 0, c.proximity[0], -len(self._reached(c, query)))
        listed = {c: i for i, c in enumerate(candidates)}
        # The most promising first: the sooner the best is found, the more it rules out.
        order = sorted(candidates, key=floors.__getitem__) if floors else candidates
        verdicts: dict[Candidate, Verdict] = {}
        skipped: list[Candidate] = []
        chosen, best = None, None
        for c in order:
            if floors and best is not None and self._behind(c, floors[c], best[:4], least, query):
                skipped.append(c)
                continue
            verdict = verdicts[c] = self._verdict(c, query)
            # One whose builds are known, cargo to say only whether Cargo.lock can take in what
            # it names, rules out what ranks after it, though it waits for cargo (`find`).
            provisional = bool(floors) and self._lock_only(verdict)
            if not self._holds(verdict) and not provisional:
                continue
            # Safety, packages added, and whether a new dependency is needed: among candidates
            # equal on these, the one clearing the most members wins before the nearest one
            # (the cut a workspace library owns, not one edit per member).
            unsafe, added, proximity = self.rank(c, verdict)
            rank = (unsafe, added, proximity[0])
            if best is not None and rank > best[:3]:
                continue  # coverage is counted only where it can decide
            covered = self._coverage(c, query)
            key = (*rank, -covered, c.proximity, not c.written_at_cut, c.size, listed[c])
            if best is None or key < best:
                chosen, best = (chosen if provisional else c), key
        # What a report without alternatives still reads of them: all of them beside a new
        # dependency in the member's own manifest (`placement._placement`), else whether there
        # is one (the text report's hint).
        edits = chosen.edits if chosen is not None else ()
        own = all(e.manifest == query.member.manifest_path for e in edits)
        every = own and bool(edits) and edits[0].adds_declaration
        for c in skipped:
            if not every and any(v.cleared for d, v in verdicts.items() if d is not chosen):
                break
            verdicts[c] = self._verdict(c, query)
        return verdicts, chosen

    def _behind(
        self,
        candidate: Candidate,
        floor: tuple[bool, int, int, int],
        best: tuple[bool, int, int, int],
        least: Callable[[], int],
        query: _Query,
    ) -> bool:
        """Whether the candidate ranks after the best found (the first keys of its rank) before
        it is resolved. `least` is worked out only where only adding fewer could put it first."""
        if floor > best:
            return True
        if not best[0] and floor[2:] > best[2:] and least() >= best[1]:
            return True
        return self._own_floor(candidate, query) > best[:3]

    def _own_floor(self, candidate: Candidate, query: _Query) -> tuple[bool, int, int]:
        """The least rank the candidate can have, read off the member's own build alone, where
        the workspace's cost (which holds at least what that build gains) would take a what-if
        build of other members too: 0.7 s of burn_p2p's 2.3 s after an edit went to candidates
        adding a GPU backend to a library that could never win."""
        key = (query.member.id, query.target, query.selection)
        reached = self.workspace.reached(candidate.touches)
        if key not in reached or len(reached) == 1 or self.workspace.knows(candidate):
            return (False, 0, candidate.proximity[0])
        added = tuple(added_packages(self.builds[key], self._edited(candidate, query)))
        unsafe = bool(safety(Cost(added, largest=len(added)), self.backends))
        return (unsafe, len(added), candidate.proximity[0])

    def _edited(
        self, candidate: Candidate, query: _Query, member: Package | None = None
    ) -> DependencyGraph:
        """The build of `member` (the query's by default) with the candidate's edits made."""
        position = self.what_if.index.by_id[(member or query.member).id]
        return self.what_if.graph(candidate.model, position, query.target, query.selection)

    def _clears(self, candidate: Candidate, member: Package, query: _Query) -> bool:
        """Whether the candidate clears the finding of the query's crate in `member`'s build."""
        target, package, excused = query.target, query.package, query.excused
        key = (candidate.model, member.id, target, package, query.selection, excused)
        known = self._cleared.get(key)
        if known is None:
            graph = self._edited(candidate, query, member)
            flagged = self.still_flagged(member, target, graph, package, excused)
            known = self._cleared[key] = not flagged
        return known

    def _coverage(self, candidate: Candidate, query: _Query) -> int:
        """How many of the affected members this candidate clears (asked for every finding of
        the crate, with the same members: counted once per candidate and group)."""
        key = (candidate.model, query.target, query.package, query.selection, query.group)
        known = self._coverage_counts.get(key)
        if known is None:
            known = sum(
                self._clears(candidate, other, query) for other in self._reached(candidate, query)
            )
            if self.audited and query.selection == DEFAULT:  # the members `-p` leaves out
                known += self.workspace.unaudited_cleared(
                    candidate, query.target, self.audited, self._flagged_as_audited(query)
                )
            self._coverage_counts[key] = known
        return known

    def _flagged_as_audited(self, query: _Query) -> Callable[[DependencyGraph], bool]:
        """Whether a build of a member this run does not audit has the query's finding, by the
        audited member's rules: this run read no settings of the others'."""
        member, target, package, excused = query.member, query.target, query.package, query.excused
        return lambda build: self.still_flagged(member, target, build, package, excused)

    def _reached(self, candidate: Candidate, query: _Query) -> list[Package]:
        """The affected members whose build holds a package the candidate changes: only those."""
        touches = candidate.touches
        reached = self.workspace.members_reached(touches, query.target, query.selection)
        return [m for m in query.affected if m.id in reached]
