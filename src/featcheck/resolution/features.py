"""cargo's feature resolver (`core/resolver/features.rs`) for one member on one target.

The rules are cargo's, step for step: a package is activated with the feature values its
dependent asks for, its non-optional dependencies follow, `dep:x` and `x/f` turn optional
dependencies on, and a weak `x?/f` waits until something else turns `x` on. cargo recurses; this
walks a work stack instead, so deep graphs cannot hit Python's recursion limit. The result is the
same because every rule only ever adds to the sets it writes, so the order of the steps cannot
change where they end up.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, TypeVar

from featcheck.errors import FeatcheckError
from featcheck.featureset import DEFAULT, FeatureSelection
from featcheck.workspace.model import (
    DEP,
    FEATURE,
    FeatureValue,
    parse_feature_value,
)

if TYPE_CHECKING:  # the session builds the context and hands it in; this only names its type
    from featcheck.resolution.context import BuildContext, DepList

# Work items are (key, value): a value of kind _ACTIVATE means "build this unit and follow its
# non-optional dependencies"; every other value is a feature value applied to the unit.
_ACTIVATE = -1
ACTIVATE_VALUE = FeatureValue(_ACTIVATE, "")

BUILT = ""
"""The feature of a state that stands for the package being built at all: its non-optional
dependency lines then ask for their features (jsonschema's own `serde_json` line asks for
`float_roundtrip`, whatever feature of jsonschema is on)."""


@dataclass
class FeatureState:
    """What one build turned on, by unit key (`package * 2 + host`, masked for resolver 1)."""

    features: dict[int, set[str]] = field(default_factory=dict)
    """Enabled features of every unit the build compiles (cargo's `activated_features`)."""
    dependencies: dict[int, set[str]] = field(default_factory=dict)
    """Optional dependencies turned on, by manifest key (cargo's `activated_dependencies`)."""


Seed = tuple[int, FeatureValue]
"""A step handed from a build's own packages to the packages below them."""


class FeatureSelectionError(FeatcheckError):
    """A build configuration cargo would refuse for this member (an unknown feature)."""


def requested_values(
    context: BuildContext, root: int, selection: FeatureSelection = DEFAULT
) -> tuple[FeatureValue, ...]:
    """What the command line asks of a selected package (cargo's `fvs_from_requested`): the
    `--features` values, then every feature with `--all-features`, else `default` unless
    `--no-default-features`. `selection` is what applies to this package (see
    `featureset.member_selection`). Raises FeatureSelectionError for a plain feature the
    package does not define, as cargo's resolver does."""
    package = context.index.packages[root]
    requested: list[FeatureValue] = []
    for text in selection.features:
        value = parse_feature_value(text)
        if value.kind == FEATURE and value.name not in package.features:
            raise FeatureSelectionError(
                f"package `{package.ref.name} v{package.ref.version}` does not have the feature "
                f"`{value.name}`"
            )
        requested.append(value)
    if selection.all_features:
        requested += [FeatureValue(FEATURE, name) for name in package.features]
    elif not selection.no_default_features and "default" in package.features:
        requested.append(FeatureValue(FEATURE, "default"))
    return tuple(requested)


def build_requests(
    context: BuildContext,
    member: int,
    current: int | None = None,
    selection: FeatureSelection = DEFAULT,
) -> dict[int, tuple[FeatureValue, ...]]:
    """What `cargo build -p MEMBER` (cargo run for `current`) with `selection`'s flags asks of
    each package it resolves as a root, MEMBER first with `selection`.

    Where features unify over the workspace, every other workspace member is one too, with the
    flags as they apply to it, as with `--workspace` (a plain feature where the member defines
    it, `dep/feature` where it declares `dep`).

    Else, with resolver 1, `current` (the package cargo runs for: the manifest in the working
    directory or given with `--manifest-path`) with its defaults, featcheck applying no flags
    to it (see `audit`): in a workspace whose root is a package, cargo resolves that package
    alongside every `-p` one (`members_with_features_old`), so its features and
    dev-dependencies count even though only MEMBER is built.
    """
    requests = {member: requested_values(context, member, selection)}
    if context.unify_workspace:
        index = context.index
        for position in (index.by_id[m] for m in index.member_ids):
            if position in requests:
                continue
            package = index.packages[position]
            dependencies = {edge.name_in_toml for edge in context.edges(position)}
            kept = tuple(
                text
                for text in selection.features
                if (
                    text in package.features
                    if "/" not in text
                    else text.partition("/")[0].removesuffix("?") in dependencies  # or `dep?/f`
                )
            )
            applied = selection._replace(features=kept)
            requests[position] = requested_values(context, position, applied)
    elif current is not None and current != member and context.resolver == 1:
        requests[current] = requested_values(context, current, DEFAULT)
    return requests


@dataclass
class Below:
    """A finished resolution below some roots, with what more seeds would continue from. Its
    sets may be those of the resolution it continued from: they are read, never written."""

    state: FeatureState
    processed: set[int]
    deferred: dict[tuple[int, str], set[FeatureValue]]


def resolve_below(
    context: BuildContext, seeds: Iterable[Seed], start: Below | None = None
) -> Below:
    """Everything `seeds` turn on below the roots that handed them over, continuing from
    `start` (the resolution of some of them): every rule only adds, so the end is the same."""
    resolver = Resolver(context, {}, split=False)
    if start is not None:
        resolver.continue_from(start)
    resolver.stack.extend(seeds)
    return Below(resolver.run(), resolver.processed, resolver.deferred)


Key = TypeVar("Key")
Item = TypeVar("Item")


def _own(table: dict[Key, set[Item]], key: Key, borrowed: set[Key]) -> set[Item]:
    """`table[key]`, made the resolver's own to write to (see `Resolver.continue_from`)."""
    found = table.get(key)
    if found is None:
        found = table[key] = set()
    elif key in borrowed:
        borrowed.remove(key)
        found = table[key] = set(found)
    return found


class Resolver:
    def __init__(
        self, context: BuildContext, requests: dict[int, tuple[FeatureValue, ...]], split: bool
    ) -> None:
        self.context = context
        self.packages = context.index.packages
        self.mask = context.feature_mask
        self.requests = requests
        self.roots = tuple(requests)
        self.split = split
        self.with_dev = not context.decoupled
        self.state = FeatureState()
        self.processed: set[int] = set()
        self.deferred: dict[tuple[int, str], set[FeatureValue]] = {}
        self.stack: list[Seed] = []
        self.seeds: list[Seed] = []
        self.borrowed: tuple[set[int], set[int], set[tuple[int, str]]] = (set(), set(), set())
        """The keys of `state.features`, `state.dependencies` and `deferred` whose sets are
        still those of the resolution continued from (`continue_from`)."""

    def continue_from(self, start: Below) -> None:
        """Start where `start` ended, sharing its sets until the first write to each: a fix's
        what-if resolution adds to a few of thousands, and copying them all was the largest
        cost of a 28-member audit after an edit. `start` itself stays as it was."""
        known = start.state
        self.state = FeatureState(dict(known.features), dict(known.dependencies))
        self.processed = set(start.processed)
        self.deferred = dict(start.deferred)
        self.borrowed = (set(known.features), set(known.dependencies), set(start.deferred))

    def deps(self, key: int) -> DepList:
        """cargo's `deps()`: dev-dependencies only of the roots, and only for resolver 1."""
        found = self.context.feature_deps(key)
        if self.with_dev and key >> 1 in self.roots:
            # The dependency resolve behind `cargo tree -p X` holds dev-deps of its roots only.
            return found + self.context.feature_deps(key, dev=True)
        return found

    def activate(self, key: int, requested: tuple[FeatureValue, ...]) -> None:
        """cargo's `activate_pkg`: queue the unit itself, then the values asked of it."""
        self.stack.append((key, ACTIVATE_VALUE))
        self.stack.extend([(key, value) for value in requested])

    def run(self) -> FeatureState:
        for root, requested in self.requests.items():
            package = self.packages[root]
            key = root * 2
            if self.context.decoupled and package.proc_macro:
                # cargo activates a selected proc-macro for both sides (see `do_resolve`).
                self.activate(key, requested)
                key += 1
            self.activate(key, requested)
        stack, features, mask, packages = self.stack, self.state.features, self.mask, self.packages
        roots, split, seeds, borrowed = self.roots, self.split, self.seeds, self.borrowed[0]
        processed = self.processed
        while stack:
            key, value = stack.pop()
            if split and key >> 1 not in roots:
                seeds.append((key, value))
                continue
            kind = value.kind
            if kind == FEATURE:
                enabled = features.get(key & mask)
                if enabled is None:
                    enabled = features[key & mask] = set()
                elif value.name in enabled:
                    continue
                elif key & mask in borrowed:
                    enabled = _own(features, key & mask, borrowed)
                enabled.add(value.name)
                for implied in packages[key >> 1].features.get(value.name, ()):
                    stack.append((key, implied))
            elif kind == _ACTIVATE:
                if key not in processed:  # a unit's dependencies are followed once
                    self._follow_dependencies(key)
            elif kind == DEP:
                self._activate_dependency(key, value.name)
            else:
                self._activate_dep_feature(key, value)
        return self.state

    def _follow_dependencies(self, key: int) -> None:
        """Build unit `key` (once: features added later are pushed straight to the unit)."""
        self.state.features.setdefault(key & self.mask, set())
        self.processed.add(key)
        for edge, dep_key in self.deps(key):
            if not edge.optional:
                self.activate(dep_key, edge.requested)

    def _activate_dependency(self, key: int, dep_name: str) -> None:
        """`dep:x`: mark x on, hand it any weak features that waited, and activate it."""
        _own(self.state.dependencies, key & self.mask, self.borrowed[1]).add(dep_name)
        # The weak values that waited are taken again, now that x is on: a record of the
        # resolution then has them, not `dep:x`, ask for their features.
        self.stack.extend((key, value) for value in self.deferred.pop((key, dep_name), ()))
        for edge, dep_key in self.deps(key):
            if edge.name_in_toml == dep_name:
                self.activate(dep_key, edge.requested)

    def _activate_dep_feature(self, key: int, value: FeatureValue) -> None:
        """`x/f` and `x?/f`: feature f of every declaration of x that takes part."""
        dep_name = value.name
        for edge, dep_key in self.deps(key):
            if edge.name_in_toml != dep_name:
                continue
            if edge.optional:
                turned_on = self.state.dependencies.get(key & self.mask, ())
                if value.weak and dep_name not in turned_on:
                    # Weak: wait in case something turns the dependency on later.
                    _own(self.deferred, (key, dep_name), self.borrowed[2]).add(value)
                    continue
                self.stack.append((key, FeatureValue(DEP, dep_name)))
                if not value.weak and dep_name in self.packages[key >> 1].features:
                    # `x/f` also turns on the implicit feature `x`, unless `dep:x` hid it.
                    self.stack.append((key, FeatureValue(FEATURE, dep_name)))
            self.stack.append((dep_key, parse_feature_value(value.dep_feature)))
