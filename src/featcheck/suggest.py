"""Which feature of a declared dependency would turn a missing backend feature on.

Follows the real feature tables, read once by the workspace table (`workspace/table.py`:
`f`, `dep:d`, `d/f`, `d?/f` parsed by `workspace/model.py`, and what each declaration asks of
the package it resolved to), never a table of burn versions: burn 0.22 passes `rayon` through
to burn-flex, burn 0.21 does not, and only the tables can say. A dependency is followed along
the edge the resolve holds for it, so the package reached is the one cargo picked.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator

from featcheck.graph import shortest_path
from featcheck.resolution.features import BUILT
from featcheck.workspace.model import DEP, FEATURE, NORMAL, FeatureValue, Package
from featcheck.workspace.workspace import Workspace

_State = tuple[str, str]  # (package id, feature)


class FeatureSearch:
    """Reachability over the feature tables of every package in the resolve."""

    def __init__(self, index: Workspace) -> None:
        self.index = index
        self._enabling: dict[tuple[str, str, str], list[str]] = {}
        self._chains: dict[tuple[_State, _State], list[_State] | None] = {}
        self._successors: dict[tuple[int, str], list[tuple[int, str]]] = {}
        self._reverse: dict[int, dict[tuple[int, str], list[tuple[int, str]]]] = {}
        """Per declared package: the feature graph reachable from its features, reversed."""

    def _value(self, position: int, value: FeatureValue) -> Iterator[tuple[int, str]]:
        """States a feature value of the package at `position` switches on."""
        if value.kind == FEATURE:
            yield position, value.name
            return
        if value.kind == DEP or not value.weak:
            # `d/f` turns on d's own declaration only where d is optional: a dependency that is
            # always on asks for its features whatever this value does.
            yield from self._activate(position, value.name, optional_only=value.kind != DEP)
        if value.kind != DEP:
            for edge in self.index.packages[position].edges:
                if edge.kind == NORMAL and edge.name_in_toml == value.name:
                    yield edge.dep, value.dep_feature

    def _activate(
        self, position: int, key: str, *, optional_only: bool = False
    ) -> Iterator[tuple[int, str]]:
        """States switched on when the package turns on its dependency `key`."""
        for edge in self.index.packages[position].edges:
            if edge.kind == NORMAL and edge.name_in_toml == key:
                if optional_only and not edge.optional:
                    continue
                for value in edge.requested:
                    yield from self._value(edge.dep, value)

    def _expand(self, state: tuple[int, str]) -> list[tuple[int, str]]:
        """The states one state switches on directly (kept: the searches for one crate's
        features cover the same states again and again)."""
        found = self._successors.get(state)
        if found is None:
            position, feature = state
            found = self._successors[state] = [
                following
                for value in self.index.packages[position].features.get(feature, ())
                for following in self._value(position, value)
            ]
        return found

    def chain(self, start: _State, goal: _State) -> list[_State] | None:
        """The shortest chain of features from `start` to `goal`, both included, or None.

        Weak `dep?/feature` entries are followed as if the dependency were on: the chain says
        how the feature *would* arrive, which is what a user needs to see. Every finding of a
        crate asks the same questions, so each answer is kept (callers must not change it).
        """
        key = (start, goal)
        if key in self._chains:
            return self._chains[key]
        by_id, packages = self.index.by_id, self.index.packages
        chain: list[_State] | None = None
        if start[0] in by_id and goal[0] in by_id:
            found = shortest_path(
                (by_id[start[0]], start[1]),
                (by_id[goal[0]], goal[1]),
                self._expand,
            )
            if found is not None:
                chain = [(packages[position].id, feature) for position, feature in found]
        self._chains[key] = chain
        return chain

    def describe(self, chain: list[_State]) -> str:
        """`burn default → burn-core/default → … → burn-flex/rayon`, naming each package once."""
        first_package, first_feature = chain[0]
        first = self.index[first_package].ref.name
        parts = [f"{first} {first_feature}" if first_feature != BUILT else first]
        for (previous, _), (package_id, feature) in itertools.pairwise(chain):
            # A feature of the same package needs no package name again; a package built at
            # all is its name alone.
            name = self.index[package_id].ref.name
            if feature == BUILT:
                parts.append(name)
            else:
                parts.append(feature if package_id == previous else f"{name}/{feature}")
        return " → ".join(parts)

    def enabling_features(
        self, declared: Package, goal_package: Package, goal_feature: str
    ) -> list[str]:
        """Features of `declared` that switch on `goal_feature` of `goal_package`, best first.

        A feature named like the goal comes first, `default` last. Features that only get
        there by switching on `default` themselves (burn's `doc`) are left out: they are the
        defaults under another name, and advice to turn on `doc` would mislead.
        """
        key = (declared.id, goal_package.id, goal_feature)
        known = self._enabling.get(key)
        if known is not None:
            return known
        by_id = self.index.by_id
        position = by_id.get(declared.id)
        if position is None or goal_package.id not in by_id:
            return []
        # One walk from all of the package's features and one walk back from each goal answer
        # every feature's question at once (a question per feature re-walked the same tables).
        reverse = self._reverse.get(position)
        if reverse is None:
            starts = [(position, feature) for feature in declared.features]
            reverse = self._reverse[position] = self._reverse_edges(starts)
        to_goal = _reaching(reverse, (by_id[goal_package.id], goal_feature))
        to_defaults = _reaching(reverse, (position, "default"))
        found = [
            f
            for f in declared.features
            if (position, f) in to_goal and (f == "default" or (position, f) not in to_defaults)
        ]
        found.sort(key=lambda f: (f != goal_feature, f == "default", len(f), f))
        self._enabling[key] = found
        return found

    def _reverse_edges(
        self, starts: list[tuple[int, str]]
    ) -> dict[tuple[int, str], list[tuple[int, str]]]:
        """For each state reachable from `starts`, the states that switch it on directly."""
        reverse: dict[tuple[int, str], list[tuple[int, str]]] = {}
        seen = set(starts)
        pending = list(starts)
        while pending:
            state = pending.pop()
            for following in self._expand(state):
                reverse.setdefault(following, []).append(state)
                if following not in seen:
                    seen.add(following)
                    pending.append(following)
        return reverse


def _reaching(
    reverse: dict[tuple[int, str], list[tuple[int, str]]], goal: tuple[int, str]
) -> set[tuple[int, str]]:
    """The states from which `goal` is switched on (`goal` itself included)."""
    found = {goal}
    pending = [goal]
    while pending:
        for earlier in reverse.get(pending.pop(), ()):
            if earlier not in found:
                found.add(earlier)
                pending.append(earlier)
    return found
