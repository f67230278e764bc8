"""Why each feature of a build is on, or how a missing one would arrive, recorded from the
resolver's own steps."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable
from typing import SupportsIndex

from featcheck.featureset import DEFAULT, FeatureSelection
from featcheck.graph import breadth_first, closure
from featcheck.resolution.context import BuildContext
from featcheck.resolution.features import (
    ACTIVATE_VALUE,
    BUILT,
    FeatureState,
    Resolver,
    Seed,
    build_requests,
)
from featcheck.semantics.cfg import TargetCfg
from featcheck.workspace.model import DEP, FEATURE, NORMAL, Edge, FeatureValue, Package, PackageRef
from featcheck.workspace.workspace import Workspace

State = tuple[int, str]
"""(unit key, masked as the features are kept; a feature, or BUILT for the unit built)."""
_Feature = tuple[str, str]  # (package id, feature)


class Record(list[Seed]):
    """Why each feature of one member's build is on: the resolver's work stack, noting for each
    step the steps taken while it was (under None: what the command line asked). Only the few
    builds whose findings show a chain are resolved again with it (`record_build`); every
    other resolution keeps a plain list and pays nothing for it."""

    def __init__(self, context: BuildContext, member: int, state: FeatureState) -> None:
        super().__init__()
        self.context = context
        self.member = member
        self.state = state
        """What the build turned on (the resolver fills it)."""
        self.taking: Seed | None = None
        self.gave: dict[Seed | None, list[Seed]] = {}
        self.next: dict[State, list[State]] = {}
        """From each feature turned on and each unit built, the states its steps turned on
        next, in the order the resolver took them."""
        self.weakly: set[tuple[State, State]] = set()
        """The steps of `next` taken through a weak `x?/f`, which does nothing while x is off."""

    def pop(self, index: SupportsIndex = -1) -> Seed:
        self.taking = super().pop(index)
        return self.taking

    def append(self, step: Seed) -> None:
        self.gave.setdefault(self.taking, []).append(step)
        super().append(step)

    def extend(self, steps: Iterable[Seed]) -> None:
        for step in steps:
            self.append(step)

    def _state(self, step: Seed) -> State:
        return step[0] & self.context.feature_mask, step[1].name

    def _states(
        self, steps: list[Seed], seen: set[tuple[Seed, bool]], weak: bool = False
    ) -> Iterable[tuple[State, bool]]:
        """The states `steps` turned on, each with whether a weak value led there: a `dep:x` or
        `x/f` step stands for those its own steps did."""
        for step in steps:
            if step[1].kind in (FEATURE, ACTIVATE_VALUE.kind):
                yield self._state(step), weak
            elif (step, weak) not in seen:
                seen.add((step, weak))
                yield from self._states(self.gave.get(step, []), seen, weak or step[1].weak)

    def _following(self, state: State) -> list[State]:
        if not self.next:  # drawn once the resolution is over, on the first question
            for step, taken in self.gave.items():
                if step is not None and step[1].kind in (FEATURE, ACTIVATE_VALUE.kind):
                    here, reached = self._state(step), list(self._states(taken, set()))
                    self.next.setdefault(here, []).extend(found for found, _ in reached)
                    # A weak `x?/f` beside the step's own `dep:x` is not weak there.
                    strongly = {unit for (unit, _), weak in reached if not weak}
                    self.weakly.update((here, f) for f, weak in reached if f[0] not in strongly)
        return self.next.get(state, [])

    def through_declaration(self, key: str, goal: State) -> list[tuple[str, str]] | None:
        """The shortest chain, as (package id, feature) from the dependency's state to `goal`,
        by which the member's normal dependency `key` (the features its line asks for, then its
        package built at all) switched `goal` on; None when it did not."""
        unit = self.member * 2 + self.context.index.packages[self.member].proc_macro
        turned_on = self.state.dependencies.get(unit & self.context.feature_mask, ())
        best: list[State] | None = None
        for edge, dep_key in self.context.feature_deps(unit):
            if edge.kind is not NORMAL or edge.name_in_toml != key:
                continue
            if edge.optional and key not in turned_on:
                continue
            asked = [(dep_key, value) for value in edge.requested]
            starts = [state for state, _ in self._states(asked, set())]
            for start in [*starts, self._state((dep_key, ACTIVATE_VALUE))]:
                found = breadth_first((start,), goal, self._following)
                if found is not None and (best is None or len(found) < len(best)):
                    best = found
        packages = self.context.index.packages
        return None if best is None else [(packages[u >> 1].id, f) for u, f in best]


def record_build(
    context: BuildContext,
    member: int,
    current: int | None = None,
    selection: FeatureSelection = DEFAULT,
    tests: bool = False,
) -> Record:
    """MEMBER's build resolved again as `TargetSession.graph` resolves it, recording why;
    with `tests`, its test build (`cargo test -p MEMBER`: its dev-dependencies too)."""
    resolver = Resolver(context, build_requests(context, member, current, selection), split=False)
    resolver.with_dev = resolver.with_dev or tests
    record = resolver.stack = Record(context, member, resolver.state)
    resolver.run()
    return record


class _Everything(Record):
    """Every feature turned on at once of one package and of each package that may depend on
    it (`above`), in which `x?/f` turns on `f` of x and nothing else, as with cargo. A step for
    any other package is dropped: nothing there leads back up. The resolver hands a weak value
    that waited for `x` to the step that turned `x` on, and has a weak value turn `x` on again:
    neither is noted here, so a chain shows a weak value where it *would* arrive, not how x
    got on."""

    def __init__(self, resolver: Resolver, above: set[int]) -> None:
        # No member: only paths between features are asked of this record.
        super().__init__(resolver.context, -1, resolver.state)
        self.above = above
        packages, split = resolver.packages, resolver.context.decoupled
        self.extend(
            (p * 2 + (split and packages[p].proc_macro), FeatureValue(FEATURE, f))
            for p in above
            for f in packages[p].features
        )

    def append(self, step: Seed) -> None:
        if step[0] >> 1 not in self.above:
            return
        taking = self.taking
        if taking is None or step[0] != taking[0] or not _hands_on(taking[1], step[1]):
            self.gave.setdefault(taking, []).append(step)
        list.append(self, step)


def _hands_on(taking: FeatureValue, step: FeatureValue) -> bool:
    """Whether `step`, pushed while `taking` was taken, is one of those `_Everything` skips."""
    if taking.kind == DEP:
        return step.weak  # the weak values that waited for the dependency
    return taking.weak and step.kind == DEP


class FeatureSearch:
    """Which feature of a declared dependency would turn a missing feature on, and how.

    Read off the resolver's own steps, never a table of burn versions (burn 0.22 passes `rayon`
    through to burn-flex, burn 0.21 does not, and only the feature tables can say): for the
    package of the missing feature, one resolution turns on every feature of it and of every
    package that may depend on it, recorded as in `record_build`. So a weak `dep?/feature`
    counts as if the dependency were on: the chain says how the feature *would* arrive, which
    is what a user needs to see. Only the declarations for the finding's target take part, as
    with cargo's resolver 2 and 3: a feature that delivers through an Android-only dependency
    offers nothing on Linux (resolver 1 counts every platform, as cargo does). A dependency
    is followed along the edge the resolve holds for it, so the package reached is the one
    cargo picked. Host and target are kept apart as the workspace's resolver keeps them
    (`split_sides`, resolver 2 and 3): a proc-macro's or a build script's dependencies are
    other units than those the member links, and no path through them delivers a feature there.
    """

    def __init__(
        self,
        index: Workspace,
        split_sides: bool,
        host: TargetCfg,
        bound: Callable[[int], tuple[Edge, ...]] | None = None,
    ) -> None:
        self.index = index
        self.host = host
        # The edges Cargo.lock binds where cargo's resolve has none, of the workspace's own
        # packages: `cargo metadata` resolves the members' default features, and leaves out
        # the optional dependencies another of their features turns on (a library's
        # `pretrained = ["dep:burn-store"]`, which offers what burn-store brings), while
        # `--no-exec` reads them off Cargo.lock. Registry packages' are left alone: binding
        # theirs read every package of the workspace (37 ms of burn_p2p's first question,
        # 187 ms with `--no-exec`).
        self._local = {index.by_id[p.id] for p in index.unpublished() if p.id in index.by_id}
        self._bound = None if bound is None else lambda p: bound(p) if p in self._local else ()
        self._bound_dependents: dict[int, list[int]] | None = None
        """By position, the local packages those edges bind to it (made on the first question)."""
        self.version = 2 if split_sides else 1
        self._records: dict[tuple[str, int], _Everything] = {}
        self._chains: dict[tuple[_Feature, _Feature, str], list[_Feature] | None] = {}
        self._inside: dict[tuple[object, ...], list[_Feature] | None] = {}
        self._enabling: dict[tuple[str, str, str, str], list[str]] = {}

    def _record(self, goal: int, cfg: TargetCfg) -> _Everything:
        """The resolution of everything that may lead to the package at `goal` on `cfg`'s
        target, made on the first question about it (most audits ask none)."""
        key = (cfg.triple, goal)
        if key not in self._records:
            context = BuildContext(self.index, cfg, self.host, self.version, bound=self._bound)
            resolver = Resolver(context, {}, split=False)
            resolver.stack = self._records[key] = _Everything(resolver, self._above(goal))
            resolver.run()
        return self._records[key]

    def _above(self, goal: int) -> set[int]:
        """The package at `goal` and every package that may depend on it: every package the
        resolve binds one of them to (dev-dependencies included, a few more than needed),
        found without indexing or reading the hundreds of packages that cannot lead to it."""
        bound = self._bound_dependents
        if bound is None:
            bound = self._bound_dependents = {}
            locked = self._bound
            if locked is not None:
                for position in sorted(self._local):
                    for edge in locked(position):
                        bound.setdefault(edge.dep, []).append(position)
        resolved = self.index.dependents_at
        return closure([goal], lambda p: (*resolved.get(p, ()), *bound.get(p, ())))

    def _state(self, feature: _Feature) -> State | None:
        """The unit of the package's feature: the host's for a proc-macro, where that is
        apart, else the target's (what a member's normal dependencies link)."""
        position = self.index.by_id.get(feature[0])
        if position is None:
            return None
        host = self.version > 1 and self.index.packages[position].proc_macro
        return position * 2 + host, feature[1]

    def chain(
        self,
        start: _Feature,
        goal: _Feature,
        cfg: TargetCfg,
        within: frozenset[PackageRef] | None = None,
    ) -> list[_Feature] | None:
        """The shortest chain of features from `start` to `goal` on `cfg`'s target, both
        included, or None. With `within` (a build's packages), a weak `x?/f` leads on only
        where x is one of them: burn's `burn-ndarray?/default` does nothing in a build without
        burn-ndarray. Every finding of a crate asks the same questions, so each answer without
        `within` is kept (callers must not change it)."""
        if within is not None:
            inside = (start, goal, cfg.triple, within)
            if inside not in self._inside:
                self._inside[inside] = self._within(start, goal, cfg, within)
            return self._inside[inside]
        key = (start, goal, cfg.triple)
        if key not in self._chains:
            first, last = self._state(start), self._state(goal)
            found = None
            if first is not None and last is not None:
                following = self._record(last[0] >> 1, cfg)._following
                found = breadth_first((first,), last, following)
            packages = self.index.packages
            self._chains[key] = (
                None if found is None else [(packages[u >> 1].id, f) for u, f in found]
            )
        return self._chains[key]

    def _within(
        self, start: _Feature, goal: _Feature, cfg: TargetCfg, within: frozenset[PackageRef]
    ) -> list[_Feature] | None:
        first, last = self._state(start), self._state(goal)
        if first is None or last is None:
            return None
        record, packages = self._record(last[0] >> 1, cfg), self.index.packages

        def inside(state: State) -> list[State]:
            return [
                s
                for s in record._following(state)
                if (state, s) not in record.weakly or packages[s[0] >> 1].ref in within
            ]

        found = breadth_first((first,), last, inside)
        return None if found is None else [(packages[u >> 1].id, f) for u, f in found]

    def describe(self, chain: list[_Feature]) -> str:
        """`burn default → burn-core/default → … → burn-flex/rayon`, naming each package once."""
        first_package, first_feature = chain[0]
        first = self.index[first_package].ref.name
        parts = [f"{first} {first_feature}" if first_feature != BUILT else first]
        for (previous, _), (package_id, feature) in itertools.pairwise(chain):
            # A feature of the same package needs no package name again; a package built at
            # all is its name alone.
            name = self.index[package_id].ref.name
            if feature == BUILT:
                if parts[-1] != name:  # not again after the implicit feature of an optional dep
                    parts.append(name)
            else:
                parts.append(feature if package_id == previous else f"{name}/{feature}")
        return " → ".join(parts)

    def unfollowed(self, declared: Package, cfg: TargetCfg) -> list[str]:
        """Keys of the optional normal dependencies of `declared`, a package of the workspace's
        own, on `cfg`'s target that no chain passes: Cargo.lock holds them (it resolves every
        feature of the workspace's packages), but cargo's resolve binds no package to them (it
        leaves out those no build turns on), and featcheck read no manifest of theirs. A
        registry package's optional dependencies are the crate's published features: the rules
        name the crates they know, and listing burn's backends under every burn finding would
        say nothing."""
        if not declared.unresolved or not declared.ref.is_local:
            return []
        bound = self._bound(self.index.by_id[declared.id]) if self._bound is not None else ()
        followed = {edge.name_in_toml for edge in bound}
        return sorted(
            {
                d.key
                for d in declared.declarations
                if d.kind is NORMAL and d.key in declared.unresolved and d.key not in followed
                if cfg.applies(d.target)
            }
        )

    def enabling_features(
        self, declared: Package, goal_package: Package, goal_feature: str, cfg: TargetCfg
    ) -> list[str]:
        """Features of `declared` that switch on `goal_feature` of `goal_package` on `cfg`'s
        target, best first.

        A feature named like the goal comes first, `default` last. Features that only get
        there by switching on `default` themselves (burn's `doc`) are left out: they are the
        defaults under another name, and advice to turn on `doc` would mislead.
        """
        key = (declared.id, goal_package.id, goal_feature, cfg.triple)
        known = self._enabling.get(key)
        if known is None:
            goal = self._state((goal_package.id, goal_feature))
            own = self._state((declared.id, "default"))
            known = self._enabling[key] = []
            if goal is not None and own is not None:
                following = self._record(goal[0] >> 1, cfg)._following
                for feature in declared.features:
                    reached = closure([(own[0], feature)], following)
                    if goal in reached and (feature == "default" or own not in reached):
                        known.append(feature)
                known.sort(key=lambda f: (f != goal_feature, f == "default", len(f), f))
        return known
