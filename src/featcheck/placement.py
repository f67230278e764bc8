"""Turn the rules' detections into findings: location, fix, suggestion and why chain.

Every detection of a build is placed together with the others, because the best fix for one
member is the edit that also clears the same finding of the other members (the workspace entry
they all inherit), and a fix must also carry what other findings of the same crate ask for.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from featcheck.builder import FindingBuilder
from featcheck.deadline import Deadline
from featcheck.featureset import DEFAULT, FeatureSelection
from featcheck.fixes.direct import Goal
from featcheck.fixes.reach import LOCK_GAINS, Asking
from featcheck.fixes.search import FixSearch, Outcome, Verdict
from featcheck.graph import distances_to
from featcheck.report import Edit, Finding, Fix, Location, edit_words
from featcheck.rules.spec import CRATE_PLACEHOLDER, Kind
from featcheck.severity import Confidence, Severity
from featcheck.workspace.model import crate_key

if TYPE_CHECKING:
    from featcheck.explain import Explainer
    from featcheck.fixes.direct import Candidate
    from featcheck.fixes.overlay import Answer, OverlayCheck
    from featcheck.locate import Locator
    from featcheck.manifest.declarations import Cut, DeclarationSite
    from featcheck.rules import BuildView, Detection, Rule
    from featcheck.semantics.cfg import TargetCfg
    from featcheck.workspace.model import Package, PackageRef

_PLACING = "placing the findings and searching their fixes"
_ROUNDS = 3
"""Rounds of cargo checks at most: a refused candidate's successor may need cargo too."""
_REFUSED = "cargo cannot resolve it: "


@dataclass(frozen=True)
class Flagged:
    """One rule's detection in one member's build on one target, not yet placed."""

    rule: Rule
    detection: Detection
    member: Package
    view: BuildView
    cfg: TargetCfg
    selection: FeatureSelection = DEFAULT
    """The build configuration (`--features` …) the detection was made in."""
    also_in: list[FeatureSelection] = field(default_factory=list, compare=False)
    """Other configurations with the very same detection: placed once, the finding lists all."""
    confidence: Confidence = Confidence.RESOLVED

    @property
    def target(self) -> str:
        return self.view.target or ""

    @property
    def library(self) -> bool:
        """The member's build makes no final artifact: its users choose its features."""
        return self.member.is_library_only(self.view.roots[0].features)


Cover = tuple[str, str, FeatureSelection, "PackageRef", str]
"""A build's (member id, target, configuration), a package and one of its features."""


def cover_keys(item: Flagged) -> frozenset[Cover]:
    """The covers a deferred detection waits for (empty for one not deferred)."""
    node, place = item.detection.node, (item.member.id, item.target, item.selection)
    return frozenset((*place, node.package, f) for f in item.detection.deferred_to)


@dataclass
class FindingPlacer:
    """Places the detections of one audit."""

    locator: Locator
    explainer: Explainer
    search: FixSearch
    overlay: Callable[[], OverlayCheck] | None
    """Makes the cargo check for fixes needing packages Cargo.lock lacks, once one waits (its
    module loads tomlkit: 35 ms of every run's start otherwise); None: they stay unconfirmed."""
    confirm: bool
    """False: fixes are computed but none is called confirmed or safe (`--no-exec`)."""
    search_fixes: bool
    """False: no fix is searched (the findings alone are wanted)."""
    notes: tuple[str, ...]
    """What every finding of this audit says besides its own (the feature unification assumed)."""
    configured_severity: Callable[[str, str], Severity | None]
    """The configured severity of a rule's findings in a member; None: the rule's own."""
    deadline: Deadline
    covers: frozenset[Cover]
    """What undeferred detections cover: a deferred one they cover is not searched (`skipped`)."""
    skipped: set[Cover] = field(default_factory=set)
    _asking: dict[PackageRef, Asking] = field(default_factory=dict, init=False)
    _same_crate: dict[int, _SameCrate] = field(default_factory=dict, init=False)
    """The findings of each one's crate, by the finding's `id` (`place_all`)."""

    def place_all(self, flagged: list[Flagged]) -> list[Finding]:
        missing = [item for item in flagged if item.rule.kind is Kind.MISSING]
        keys = [(item.target, item.selection, item.detection.node.package) for item in missing]
        by_crate: dict[tuple[str, FeatureSelection, PackageRef], _SameCrate] = {}
        # Members with a finding of a crate on a target ask for its features there, in
        # whichever configuration they have it: only the others must build nothing new (a GPU
        # application leaving the library's CPU backend off, a wasm32 build without threads).
        asking: dict[PackageRef, set[tuple[str, str]]] = {}
        for item, key in zip(missing, keys, strict=True):
            by_crate.setdefault(key, _SameCrate()).add(item)
            asking.setdefault(item.detection.node.package, set()).add((item.member.id, item.target))
        self._asking = {key: frozenset(builds) for key, builds in asking.items()}
        self._same_crate = {id(i): by_crate[k] for i, k in zip(missing, keys, strict=True)}
        outcomes = [self._search(i) for i in missing]
        outcomes = _one_edit_for_all(missing, self._confirm_pending(missing, outcomes))
        placed = iter([self._place(i, o) for i, o in zip(missing, outcomes, strict=True)])
        return [
            next(placed) if item.rule.kind is Kind.MISSING else self._place_present(item)
            for item in flagged
        ]

    def _place_present(self, item: Flagged) -> Finding:
        """No fix is searched for a feature that costs when on: turning it off is the owner's
        decision (another crate may need it)."""
        self.deadline.check(_PLACING)
        finding = self._builder(item)
        sites = self._member_sites(item)
        declarations = self._locations(sites)
        # The member's own declaration that switches the feature on, where one does: the one
        # with the shortest chain (a line that asks for the feature itself before a dependency
        # whose own line does).
        keys = self.explainer.switching(item.detection, item.member, item.cfg, item.selection)
        switching = [site for site in sites if site.key in keys]
        shortest = min(switching, key=lambda site: len(keys[site.key]), default=None)
        primary = self.locator.declaration_of(shortest) or next(iter(declarations), None)
        if primary is None and (cut := self._fallback_cut(item)) is not None:
            primary = self.locator.location(cut)
        finding.chain = tuple(self.explainer.turned_on(item.detection, item.member, keys))
        finding.at(primary, declaration=primary)
        finding.hidden = declarations
        node, feature = item.detection.node, item.detection.feature
        if not feature:  # the crate itself: the rule's own words say what to use instead
            fix = " ".join(item.rule.doc.fix.split()).replace(CRATE_PLACEHOLDER, node.name)
            return finding.build(fix or f"drop {node.name}")
        return finding.build(
            f"turn `{feature}` of {node.name} off where it is switched on (see the chain), "
            f"or accept the cost: `# featcheck: allow({item.rule.code}) <reason>`"
        )

    def _search(self, item: Flagged, exhaustive: bool = False) -> Outcome:
        self.deadline.check(_PLACING)
        same_crate = self._same_crate[id(item)]
        if not self.search_fixes:
            return Outcome(None, None, ())
        keys = cover_keys(item)
        if keys & self.covers:
            self.skipped.update(keys)
            return Outcome(None, None, ())
        wanted = _wanted(item, same_crate.features[item.member.id])
        required = same_crate.required[item.member.id]
        asking = self._asking[item.detection.node.package]
        return self.search.find(item, wanted, same_crate.affected, required, asking, exhaustive)

    def _confirm_pending(self, flagged: list[Flagged], outcomes: list[Outcome]) -> list[Outcome]:
        """Let cargo answer, in one go per round, the fixes resolution in memory cannot: a
        candidate cargo refuses is dropped and the next one goes to cargo in the next round."""
        settled = list(outcomes)
        overlay: OverlayCheck | None = None
        asked: dict[tuple[int, tuple[Edit, ...]], Answer] = {}
        # A search with alternatives resolved every candidate already.
        searched = set(range(len(outcomes)) if self.search.with_alternatives else ())
        try:
            for _ in range(_ROUNDS if self.confirm else 0):
                waiting = [(p, *o.pending[0]) for p, o in enumerate(settled) if o.pending]
                if not waiting or self.overlay is None:
                    break
                overlay = overlay or self.overlay()
                answers = overlay.confirm([(flagged[p], c.edits, v.needs) for p, c, v in waiting])
                for (position, candidate, _), answer in zip(waiting, answers, strict=True):
                    asked[(position, candidate.edits)] = answer
                    outcome = self._answered(settled[position], candidate, answer)
                    if outcome.refused and position not in searched:
                        # Waiting for cargo, the candidate ruled out those ranking after it,
                        # unresolved: they are resolved now, as a search for alternatives does.
                        searched.add(position)
                        outcome = self._search(flagged[position], exhaustive=True)
                    # What cargo answered already is not asked again.
                    while outcome.pending and (
                        known := asked.get((position, outcome.pending[0][0].edits))
                    ):
                        outcome = self._answered(outcome, outcome.pending[0][0], known)
                    settled[position] = outcome
        finally:
            if overlay is not None:
                overlay.close()
        return [self._left_waiting(o) if o.pending else o for o in settled]

    def _left_waiting(self, outcome: Outcome) -> Outcome:
        """An outcome still waiting for cargo once the rounds are over. The best waiting one
        still says where the cut is where no cargo was asked (it ranks ahead of memory's fix, as
        `--no-exec` ranks it), else where memory has none. Without a fix, the line says what
        cargo refused, as where nothing is left waiting (dl_pytorch_rust_challenge's members
        each read a plain "fix:" line of burn's `fusion`, which cargo had refused)."""
        refused, alternatives = outcome.refused, outcome.alternatives
        first = next((a for a in alternatives if a.note.startswith(_REFUSED)), None)
        if outcome.fix is None and not refused and first is not None:
            refused = f"{edit_words(first.edits[0])}: {first.note}"
            alternatives = tuple(a for a in alternatives if a.edits != first.edits)
        cut = self._waiting_cut(outcome)
        return replace(outcome, cut=cut, pending=(), refused=refused, alternatives=alternatives)

    def _waiting_cut(self, outcome: Outcome) -> Cut | None:
        first = outcome.pending[0][0].cut
        return first if not self.confirm or outcome.cut is None else outcome.cut

    def _answered(self, outcome: Outcome, candidate: Candidate, answer: Answer) -> Outcome:
        """The outcome once cargo answered for its first pending candidate."""
        waited, rest = outcome.pending[0][1], outcome.pending[1:]
        if not answer.cleared:
            note = answer.reason
            alternatives = tuple(
                replace(a, note=note or a.note) if a.edits == candidate.edits else a
                for a in outcome.alternatives
            )
            refused = outcome.refused
            if outcome.fix is None and not rest and not refused and answer.reason:
                refused = f"{edit_words(candidate.edits[0])}: {note}"
                # The fix line says so: not again as an alternative (`or:`).
                alternatives = tuple(a for a in alternatives if a.edits != candidate.edits)
            return replace(outcome, alternatives=alternatives, pending=rest, refused=refused)
        # cargo answered for the member's build; memory for the other builds it changes.
        verdict = Verdict(True, waited.cost.with_added(answer.added))
        locked = None if answer.locked is None else len(answer.locked)
        fix = replace(self.search.candidate_fix(candidate, verdict), locked=locked)
        added = len(verdict.cost.added)
        others = tuple(a for a in outcome.alternatives if a.edits != candidate.edits)
        current = outcome.fix
        smaller = current is not None and (current.added is None or added < current.added)
        # It was waiting because, adding no more than that, it comes first.
        ahead = smaller or added <= self.search.least_added(waited)
        if current is not None and (not current.safe or (fix.safe and ahead)):
            others = (current, *others)
        elif current is not None:
            # Confirmed by cargo but no better than the fix memory found: an alternative.
            return replace(outcome, alternatives=(*others, fix), pending=())
        return Outcome(candidate.cut, fix, others)

    def _place(self, item: Flagged, outcome: Outcome) -> Finding:
        self.deadline.check(_PLACING)
        cut = outcome.cut or self._fallback_cut(item)
        fix, alternatives = outcome.fix, outcome.alternatives
        if not self.confirm:
            listed = (outcome.fix, *outcome.alternatives)
            fix, alternatives = None, tuple(Fix(f.edits) for f in listed if f is not None)
        finding = self._builder(item)
        finding.fix = None if fix is None else self._placed(fix)
        finding.alternatives = tuple(map(self._placed, alternatives))
        build = (item.target, item.cfg, item.selection)
        finding.chain = self.explainer.chain(item.detection, cut, item.member, build)
        finding.hidden = self._locations(self._member_sites(item))
        suggestion = outcome.refused
        if cut is None:
            finding.at(None)
            return finding.build(
                suggestion or self.explainer.suggestion(item.detection, None, item.cfg)
            )
        finding.at(
            self.locator.location(cut),
            declaration=self.locator.declaration_of(cut.site),
            inherited_by=self.locator.declaration_of(cut.inheriting),
        )
        if not suggestion and outcome.fix is not None:
            placed = self._placed(outcome.fix)
            others = tuple(a for a in finding.alternatives if a.edits != placed.edits)
            suggestion = self.explainer.describe_fix(item.detection, cut, placed, others)
        elif not suggestion:
            suggestion = self.explainer.suggestion(item.detection, cut, item.cfg)
        if finding.fix is not None:
            finding.placement = self.explainer.placement(
                item.member, item.view, item.detection, cut, (finding.fix, *finding.alternatives)
            )
        return finding.build(suggestion)

    def _builder(self, item: Flagged) -> FindingBuilder:
        finding = FindingBuilder(item.rule, item.detection, item.member, item.target, item.library)
        finding.notes = self.notes
        finding.configurations = (item.selection, *item.also_in)
        finding.confidence = item.confidence
        finding.configured_severity = self.configured_severity(item.member.name, item.rule.code)
        return finding

    def _placed(self, fix: Fix) -> Fix:
        """The fix with each edit's file and line filled in for reports."""
        return replace(fix, edits=tuple(self.locator.place(e) for e in fix.edits))

    def _fallback_cut(self, item: Flagged) -> Cut | None:
        """Where to point when no fix is found: the member's nearest declaration."""
        graph, node = item.view.graph, item.detection.node
        package = self.search.metadata.package_of(node.package)
        if package is None:
            return None
        avoided = frozenset(map(crate_key, item.rule.used_when.avoiding))
        within = graph.packages()
        goal = Goal(node, package, (item.detection.feature,), avoided, within)
        return self.search.anchor(item.member, item.cfg, graph, goal, distances_to(graph, node))

    def _member_sites(self, item: Flagged) -> list[DeclarationSite]:
        """The member's own declarations on the way to the crate: where a user naturally
        writes a suppression, whichever line the fix edits."""
        graph, root = item.view.graph, item.view.roots[0]
        on_the_way = graph.ancestors(item.detection.node) | {item.detection.node}
        return [
            site
            for dependency in sorted(graph.dependencies(root) & on_the_way)
            for site in self.locator.declared_sites(item.member, dependency, item.cfg)
        ]

    def _locations(self, sites: list[DeclarationSite]) -> tuple[Location, ...]:
        found = (self.locator.declaration_of(site) for site in sites)
        return tuple(location for location in found if location is not None)


@dataclass
class _SameCrate:
    """The detections of one crate in one build configuration, gathered once for all of them
    (a large workspace has hundreds)."""

    affected: list[Package] = field(default_factory=list)
    """The members with a detection of the crate, in the order of their first one."""
    features: dict[str, list[str]] = field(default_factory=dict)
    """By member id: the features that member's detections of the crate ask for."""
    required: dict[str, set[str]] = field(default_factory=dict)
    """By member id: the features no fix can leave the crate without, deferred or not."""

    def add(self, item: Flagged) -> None:
        asked = self.features.get(item.member.id)
        if asked is None:
            asked = self.features[item.member.id] = []
            self.required[item.member.id] = set()
            self.affected.append(item.member)
        used = item.rule.used_when
        stands_down = used.handled_by or used.unless_dependency_has or used.unless_dependent
        # A rule that stands down for nothing else goes on flagging a crate in use: a fix only adds.
        if item.detection.feature and not item.detection.node.host and not stands_down:
            self.required[item.member.id].add(item.detection.feature)
        if not item.detection.deferred_to:
            # A deferred finding may go (stages/finish.py): the others' fixes stay as they were.
            asked.append(item.detection.feature)


def _one_edit_for_all(flagged: list[Flagged], outcomes: list[Outcome]) -> list[Outcome]:
    """Each finding takes, of the safe fixes some finding of the crate chose, the one that clears
    the most findings (its own, where none clears more): `--fix` makes fewer edits, each for all
    the builds it clears. tellegen's benchmarks got a line of its own beside the tellegen
    library's edit, which clears it too (cargo had to confirm that one first:
    `_confirm_pending`); argmin's examples each edited their ndarray line beside finitediff's."""
    chosen: dict[tuple[object, tuple[Edit, ...]], Outcome] = {}
    clearing: Counter[tuple[object, tuple[Edit, ...]]] = Counter()
    for item, outcome in zip(flagged, outcomes, strict=True):
        crate = (item.target, item.detection.node.package)
        if outcome.fix is not None and _safe_but_unconfirmed(outcome.fix):
            chosen.setdefault((crate, outcome.fix.edits), outcome)
        fixes = (*([outcome.fix] if outcome.fix else []), *outcome.alternatives)
        clearing.update((crate, f.edits) for f in fixes)
    settled = list(outcomes)
    for position, (item, outcome) in enumerate(zip(flagged, outcomes, strict=True)):
        crate = (item.target, item.detection.node.package)
        fix = outcome.fix
        own = clearing[(crate, fix.edits)] if fix and _safe_but_unconfirmed(fix) else 0
        shared = [a for a in outcome.alternatives if (crate, a.edits) in chosen]
        best = max(shared, key=lambda a: clearing[(crate, a.edits)], default=None)
        if best is None or clearing[(crate, best.edits)] <= own:
            continue
        taken = chosen[(crate, best.edits)]
        others = [*([outcome.fix] if outcome.fix else []), *outcome.alternatives]
        others.remove(best)
        settled[position] = Outcome(taken.cut, taken.fix, tuple(others))
    return settled


def _safe_but_unconfirmed(fix: Fix) -> bool:
    """Safe, or safe but for the versions Cargo.lock gains, which no cargo confirmed
    (`--no-exec`): where the findings' places are the same as where cargo confirms."""
    return fix.safe or fix.note.startswith(LOCK_GAINS)


def _wanted(item: Flagged, same_member: list[str]) -> tuple[str, ...]:
    """Every feature the crate lacks for this member (`same_member`: what its other findings of
    the crate ask for; a fix must leave none behind)."""
    companions = [c for c in item.rule.companions if c not in item.detection.node.features]
    wanted = [item.detection.feature, *companions, *same_member]
    # A deferred finding's fix leaves what it defers to alone (FC003's adds `simd`, not FC001's
    # `rayon`: a team that ignores FC001 means to build without it).
    return tuple(f for f in dict.fromkeys(wanted) if f not in item.detection.deferred_to)
