"""Turn a feature resolution into the graph `cargo tree -e normal -p MEMBER` prints.

This follows cargo's `ops/tree/graph.rs::add_pkg`: a unit is (package, host or target side); its
normal edges are those whose `[target.X]` table applies on its side (the host's cfg for host
units), and an optional dependency counts only if the feature resolution turned it on.
Proc-macros and everything below them are host units. A host unit and a target unit of one
package stay two `Node`s even with the same features: cargo tree with `--target` prints both in
full (its `(*)` marks only the same unit again), and only the target one is linked into the
artifact. Nodes are added in the order cargo prints them (depth first, children sorted like
cargo's package ids) so that both paths list nodes alike.
"""

from __future__ import annotations

from collections.abc import Iterator

from featcheck.graph import DependencyGraph, Node
from featcheck.resolution.context import BuildContext
from featcheck.resolution.features import FeatureState
from featcheck.semantics.semver import parse_version

_SortKey = tuple[str, tuple[int, int, int, int], str, str, tuple[str, ...], int]


def _sort_key(node: Node, key: int) -> _SortKey:
    """cargo tree prints children ordered by package id (name, version, source), then unit."""
    version = parse_version(node.version) or (0, 0, 0, 0)
    source = node.package.source or ""
    return (node.name, version, node.version, source, tuple(sorted(node.features)), key & 1)


Edges = dict[Node, set[Node]]
"""A graph's nodes in insertion order, each with its direct dependencies."""


class GraphBuilder:
    """Walks the units of one feature resolution the way cargo tree prints them."""

    def __init__(self, context: BuildContext, state: FeatureState) -> None:
        self.context = context
        self.state = state
        self.nodes: dict[int, Node] = {}
        self._sort_keys: dict[int, _SortKey] = {}

    def node(self, key: int) -> Node:
        """The identity of a unit: package, features, proc-macro mark and side."""
        node = self.nodes.get(key)
        if node is None:
            package = self.context.index.packages[key >> 1]
            features = frozenset(self.state.features.get(key & self.context.feature_mask, ()))
            node = self.nodes[key] = Node(package.ref, features, package.proc_macro, bool(key & 1))
        return node

    def _sort_key(self, key: int) -> _SortKey:
        found = self._sort_keys.get(key)
        if found is None:
            found = self._sort_keys[key] = _sort_key(self.node(key), key)
        return found

    def children(self, key: int) -> list[int]:
        """The units a unit's normal edges lead to, in cargo tree's printing order."""
        turned_on = self.state.dependencies.get(key & self.context.feature_mask, ())
        found = {
            dep_key
            for edge, dep_key in self.context.tree_deps(key)
            if not edge.optional or edge.name_in_toml in turned_on
        }
        return sorted(found, key=self._sort_key)

    def walk(self, start: list[int]) -> Edges:
        """Depth first from `start` as if they were one parent's children: each unit is
        expanded on its first visit only, and nodes come in the order cargo prints them."""
        edges: Edges = {}
        seen: set[int] = set()
        stack: list[tuple[Node | None, Iterator[int]]] = [(None, iter(start))]
        while stack:
            parent, remaining = stack[-1]
            key = next(remaining, None)
            if key is None:
                stack.pop()
                continue
            node = self.node(key)
            if node not in edges:
                edges[node] = set()
            if parent is not None:
                edges[parent].add(node)
            if key not in seen:
                seen.add(key)
                stack.append((node, iter(self.children(key))))
        return edges


def root_key(context: BuildContext, member: int) -> int:
    """The unit `cargo tree -p MEMBER` starts from: the host one for a proc-macro."""
    return member * 2 + context.index.packages[member].proc_macro


def build_graph(context: BuildContext, state: FeatureState, member: int) -> DependencyGraph:
    """The normal-edge graph of one member's build, rooted at the member."""
    return DependencyGraph(GraphBuilder(context, state).walk([root_key(context, member)]))
