"""The resolved dependency graph of one build: packages, their features, and normal edges."""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Hashable, Iterable, Iterator, Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from typing import TypeVar

from featcheck.workspace.model import PackageRef, crate_key

T = TypeVar("T", bound=Hashable)


@dataclass(frozen=True, eq=False)
class Node:
    """One compiled unit of a package: the same package built with other features, or built
    for the other side (host or target), is another.

    Nodes are compared, hashed and sorted millions of times (rules sort a build's nodes, the
    fix search resolves many builds), so the identity is computed once, as a plain tuple.
    """

    package: PackageRef
    features: frozenset[str]
    proc_macro: bool = False
    host: bool = False
    """Built for the host: a proc-macro, or what proc-macros use (build scripts' dependencies
    too, though `-e normal` shows none). cargo tree prints such a unit apart from a target
    unit with the same features; only target units are linked into the artifact."""
    _key: tuple[str, str, str, tuple[str, ...], bool, bool] = field(
        init=False, repr=False, compare=False
    )
    _hash: int = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.proc_macro and not self.host:
            object.__setattr__(self, "host", True)  # a proc-macro always runs on the host
        package = self.package
        key = (
            package.name,
            package.version,
            package.source or "",
            tuple(sorted(self.features)),
            self.proc_macro,
            self.host,
        )
        object.__setattr__(self, "_key", key)
        object.__setattr__(self, "_hash", hash(key))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Node):
            return NotImplemented
        return self._hash == other._hash and self._key == other._key

    def __hash__(self) -> int:
        return self._hash

    def __lt__(self, other: Node) -> bool:
        return self._key < other._key

    def __le__(self, other: Node) -> bool:  # `a > b` and `a >= b` are these, reflected
        return self._key <= other._key

    @property
    def name(self) -> str:
        return self.package.name

    @property
    def version(self) -> str:
        return self.package.version


@dataclass
class DependencyGraph:
    """Nodes and dependent -> dependency edges of one resolved build (normal edges only).

    What rules and fixes ask of a graph (nodes by name, reverse edges, ancestors) is computed on
    first look-up and kept. A graph made by `rooted` (one member on top of the resolution below
    it, which many members and candidate fixes share) answers from the shared graph's kept
    answers, so a large workspace pays for each shape once, not once per member.
    """

    _dependencies: dict[Node, set[Node]] = field(default_factory=dict)
    _by_name: dict[str, list[Node]] | None = field(default=None, repr=False, compare=False)
    """Nodes by package name, made on first look-up: rules and fixes ask by name for every
    member of large workspaces, and a scan per question made that quadratic."""
    _packages: frozenset[PackageRef] | None = field(default=None, repr=False, compare=False)
    _dependents: dict[Node, AbstractSet[Node]] | None = field(
        default=None, repr=False, compare=False
    )
    _ancestors: dict[Node, frozenset[Node]] = field(default_factory=dict, repr=False, compare=False)
    _sorted: dict[Node, list[Node]] = field(default_factory=dict, repr=False, compare=False)
    _target_side: dict[tuple[Node, ...], frozenset[Node]] = field(
        default_factory=dict, repr=False, compare=False
    )
    _paths: dict[tuple[tuple[Node, ...], Node, frozenset[Node]], list[Node] | None] = field(
        default_factory=dict, repr=False, compare=False
    )
    parts: tuple[Node, DependencyGraph] | None = field(default=None, repr=False, compare=False)
    """For a `rooted` graph, its root and the shared graph below it: what is known of the
    shared graph holds for every graph drawn on top of it. None for other graphs."""

    @classmethod
    def rooted(cls, root: Node, children: set[Node], below: DependencyGraph) -> DependencyGraph:
        """`root` depending on `children`, with everything below them as in `below` (which
        holds exactly what `children` reach, and not `root`). The graphs share `below`'s
        edge sets: neither may gain edges afterwards."""
        edges = {root: children}
        edges.update(below._dependencies)
        graph = cls(edges)
        graph.parts = (root, below)
        return graph

    def _changed(self) -> None:
        self._by_name = self._packages = self._dependents = self.parts = None
        self._ancestors, self._sorted, self._target_side, self._paths = {}, {}, {}, {}

    def add_node(self, node: Node) -> None:
        if node not in self._dependencies:
            self._dependencies[node] = set()
            self._changed()

    def add_edge(self, dependent: Node, dependency: Node) -> None:
        self.add_node(dependency)
        self.add_node(dependent)
        self._dependencies[dependent].add(dependency)
        self._changed()

    def packages(self) -> frozenset[PackageRef]:
        if self._packages is None:
            if self.parts is not None:
                root, below = self.parts
                self._packages = below.packages() | {root.package}
            else:
                self._packages = frozenset(n.package for n in self._dependencies)
        return self._packages

    def nodes(self) -> Iterator[Node]:
        return iter(self._dependencies)

    def named(self, name: str) -> Sequence[Node]:
        """Every node of the package called `name` as crates.io compares names (`-` and `_`
        alike: `workspace.model`), several versions or feature sets, in insertion order."""
        key = crate_key(name)
        if self.parts is not None:
            root, below = self.parts
            found = below.named(key)
            return [root, *found] if crate_key(root.name) == key else found
        if self._by_name is None:
            by_name: dict[str, list[Node]] = {}
            for node in self._dependencies:
                by_name.setdefault(crate_key(node.name), []).append(node)
            self._by_name = by_name
        return self._by_name.get(key, ())

    def dependencies(self, node: Node) -> set[Node]:
        return self._dependencies.get(node, set())

    def sorted_dependencies(self, node: Node) -> list[Node]:
        """The direct dependencies of `node`, sorted (kept: not to be changed)."""
        if self.parts is not None and node in self.parts[1]._dependencies:
            return self.parts[1].sorted_dependencies(node)
        found = self._sorted.get(node)
        if found is None:
            found = self._sorted[node] = sorted(self.dependencies(node))
        return found

    def dependents_map(self) -> Mapping[Node, AbstractSet[Node]]:
        """dependency -> its direct dependents (computed once per graph: not to be changed)."""
        if self._dependents is None:
            if self.parts is not None:
                root, below = self.parts
                reverse: dict[Node, AbstractSet[Node]] = {root: EMPTY, **below.dependents_map()}
                for child in self._dependencies[root]:
                    reverse[child] = {*reverse[child], root}
            else:
                plain: dict[Node, set[Node]] = {n: set() for n in self._dependencies}
                for dependent, deps in self._dependencies.items():
                    for dep in deps:
                        plain[dep].add(dependent)
                reverse = dict(plain)
            self._dependents = reverse
        return self._dependents

    def ancestors(self, target: Node) -> frozenset[Node]:
        """Every node from which `target` can be reached (not including `target`)."""
        found = self._ancestors.get(target)
        if found is not None:
            return found
        if self.parts is not None:
            root, below = self.parts
            # The root reaches everything below it, and nothing below reaches the root.
            found = below.ancestors(target) | {root} if target in below._dependencies else EMPTY
        else:
            reverse = self.dependents_map()
            found = frozenset(closure(reverse.get(target, ()), lambda n: reverse.get(n, ())))
        self._ancestors[target] = found
        return found

    def target_side(self, roots: tuple[Node, ...]) -> frozenset[Node]:
        """Target nodes reached from `roots` (host roots, such as a proc-macro member, reach
        none): what is linked into the artifact rather than run on the host. Host nodes
        depend on host nodes only, so the walk stops at the first one."""
        found = self._target_side.get(roots)
        if found is not None:
            return found
        if self.parts is not None and roots == (self.parts[0],) and not roots[0].host:
            root, below = self.parts
            starts = tuple(sorted(d for d in self._dependencies[root] if not d.host))
            found = below.target_side(starts) | {root}
        else:
            targets = [r for r in roots if not r.host]
            found = frozenset(
                closure(targets, lambda n: (d for d in self.dependencies(n) if not d.host))
            )
        self._target_side[roots] = found
        return found

    def path(
        self, start: Node, goal: Node, avoiding: frozenset[Node] = frozenset()
    ) -> list[Node] | None:
        """A shortest dependency path from `start` to `goal` (both included) that passes
        through none of `avoiding`, or None (the first in sorted order of those as short)."""
        if self.parts is None or start != self.parts[0] or goal == start:
            return self._path_from((start,), goal, avoiding)
        # From the root, the search goes on from its dependencies in the shared graph, where
        # the answer is kept for every member with the same dependencies.
        root, below = self.parts
        starts = tuple(d for d in self.sorted_dependencies(root) if d not in avoiding)
        found = below._path_from(starts, goal, avoiding)
        return None if found is None else [root, *found]

    def _path_from(
        self, starts: tuple[Node, ...], goal: Node, avoiding: frozenset[Node]
    ) -> list[Node] | None:
        key = (starts, goal, avoiding)
        if key in self._paths:
            found = self._paths[key]
        else:
            found = self._paths[key] = breadth_first(
                starts,
                goal,
                lambda node: [d for d in self.sorted_dependencies(node) if d not in avoiding],
            )
        return None if found is None else list(found)


EMPTY: frozenset[Node] = frozenset()


def breadth_first(
    starts: Sequence[T], goal: T, neighbours: Callable[[T], Iterable[T]]
) -> list[T] | None:
    """Breadth-first search from `starts` (in order, all at distance 0) to `goal`; the path
    from one of them with both ends, or None."""
    previous: dict[T, T | None] = dict.fromkeys(starts)
    queue = deque(starts)
    while queue:
        current = queue.popleft()
        if current == goal:
            chain: list[T] = []
            step: T | None = current
            while step is not None:
                chain.append(step)
                step = previous[step]
            return chain[::-1]
        for following in neighbours(current):
            if following not in previous:
                previous[following] = current
                queue.append(following)
    return None


def distances_to(
    graph: DependencyGraph, goal: Node, avoiding: frozenset[str] = frozenset()
) -> dict[Node, int]:
    """Edges from each ancestor of `goal` down to it (0 for `goal` itself), on paths through
    none of the crates `avoiding` names."""
    dependents = graph.dependents_map()
    distance = {goal: 0}
    queue = deque([goal])
    while queue:
        node = queue.popleft()
        for dependent in dependents.get(node, ()):
            if dependent not in distance and crate_key(dependent.name) not in avoiding:
                distance[dependent] = distance[node] + 1
                queue.append(dependent)
    return distance


def closure(starts: Iterable[T], following: Callable[[T], Iterable[T]]) -> set[T]:
    """`starts` and everything reached from them."""
    found = set(starts)
    pending = list(found)
    while pending:
        for later in following(pending.pop()):
            if later not in found:
                found.add(later)
                pending.append(later)
    return found
