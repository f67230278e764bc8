"""What a fix costs the whole workspace: every audited build it changes, not only the finding's.

An edit to a path library reaches every member that depends on it. A GPU application that
depends on a library with `default-features = false`, to leave its CPU backend out, builds that
backend after a fix adds it to the library unconditionally: the fix is not safe, whatever it does
for the member whose finding asked for it. So each candidate is resolved again for every audited
build (member, target, configuration) that holds a package whose declarations it changes, and
what those builds gain is its cost: the packages, counted once however many builds gain them,
and the members that gain any without asking (their build has no finding of the crate).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, NamedTuple

from featcheck.featureset import DEFAULT, FeatureSelection
from featcheck.graph import DependencyGraph, Node, closure
from featcheck.workspace.model import ModelEdit, NewDependency, Package, PackageRef, crate_key

if TYPE_CHECKING:
    from featcheck.fixes.counterfactual import WhatIf
    from featcheck.fixes.direct import Candidate
    from featcheck.rules import Rule

BuildKey = tuple[str, str, FeatureSelection]
"""(member id, target, configuration) of one audited build."""
Asking = frozenset[tuple[str, str]]
"""(member id, target) of each member with a finding of a crate on that target, in any
configuration: those builds ask for what a fix adds to the crate."""
BuildCrate = tuple[str, str, FeatureSelection, PackageRef]
"""A crate's package in one audited build: (member id, target, configuration, package)."""

UNCHECKED = (
    "Cargo.lock must take in dependencies it names, unchecked by cargo",
    "cargo was not asked about the dependencies it turns on, which no build here holds yet",
)
"""How a fix's note begins where cargo was not asked about it: lock entries only, or packages
the builds would gain (`FixSearch.candidate_fix`). Such a note is no reason against it."""
LOCK_GAINS = "Cargo.lock will gain versions of dependencies it turns on"


def needs_listed(needs: Sequence[str], built: Sequence[str]) -> str:
    """What a note names of the dependencies Cargo.lock lacks: those a build turns on, then
    those only the lock takes in (a weak `dep?/f` builds nothing: burn's defaults name every
    backend so)."""
    only_lock = ", ".join(n for n in needs if n not in built)
    if not built:
        return only_lock
    return ", ".join(built) + (f"; Cargo.lock also takes in {only_lock}" if only_lock else "")


"""The note of a fix safe but for what Cargo.lock gains, unconfirmed (`--no-exec`)."""

MANY_PACKAGES = 40
"""A fix adding this many packages to a build (dozens: a framework's worth) is not applied
unasked; 73 was a new burn backend with its HTTP and TLS stack."""


def added_packages(before: DependencyGraph, after: DependencyGraph) -> list[str]:
    """`name version` of each package `after` builds that `before` does not (by name and
    version: a copy's path packages print another directory). Only the packages `before`
    lacks by identity are looked up by name: a fix changes a few of hundreds."""
    new = after.packages() - before.packages()
    known = {(n.name, n.version) for name in {p.name for p in new} for n in before.named(name)}
    return sorted({f"{p.name} {p.version}" for p in new if (p.name, p.version) not in known})


@dataclass(frozen=True)
class Cost:
    """What a fix adds to the workspace's builds."""

    added: tuple[str, ...] = ()
    """`name version` of every package some audited build gains, once each."""
    unasked: tuple[tuple[str, tuple[str, ...]], ...] = ()
    """Members that gain packages without a finding of the crate, each with what it gains."""
    largest: int = 0
    """The most packages one build gains."""

    def with_gained(self, gained: Iterable[Gained], crate: str) -> Cost:
        """The cost with what more builds gain, none of whose members ask (`measure`)."""
        more = measure(gained, frozenset(), crate, "")
        added = tuple(sorted({*self.added, *more.added}))
        return Cost(added, (*self.unasked, *more.unasked), max(self.largest, more.largest))

    def with_added(self, more: Iterable[str]) -> Cost:
        """The cost with what cargo found one build gains besides (`overlay.py`)."""
        more = tuple(more)
        added = tuple(sorted({*self.added, *more}))
        return Cost(added, self.unasked, max(self.largest, len(more)))


def added_features(before: DependencyGraph, after: DependencyGraph) -> list[tuple[str, str]]:
    """Each feature a dependency in `before` gains in `after`, on the target side: its crate (as
    crates.io compares names) and `` `feature` of name version ``. Not the member's own: its
    features are the configuration's, and configurations that build the same packages share one
    graph (`--each-feature`)."""
    member = next(before.nodes()).package
    had = {n.package: n.features for n in before.nodes() if not n.host and n.package != member}
    return sorted(
        (crate_key(node.name), f"`{feature}` of {node.name} {node.version}")
        for node in after.nodes()
        if not node.host and node.package in had
        for feature in node.features - had[node.package]
    )


class Gained(NamedTuple):
    """One build a fix changes."""

    member: Package
    packages: Sequence[str]
    needs: Sequence[str]
    """The dependencies it turns on that Cargo.lock holds no version of (cargo adds those too,
    memory cannot say with what)."""
    features: Sequence[tuple[str, str]]
    """In a no_std build, the features its dependencies gain (`added_features`)."""
    before: DependencyGraph
    selection: FeatureSelection
    target: str


NoStdBuild = Callable[[str, str, FeatureSelection], bool]
"""Whether the build of a member (by id) on a target with a selection is no_std
(manifest/crate_root.py)."""


def measure(gained: Iterable[Gained], asking: Asking, crate: str, target: str) -> Cost:
    """The cost of what each build gained (`asking`: the members with a finding of the crate on
    a target, whose builds there ask for what the fix adds to it; a build that gains the crate
    itself, or that holds none of it before, had none to ask for: `--each-feature` gave
    tendermint-rpc's default build simdutf8 for its `http-client` build's finding, and
    burn_jepa's `wgpu` build burn-fusion for its `ndarray` build's; nor does a target where the
    member has no finding: tellegen's wasm32 build, where FC010 does not apply, got rayon for
    the host's). A no_std build that does not ask for the crate is not given the crate's
    features either (`added_features`): its member is exempt from the rules that need std or
    threads. A build on another target than the finding's `target` is named with it."""
    added: set[str] = set()
    unasked: dict[str, set[str]] = {}
    builds: dict[str, list[str]] = {}
    largest = 0
    askers = {member_id for member_id, _ in asking}
    for member, packages, needs, features, before, selection, built_for in gained:
        added.update(packages)
        largest = max(largest, len(packages))
        of_crate = [shown for name, shown in features if name == crate_key(crate)]
        gains_crate = any(p.partition(" ")[0] == crate for p in packages) or not before.named(crate)
        asked = (member.id, built_for) in asking
        if (packages or needs or of_crate) and (not asked or gains_crate):
            unasked.setdefault(member.name, set()).update(packages, needs, of_crate)
            # Named where it has the finding in another build, or where it is another target's.
            label = [built_for] if target and built_for != target else []
            label += [selection.label] if member.id in askers else []
            if label:
                builds.setdefault(member.name, []).append(", ".join(label))
    named = {m: f"{m} ({'; '.join(sorted(builds[m]))})" if m in builds else m for m in unasked}
    listed = tuple((named[m], tuple(sorted(p))) for m, p in sorted(unasked.items()))
    return Cost(tuple(sorted(added)), listed, largest)


def backends_of(rules: Iterable[Rule]) -> frozenset[str]:
    """Crates whose rules count them as selected once built or once a feature selects them:
    backends, which a fix must not add to a build unasked (as crates.io compares names)."""
    return frozenset(
        crate_key(crate.name)
        for rule in rules
        if rule.used_when.built or rule.used_when.selected_by is not None
        for crate in rule.crates
    )


def safety(cost: Cost, backends: frozenset[str]) -> str:
    """Why a fix costing `cost` is not safe to apply unasked; empty when it is."""
    names = ", ".join(member for member, _ in cost.unasked)
    where = f" to the build of {names}, which did not build it before" if names else ""
    new_backends = sorted({n for a in cost.added if crate_key(n := a.split(" ")[0]) in backends})
    if new_backends:
        return f"not applied by --fix: it adds a new backend ({', '.join(new_backends)}){where}"
    if names:
        gained = sorted({p for _, packages in cost.unasked for p in packages})
        shown = ", ".join(gained[:3]) + (f" and {len(gained) - 3} more" if len(gained) > 3 else "")
        # Features count only in no_std builds (`measure`): say so where every one gains some.
        no_std = all(any(p.startswith("`") for p in gains) for _, gains in cost.unasked)
        build = "the no_std build" if no_std else "the build"
        return f"not applied by --fix: it adds {shown} to {build} of {names}, which lacked them"
    if cost.largest >= MANY_PACKAGES:
        return f"not applied by --fix: it adds {cost.largest} packages to the build"
    return ""


@dataclass
class WorkspaceBuilds:
    """Every audited build of one audit, and what an edit would make of each."""

    builds: Mapping[BuildKey, DependencyGraph]
    what_if: WhatIf
    members: Mapping[str, Package]
    """By id."""
    no_std: NoStdBuild
    _gained: dict[tuple[frozenset[ModelEdit], frozenset[PackageRef]], tuple[Gained, ...]] = field(
        default_factory=dict, init=False
    )
    _costs: dict[tuple[frozenset[ModelEdit], frozenset[PackageRef], Asking, str, str], Cost] = (
        field(default_factory=dict, init=False)
    )
    _reached: dict[frozenset[PackageRef], frozenset[BuildKey]] = field(
        default_factory=dict, init=False
    )
    _members_reached: dict[tuple[frozenset[PackageRef], str, FeatureSelection], frozenset[str]] = (
        field(default_factory=dict, init=False)
    )

    def cost(self, candidate: Candidate, asking: Asking, crate: str, target: str) -> Cost:
        """Worked out once per edit: the same candidate (a workspace entry) comes up for every
        member's finding, and comparing every build it changes again for each finding grew with
        the square of the members (500 members: 20 s)."""
        model, touches = candidate.model, candidate.touches
        key = (model, touches, asking, crate, target)
        known = self._costs.get(key)
        if known is None:
            gained = self._gained.get((model, touches))
            if gained is None:
                gained = self._gained[(model, touches)] = self._compare(model, touches)
            known = self._costs[key] = measure(gained, asking, crate, target)
        return known

    def least_added(
        self,
        member: Package,
        node: Node,
        target: str,
        selection: FeatureSelection,
        required: tuple[str, ...],
    ) -> int:
        """The fewest packages a fix clearing the member's finding of `node` adds to the
        workspace's builds: those the member's build gains when `node` gets the `required`
        features and nothing else. An edit only adds to what declarations ask, and what cargo
        resolves only grows with what is asked, so a build where the crate has them holds them
        all. Without it, a member's own candidates were resolved only to lose to a library's
        line that clears the finding for twenty members (a third of a 500-member fix search).
        0 without `required`, for a host unit, and in builds unified over the workspace, where
        the member is not all the build holds."""
        index = self.what_if.index
        if not required or node.host or self.what_if.unify_workspace:
            return 0
        position = index.by_id[member.id]
        dep = index.by_id.get(node.package.id or "")
        table = {} if dep is None else index.packages[dep].features
        if dep is None or dep == position or any(f not in table for f in required):
            return 0
        # Under a key no manifest can write (cargo takes crate names only): the resolver turns
        # dependencies on by key, and none of the member's own may share it.
        edit = NewDependency(position, dep, "(least added)", required)
        after = self.what_if.graph(frozenset({edit}), position, target, selection)
        return len(added_packages(self.builds[(member.id, target, selection)], after))

    def knows(self, candidate: Candidate) -> bool:
        """Whether what the candidate's edits gain each build they change is worked out."""
        return (candidate.model, candidate.touches) in self._gained

    def _compare(
        self, model: frozenset[ModelEdit], touches: frozenset[PackageRef]
    ) -> tuple[Gained, ...]:
        keys = sorted(self.reached(touches), key=repr)
        found: list[Gained] = []
        for member_id, target, selection in keys:
            before = self.builds[(member_id, target, selection)]
            position = self.what_if.index.by_id[member_id]
            after = self.what_if.graph(model, position, target, selection)
            known = set(self.what_if.needs(before))
            # What only Cargo.lock gains is built by no member (`Need.weak`).
            gained = (n for n in self.what_if.needs(after) if n not in known and not n.weak)
            needs = [self.what_if.describe(n) for n in gained]
            no_std = self.no_std(member_id, target, selection)
            features = added_features(before, after) if no_std else []
            member, packages = self.members[member_id], added_packages(before, after)
            found.append(Gained(member, packages, needs, features, before, selection, target))
        return tuple(found)

    def unaudited(
        self,
        candidate: Candidate,
        target: str,
        audited: frozenset[str],
        asks: Callable[[DependencyGraph], bool],
    ) -> list[Gained]:
        """What the candidate gives the default builds of the members this run does not audit
        (`-p`, a member's directory), resolved here: a workspace entry, or a library they use,
        changes them too (rerun's `-p animated_urdf` edited the workspace's ndarray, which adds
        packages to re_server). A member whose build has the finding (`asks`) asks for them."""
        gained: list[Gained] = []
        for member, position in self._unaudited_reached(candidate, audited):
            before = self.what_if.graph(frozenset(), position, target)
            after = self.what_if.graph(candidate.model, position, target)
            packages = added_packages(before, after)
            # What it turns on that Cargo.lock lacks, as for the audited builds (`_compare`).
            known = set(self.what_if.needs(before))
            new = (n for n in self.what_if.needs(after) if n not in known and not n.weak)
            needs = [self.what_if.describe(n) for n in new]
            # A no_std build asks for nothing here: `asks` knows the audited member's rules
            # only, and would judge this build as if it used std.
            no_std = self.no_std(member.id, target, DEFAULT)
            features = added_features(before, after) if no_std else []
            if (packages or needs or features) and not no_std and asks(before):
                packages, needs = [], []
            gained.append(Gained(member, packages, needs, features, before, DEFAULT, target))
        return gained

    def unaudited_cleared(
        self,
        candidate: Candidate,
        target: str,
        audited: frozenset[str],
        flagged: Callable[[DependencyGraph], bool],
    ) -> int:
        """How many members this run does not audit have the finding in their default build
        and lose it with the candidate: the run over every member counts them among those the
        edit clears (`-p app` put a fix in app's own manifest, "to keep lib lean", where the
        whole workspace's run edits lib's line, which clears lib's own finding too)."""
        cleared = 0
        for _, position in self._unaudited_reached(candidate, audited):
            if flagged(self.what_if.graph(frozenset(), position, target)):
                cleared += not flagged(self.what_if.graph(candidate.model, position, target))
        return cleared

    def _unaudited_reached(
        self, candidate: Candidate, audited: frozenset[str]
    ) -> Iterable[tuple[Package, int]]:
        """The members outside `audited` whose build may hold a package the candidate changes,
        with their positions in the index."""
        index = self.what_if.index
        touched = [index.by_id[p.id] for p in candidate.touches if p.id in index.by_id]
        reached = closure(touched, lambda p: index.dependents_at.get(p, ()))
        for member in self.members.values():
            position = index.by_id.get(member.id)
            if position is not None and member.id not in audited and position in reached:
                yield member, position

    def reached(self, touches: frozenset[PackageRef]) -> frozenset[BuildKey]:
        """The builds holding a package in `touches`: only those can change (asked for each
        candidate of each finding, and a workspace entry's are every member's builds)."""
        known = self._reached.get(touches)
        if known is None:
            holding = self._holding
            known = self._reached[touches] = frozenset(
                k for ref in touches for k in holding.get(ref, ())
            )
        return known

    def members_reached(
        self, touches: frozenset[PackageRef], target: str, selection: FeatureSelection
    ) -> frozenset[str]:
        """The ids of the members whose build on `target` in `selection` holds a package in
        `touches` (asked for each candidate of each finding: a set of ids, not build keys, which
        hash a feature selection each time they are looked up)."""
        key = (touches, target, selection)
        known = self._members_reached.get(key)
        if known is None:
            known = self._members_reached[key] = frozenset(
                member
                for member, built_for, chosen in self.reached(touches)
                if built_for == target and chosen == selection
            )
        return known

    @functools.cached_property
    def _holding(self) -> dict[PackageRef, list[BuildKey]]:
        """For each package, the builds holding it (made once: a candidate looks only at the
        builds it can change)."""
        holders: dict[PackageRef, list[BuildKey]] = {}
        # Members' builds share the graphs below them: each is looked at once.
        below_of: dict[int, tuple[DependencyGraph, list[BuildKey]]] = {}
        for key, graph in self.builds.items():
            parts = graph.parts
            if parts is None:
                for ref in graph.packages():
                    holders.setdefault(ref, []).append(key)
                continue
            root, below = parts
            holders.setdefault(root.package, []).append(key)
            below_of.setdefault(id(below), (below, []))[1].append(key)
        for below, keys in below_of.values():
            for ref in below.packages():
                holders.setdefault(ref, []).extend(keys)
        return holders
