"""Resolve many members on one target, sharing the work their dependencies have in common.

A workspace's members mostly ask the same of the same dependencies (the same `burn` features,
the same library member). Everything below a member depends only on what the member asks of
its dependencies (the seeds a split `Resolver` hands down), so the resolution below the members
(`resolve_below`) and the graph drawn from it are computed once per distinct set of seeds and
shared. This is what keeps hundreds of members close to the cost of one `cargo metadata`.

Sharing is exact: cargo rules out cycles through normal and build dependencies, so nothing below
a member can reach back into it. A dev-dependency cycle (which resolver 1 follows from the
audited member) can, and with resolver 1 the package cargo runs for is resolved alongside the
member and may sit below it; such a member is resolved in one go instead, without sharing.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeVar

from featcheck.featureset import DEFAULT, FeatureSelection
from featcheck.graph import DependencyGraph, Node
from featcheck.resolution.features import (
    ACTIVATE_VALUE,
    Below,
    FeatureState,
    Resolver,
    Seed,
    build_requests,
    resolve_below,
)
from featcheck.semantics.semver import parse_version
from featcheck.workspace.model import DEP, DEP_FEATURE, FeatureValue

if TYPE_CHECKING:  # the caller builds the context (resolution/__init__.py); this only names it
    from featcheck.resolution.context import BuildContext


@dataclass
class _Below:
    """The shared resolution below some members, and the graphs drawn from it."""

    seeds: frozenset[Seed]
    resolved: Below
    packages: frozenset[int]
    """Every package with a unit in `state`: a member among them means a cycle."""
    builder: GraphBuilder
    walks: dict[tuple[int, ...], DependencyGraph]
    """The graph below each set of the members' direct dependencies: every member graph with
    those dependencies is drawn on top of it (`DependencyGraph.rooted`)."""
    _asked: dict[int, list[Seed]] | None = None

    def asked(self, key: int) -> list[Seed]:
        """The `x/f` values the seeds and the dependencies turned on ask of unit `key`."""
        if self._asked is None:
            context, state = self.builder.context, self.resolved.state
            turned_on = state.dependencies
            asked: dict[int, list[Seed]] = {}
            for seed in self.seeds:
                if seed[1].kind == DEP_FEATURE:
                    asked.setdefault(seed[0], []).append(seed)
            for unit in self.resolved.processed:
                on = turned_on.get(unit & context.feature_mask, ())
                for edge, dep in context.feature_deps(unit):
                    if edge.optional and edge.name_in_toml not in on:
                        continue
                    for value in edge.requested:
                        if value.kind == DEP_FEATURE:
                            asked.setdefault(dep, []).append((dep, value))
            self._asked = asked
        return self._asked.get(key, [])


class TargetSession:
    """Resolves members one by one on one target, reusing what lies below them.

    A session over an edited copy of the model (a counterfactual fix, `edited`: the packages
    whose declarations changed) continues from `base`, the session over the model as it is:
    an edit only adds to what declarations ask, so every unit the unedited resolution turns on
    stays on, and only what the edited packages' units ask is followed again (`_edit`).
    Resolving and drawing the whole graph below the members again for each candidate fix was
    nine tenths of a 28-member audit.
    """

    def __init__(
        self,
        context: BuildContext,
        base: TargetSession | None = None,
        edited: frozenset[int] = frozenset(),
        *,
        resolved: TargetSession | None = None,
    ) -> None:
        self.context = context
        # Taken over from a session of the same model (the audit's, for the unedited what-if
        # builds): their contexts differ only in the optional edges Cargo.lock binds, which no
        # unedited build turns on, so the resolutions are the same; making them again was a
        # third of uv's fix search.
        self._below: dict[frozenset[Seed], _Below] = (
            {} if resolved is None else dict(resolved._below)
        )
        self._base = base
        self._edited = edited
        self._last: _Below | None = None if resolved is None else resolved._last
        """The last resolution drawn, for the next one to be drawn on (`_shared`)."""
        self._unified: dict[frozenset[tuple[int, tuple[FeatureValue, ...]]], FeatureState] = {}

    def _shared(self, seeds: frozenset[Seed]) -> _Below:
        below = self._below.get(seeds)
        if below is None:
            if self._base is not None:
                below = self._edit(self._base._shared(seeds))
            else:
                start = self._largest_part(seeds)
                if start is None:
                    # Drawn on the last drawing: members' resolutions hold most units with the
                    # same features, whose nodes and children it has (drawing each anew was a
                    # quarter of resolving burn_p2p's 28 members).
                    resolved = resolve_below(self.context, seeds)
                    below = self._drawn(seeds, resolved, self._last)
                else:
                    resolved = resolve_below(self.context, seeds - start.seeds, start.resolved)
                    # Drawn on the part's drawing too: the units the other seeds leave alone
                    # keep their nodes and children (as an edit's do, `_edit`).
                    below = self._drawn(seeds, resolved, start)
            self._below[seeds] = below
        return below

    def _drawn(self, seeds: frozenset[Seed], resolved: Below, base: _Below | None) -> _Below:
        packages = frozenset(key >> 1 for key in resolved.state.features)
        drawn = None if base is None else (base.builder, self._edited)
        builder = GraphBuilder(self.context, resolved.state, drawn)
        self._last = _Below(seeds, resolved, packages, builder, {})
        return self._last

    def _edit(self, base: _Below) -> _Below:
        processed = base.resolved.processed
        units = [
            key
            for package in sorted(self._edited & base.packages)
            for key in (package * 2, package * 2 + 1)
            if key in processed
        ]
        if not units:
            return base  # the edits lie outside: the resolution and its graphs are the same
        again = [seed for key in units for seed in self._again(base, key)]
        start = Below(base.resolved.state, processed - set(units), base.resolved.deferred)
        return self._drawn(base.seeds, resolve_below(self.context, again, start), base)

    def _again(self, base: _Below, key: int) -> list[Seed]:
        """What unit `key` did in `base`, to be done again under the edits: follow its
        dependencies, the optional ones it turned on, its features' values (an edit may add
        `dep:x` to one), and the `x/f` values asked of it (x may be newly bound)."""
        state, mask = base.resolved.state, self.context.feature_mask
        table = self.context.index.packages[key >> 1].features
        again: list[Seed] = [(key, ACTIVATE_VALUE)]
        again += [(key, FeatureValue(DEP, n)) for n in state.dependencies.get(key & mask, ())]
        again += [(key, v) for n in state.features.get(key & mask, ()) for v in table.get(n, ())]
        return again + base.asked(key)

    def _largest_part(self, seeds: frozenset[Seed]) -> _Below | None:
        """The resolution of the most of `seeds` done already, to continue from: a fix's
        candidates ask the members' dependencies for a feature or two more, and each resolved
        the whole graph below them again (a third of a 100-member audit's fix search)."""
        parts = [below for below in self._below.values() if below.seeds < seeds]
        largest = max(parts, key=lambda below: len(below.seeds), default=None)
        if largest is not None:
            return largest
        # None yet: what the first dependency is asked, resolved on its own, is one other
        # members can share (one asking the same of burn, another of a library).
        first = min((key >> 1 for key, _ in seeds), default=None)
        part = frozenset(seed for seed in seeds if seed[0] >> 1 == first)
        return self._shared(part) if part != seeds else None

    def graph(
        self, member: int, current: int | None, selection: FeatureSelection = DEFAULT
    ) -> DependencyGraph:
        """The graph of `cargo build -p MEMBER` (cargo run for `current`) on this target, with
        `selection`'s feature flags applied to MEMBER."""
        requests = build_requests(self.context, member, current, selection)
        if self.context.unify_workspace:
            # MEMBER's part of a resolution with every workspace member selected (cargo's
            # `resolver.feature-unification = "workspace"`): the features all members' builds
            # turn on, drawn only where MEMBER reaches. One resolution serves every member asked
            # the same.
            key = frozenset(requests.items())
            state = self._unified.get(key)
            if state is None:
                state = self._unified[key] = Resolver(self.context, requests, split=False).run()
            return build_graph(self.context, state, member)
        split = Resolver(self.context, requests, split=True)
        own, roots = split.run(), split.roots
        below = self._shared(frozenset(split.seeds))
        # The member's own units come from `own`, the units below it from the shared state;
        # only the member's unit is drawn from `own` (a root below it is handled apart), so
        # the two are never merged: that copy per member was the cost of large workspaces.
        top = GraphBuilder(self.context, own)
        root = root_key(self.context, member)
        children = top.children(root)
        if not below.packages.isdisjoint(roots) or any(key >> 1 in roots for key in children):
            # A root below the member (a dev-dependency cycle, or with resolver 1 the current
            # package as a dependency): its units are not in the shared state.
            state = Resolver(self.context, requests, split=False).run()
            return build_graph(self.context, state, member)
        walk = below.walks.get(tuple(children))
        if walk is None:
            walk = below.walks[tuple(children)] = DependencyGraph(below.builder.walk(children))
        return DependencyGraph.rooted(
            top.node(root), {below.builder.node(key) for key in children}, walk
        )


# Turn a feature resolution into the graph `cargo tree -e normal -p MEMBER` prints.
#
# This follows cargo's `ops/tree/graph.rs::add_pkg`: a unit is (package, host or target side); its
# normal edges are those whose `[target.X]` table applies on its side (the host's cfg for host
# units), and an optional dependency counts only if the feature resolution turned it on.
# Proc-macros and everything below them are host units. A host unit and a target unit of one
# package stay two `Node`s even with the same features: cargo tree with `--target` prints both in
# full (its `(*)` marks only the same unit again), and only the target one is linked into the
# artifact. Nodes are added in the order cargo prints them (depth first, children sorted like
# cargo's package ids) so that both paths list nodes alike.

T = TypeVar("T")
_SortKey = tuple[str, tuple[int, int, int, int], str, str, tuple[str, ...], int]


class GraphBuilder:
    """Walks the units of one feature resolution the way cargo tree prints them.

    `base` (a builder of another resolution on the same target, and the packages edits made
    since changed, if any) lends its nodes and children to the units left alone: the fix
    search draws hundreds of edited builds that differ from the audited one in a few units,
    and members' resolutions share most of theirs."""

    def __init__(
        self,
        context: BuildContext,
        state: FeatureState,
        base: tuple[GraphBuilder, frozenset[int]] | None = None,
    ) -> None:
        self.context = context
        self.state = state
        self.nodes: dict[int, Node] = {}
        self._sort_keys: dict[int, _SortKey] = {}
        self._children: dict[int, list[int]] = {}
        self._edges: dict[int, set[Node]] = {}
        self._completed = False
        self._parents_of: tuple[int, dict[int, list[int]]] | None = None
        if base is not None:
            self._inherit(*base)

    def _inherit(self, base: GraphBuilder, edited: frozenset[int]) -> None:
        """What `base` found holds for every unit with the same features (its node) and the
        same edges turned on to children with the same features (its children)."""
        base._complete()
        changed = _changed(base.state.features, self.state.features)
        redrawn = _changed(base.state.dependencies, self.state.dependencies)
        redrawn.update(key for package in edited for key in (package * 2, package * 2 + 1))
        # Children in another order or with other nodes: those of the parents of a changed
        # unit. The tables are copied whole and the few such units taken out (an edit changes
        # a handful of hundreds; testing each entry was a sixth of a fix search).
        parents = base._parents()
        dropped = redrawn.union(*(parents.get(key, ()) for key in changed))
        self.nodes = _without(base.nodes, changed)
        self._sort_keys = _without(base._sort_keys, changed)
        self._children = _without(base._children, dropped)
        self._edges = _without(base._edges, dropped)  # made only for units with children

    def _parents(self) -> dict[int, list[int]]:
        """The units whose children each unit is among (of the children found so far)."""
        if self._parents_of is None or self._parents_of[0] != len(self._children):
            parents: dict[int, list[int]] = {}
            for key, children in self._children.items():
                for child in children:
                    parents.setdefault(child, []).append(key)
            self._parents_of = (len(self._children), parents)  # a unit's children stay its
        return self._parents_of[1]

    def _complete(self) -> None:
        """Every unit's node, children and their nodes, for edited builders to take over."""
        if not self._completed:
            self._completed = True
            sides = (0,) if self.context.feature_mask == -1 else (0, 1)  # resolver 1: both
            for masked in self.state.features:
                for side in sides:
                    self._child_nodes(masked | side)

    def node(self, key: int) -> Node:
        node = self.nodes.get(key)
        if node is None:
            package = self.context.index.packages[key >> 1]
            features = frozenset(self.state.features.get(key & self.context.feature_mask, ()))
            node = self.nodes[key] = Node(package.ref, features, package.proc_macro, bool(key & 1))
        return node

    def _sort_key(self, key: int) -> _SortKey:
        """cargo tree prints children ordered by package id (name, version, source), then unit."""
        found = self._sort_keys.get(key)
        if found is None:
            node = self.node(key)
            version = parse_version(node.version) or (0, 0, 0, 0)
            source = node.package.source or ""
            features = tuple(sorted(node.features))
            found = (node.name, version, node.version, source, features, key & 1)
            self._sort_keys[key] = found
        return found

    def children(self, key: int) -> list[int]:
        """The units a unit's normal edges lead to, in cargo tree's printing order."""
        found = self._children.get(key)
        if found is None:
            turned_on = self.state.dependencies.get(key & self.context.feature_mask, ())
            found = self._children[key] = sorted(
                {
                    dep_key
                    for edge, dep_key in self.context.tree_deps(key)
                    if not edge.optional or edge.name_in_toml in turned_on
                },
                key=self._sort_key,
            )
        return found

    def walk(self, start: list[int]) -> dict[Node, set[Node]]:
        """Depth first from `start` as if they were one parent's children: each unit is
        expanded on its first visit only; nodes come in the order cargo prints them, each with
        its direct dependencies."""
        # The hundred what-if builds of a fix search walk some 500 units each, nearly all
        # known to the builder already: the loops look them up directly, and call the methods
        # that make them only for the rest (a third of the walks' time went to the calls).
        order: dict[int, None] = {}
        stack = start[::-1]
        known_children = self._children
        while stack:
            key = stack.pop()
            if key not in order:
                order[key] = None
                found = known_children.get(key)
                # Popped in order, each child after everything the one before it reaches.
                stack += reversed(self.children(key) if found is None else found)
        nodes, edges = self.nodes, self._edges
        return {
            self.node(key) if (node := nodes.get(key)) is None else node: (
                self._child_nodes(key) if (children := edges.get(key)) is None else children
            )
            for key in order
        }

    def _child_nodes(self, key: int) -> set[Node]:
        """The nodes of a unit's children, one set shared by every graph drawn here (graphs
        drawn from a resolution are never changed)."""
        found = self._edges.get(key)
        if found is None:
            found = self._edges[key] = {self.node(child) for child in self.children(key)}
        return found


def _changed(before: dict[int, set[str]], after: dict[int, set[str]]) -> set[int]:
    """Both units of each package whose set differs between two resolutions, or that only one
    has: resolver 1 keeps one set for both. A set `after` still shares with `before` is the
    same (`resolve_below` copies a set on its first write), and is passed over uncompared."""
    changed = {
        unit
        for key, value in after.items()
        if (old := before.get(key)) is not value and old != value
        for unit in (key & -2, key | 1)
    }
    changed.update(unit for key in before.keys() - after.keys() for unit in (key & -2, key | 1))
    return changed


def _without(table: dict[int, T], keys: set[int]) -> dict[int, T]:
    kept = dict(table)
    for key in keys:
        kept.pop(key, None)
    return kept


def root_key(context: BuildContext, member: int) -> int:
    """The unit `cargo tree -p MEMBER` starts from: the host one for a proc-macro."""
    return member * 2 + context.index.packages[member].proc_macro


def build_graph(context: BuildContext, state: FeatureState, member: int) -> DependencyGraph:
    return DependencyGraph(GraphBuilder(context, state).walk([root_key(context, member)]))
