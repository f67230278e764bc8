"""Ask the resolver "what if": resolve members again with edited declarations, in memory.

A candidate fix is a handful of edits to dependency declarations. Each edit only ever adds to
what a declaration asks of the package it names (features, or `default` when
`default-features = false` goes), or adds a declaration, so it can be applied to the resolver's
model directly: the edges of the declaring packages get the extra feature values, and cargo's
feature resolver runs again over the edited model. featcheck's resolver is proven equal to
`cargo tree -e normal -p MEMBER --target T` (tests/resolution/test_resolver_*.py), so this
answers what cargo would build after the edit without copying the workspace or starting cargo.

An edit can turn on dependencies cargo's resolve has no edge for (an optional dependency
nothing used before). Where Cargo.lock holds a version cargo would bind it to (`lockcheck.py`),
the edge is in the model from the start (an optional edge nothing turns on changes nothing), so
each what-if build is resolved once; what is left is cargo's question (`overlay.py`).
"""

from __future__ import annotations

import copy
import weakref
from collections import OrderedDict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace

from featcheck.deadline import NO_DEADLINE, Deadline
from featcheck.featureset import DEFAULT, FeatureSelection
from featcheck.fixes.lockcheck import LockView, Need, needs_of
from featcheck.graph import DependencyGraph, Node
from featcheck.resolution.context import BuildContext
from featcheck.resolution.record import Record, record_build
from featcheck.resolution.session import TargetSession
from featcheck.semantics.cfg import TargetCfg
from featcheck.workspace.model import (
    DEP,
    FEATURE,
    NORMAL,
    Edge,
    FeatureValue,
    ModelEdit,
    MoreFeatureValues,
    NewDependency,
    Package,
    parse_feature_values,
)
from featcheck.workspace.workspace import Workspace

_DEFAULT_VALUE = FeatureValue(FEATURE, "default")
_KEPT_SESSIONS = 64
"""Edit sets whose resolutions (and graphs) are kept, the most recently asked: rerun's 149
members kept every one, 2.3 GB at the peak; 64 keep 1.1 GB, for 5-20% more time there (32: 0.65
GB, 20-25%). A workspace entry's edit, asked for every member, stays among them."""


def _edited(index: Workspace, package: int, edits: Sequence[ModelEdit]) -> Package:
    """The package at `package` with `edits` made: its edges, and its feature table with the
    values added to a feature and `dep:KEY` added to each feature a new optional entry hides
    behind."""
    edges, features = list(index.packages[package].edges), dict(index.packages[package].features)
    for edit in edits:
        if isinstance(edit, MoreFeatureValues):
            values = parse_feature_values(edit.values)
            features[edit.feature] = (*features.get(edit.feature, ()), *values)
            continue
        if isinstance(edit, NewDependency):
            requested = parse_feature_values(edit.features)
            optional = edit.behind is not None
            edges.append(Edge(edit.dep, edit.key, NORMAL, edit.platform, optional, requested))
            if edit.behind is not None:
                hidden = FeatureValue(DEP, edit.key)
                features[edit.behind] = (*features.get(edit.behind, ()), hidden)
            continue
        edited = (edit.key, edit.kind, edit.platform)
        for position, edge in enumerate(edges):
            if (edge.name_in_toml, edge.kind, edge.platform) != edited:
                continue
            added = parse_feature_values(edit.features)
            if edit.defaults and "default" in index.packages[edge.dep].features:
                added += (_DEFAULT_VALUE,)
            edges[position] = edge._replace(requested=edge.requested + added)
    return replace(index.packages[package], edges=tuple(edges), features=features)


def edited_index(index: Workspace, edits: Iterable[ModelEdit]) -> Workspace:
    """A copy of `index` with `edits` made; packages no edit touches are shared."""
    by_package: dict[int, list[ModelEdit]] = {}
    for edit in edits:
        by_package.setdefault(edit.package, []).append(edit)
    changed = {position: _edited(index, position, edits) for position, edits in by_package.items()}
    # A copy, not `replace`: that checks the answer again by indexing every member (a fifth
    # of a 100-member fix search). The copy's members are looked up anew if ever asked for.
    edited = copy.copy(index)
    object.__setattr__(edited, "packages", index.packages.replaced(changed))
    edited.__dict__.pop("members", None)
    return edited


@dataclass
class WhatIf:
    """Resolves members of one workspace again under edits, sharing work between members."""

    index: Workspace
    cfgs: dict[str, TargetCfg]
    host: TargetCfg
    resolver: int
    current: int | None
    """The package cargo runs for (matters for resolver 1 only), as in `resolve_builds`."""
    lock: LockView | None = None
    """Binds what an edit turns on to locked versions (`_locked_edges`); None: nothing is."""
    deadline: Deadline = NO_DEADLINE
    unify_workspace: bool = False
    """Features unify over every workspace member's build (see `BuildContext`)."""
    audited: dict[str, TargetSession] = field(default_factory=dict)
    """The audit's own session of each target, by triple: the unedited builds are its."""

    def __post_init__(self) -> None:
        self._sessions: OrderedDict[
            tuple[frozenset[ModelEdit], str],
            tuple[TargetSession, dict[tuple[int, FeatureSelection], DependencyGraph]],
        ] = OrderedDict()
        self._unedited: dict[str, TargetSession] = {}
        # By the identity of a shared graph, with a weak reference that tells whether the
        # identity is still its: the graph goes with the sessions holding it, not with this.
        self._below_needs: dict[int, tuple[weakref.ref[DependencyGraph], frozenset[Need]]] = {}
        self._needs_of: dict[Node, tuple[Need, ...]] = {}
        self.locked = None if self.lock is None else _locked_edges(self.index, self.lock)
        """The edges Cargo.lock binds where cargo's resolve has none (`_locked_edges`)."""

    def needs(self, graph: DependencyGraph) -> list[Need]:
        """Dependencies a (counterfactual) build turns on that neither the resolve nor a
        locked version holds: cargo would first have to pick their versions (or refuse)."""
        parts = graph.parts
        if parts is None:
            found = self._needs_in(graph.nodes())
        else:
            # Candidate fixes of many members share the graph below them: it is looked at once.
            root, below = parts
            known = self._below_needs.get(id(below))
            if known is None or known[0]() is not below:
                below_needs = frozenset(self._needs_in(below.nodes()))
                known = self._below_needs[id(below)] = (weakref.ref(below), below_needs)
            found = self._needs_in((root,)) | known[1]
        lock = self.lock
        return [n for n in sorted(found) if lock is None or not isinstance(lock.check(n), tuple)]

    def describe(self, need: Need) -> str:
        """`package/dependency`, as notes name a need."""
        return f"{self.index.packages[need.package].ref.name}/{need.key}"

    def _needs_in(self, nodes: Iterable[Node]) -> set[Need]:
        """What `nodes` turn on that the resolve lacks, kept by node: it is the same in every
        build holding the node, and a large workspace's what-if builds hold the same hundreds of
        nodes, nearly all turning nothing on."""
        found: set[Need] = set()
        kept = self._needs_of
        for node in nodes:
            needs = kept.get(node)
            if needs is None:
                position = self.index.by_id.get(node.package.id or "")
                needs = kept[node] = (
                    () if position is None else tuple(needs_of(self.index, position, node.features))
                )
            found.update(needs)
        return found

    def graph(
        self,
        edits: frozenset[ModelEdit],
        member: int,
        target: str,
        selection: FeatureSelection = DEFAULT,
    ) -> DependencyGraph:
        """What `cargo build -p MEMBER --target TARGET` (with `selection`'s feature flags)
        would get with `edits` made, and what they turn on bound to locked versions."""
        # The resolution under `edits`, with the graphs drawn of it (by member, selection).
        known = self._sessions.get((edits, target))
        if known is not None:
            self._sessions.move_to_end((edits, target))
        else:
            unedited = self._unedited.get(target)
            if unedited is None:
                cfg, unify = self.cfgs[target], self.unify_workspace
                context = BuildContext(
                    self.index, cfg, self.host, self.resolver, unify, self.locked
                )
                unedited = TargetSession(context, resolved=self.audited.get(target))
                self._unedited[target] = unedited
            edited = frozenset(edit.package for edit in edits)
            context = unedited.context.edited(edited_index(self.index, edits), edited)
            known = self._sessions[(edits, target)] = (TargetSession(context, unedited, edited), {})
            if len(self._sessions) > _KEPT_SESSIONS:
                self._sessions.popitem(last=False)
        session, graphs = known
        found = graphs.get((member, selection))
        if found is None:
            self.deadline.check("resolving the builds the fixes would give")
            found = graphs[(member, selection)] = session.graph(member, self.current, selection)
        return found

    def record(
        self, member: str, cfg: TargetCfg, selection: FeatureSelection, tests: bool = False
    ) -> Record:
        """MEMBER's build (with `tests`, its test build) on `cfg`'s target resolved again,
        recording why each step was taken."""
        context = BuildContext(
            self.index, cfg, self.host, self.resolver, unify_workspace=self.unify_workspace
        )
        return record_build(context, self.index.by_id[member], self.current, selection, tests)


def _locked_edges(index: Workspace, lock: LockView) -> Callable[[int], tuple[Edge, ...]]:
    """The edges of the dependencies a package's features can turn on that cargo's resolve has
    none for, bound to locked versions. Such a dependency is optional (cargo resolves every
    non-optional one), so its edge changes a build only once the build turns it on. Binding
    one only after a build turned it on meant resolving that build again (a third of the
    what-if builds of a 28-member workspace). The lookup keeps no hold on the `WhatIf`: the
    contexts that hold it would make a cycle the garbage collector then walks."""
    known: dict[int, tuple[Edge, ...]] = {}

    def edges(package: int) -> tuple[Edge, ...]:
        found = known.get(package)
        if found is None:
            features = index.packages[package].features
            # Bound as a dependency, however a feature names it.
            needs = sorted({Need(n.package, n.key) for n in needs_of(index, package, features)})
            verdicts = [lock.check(need) for need in needs]
            found = tuple(edge for v in verdicts if isinstance(v, tuple) for edge in v)
            known[package] = found
        return found

    return edges
