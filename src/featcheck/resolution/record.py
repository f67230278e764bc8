"""Why each feature of one member's build is on, recorded from the resolver's own steps."""

from __future__ import annotations

from collections.abc import Iterable
from typing import SupportsIndex

from featcheck.featureset import DEFAULT, FeatureSelection
from featcheck.graph import shortest_path
from featcheck.resolution.context import BuildContext
from featcheck.resolution.features import (
    ACTIVATE_VALUE,
    FeatureState,
    Resolver,
    Seed,
    build_roots,
    root_requests,
    unified_requests,
)
from featcheck.workspace.model import FEATURE, NORMAL

State = tuple[int, str]
"""(unit key, masked as the features are kept; a feature, or BUILT for the unit built)."""


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

    def _states(self, steps: list[Seed], seen: set[Seed]) -> Iterable[State]:
        """The states `steps` turned on: a `dep:x` or `x/f` step stands for those its own
        steps did."""
        for step in steps:
            if step[1].kind in (FEATURE, ACTIVATE_VALUE.kind):
                yield self._state(step)
            elif step not in seen:
                seen.add(step)
                yield from self._states(self.gave.get(step, []), seen)

    def _following(self, state: State) -> list[State]:
        if not self.next:  # drawn once the resolution is over, on the first question
            for step, taken in self.gave.items():
                if step is not None and step[1].kind in (FEATURE, ACTIVATE_VALUE.kind):
                    self.next.setdefault(self._state(step), []).extend(self._states(taken, set()))
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
            for start in [*self._states(asked, set()), self._state((dep_key, ACTIVATE_VALUE))]:
                found = shortest_path(start, goal, self._following)
                if found is not None and (best is None or len(found) < len(best)):
                    best = found
        packages = self.context.index.packages
        return None if best is None else [(packages[u >> 1].id, f) for u, f in best]


def record_build(
    context: BuildContext,
    member: int,
    current: int | None = None,
    selection: FeatureSelection = DEFAULT,
) -> Record:
    """MEMBER's build resolved again as `TargetSession.graph` resolves it, recording why."""
    if context.unify_workspace:
        requests = unified_requests(context, member, selection)
    else:
        requests = root_requests(context, build_roots(context, member, current), selection)
    resolver = Resolver(context, requests, split=False)
    record = resolver.stack = Record(context, member, resolver.state)
    resolver.run()
    return record
