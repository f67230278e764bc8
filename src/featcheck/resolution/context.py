"""One build's view of the dependency edges: which declarations count, and for which platform.

cargo's feature resolver asks "which deps of this package, built for the target or for the host,
take part?" over and over (`FeatureResolver::deps`). The answer depends only on the package, the
host/target side, the audited target and the resolver version, so it is computed once per
package and side here and shared by every member resolved for that target.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from featcheck.semantics.cfg import TargetCfg
from featcheck.workspace.model import BUILD, DEV, NORMAL, Edge

if TYPE_CHECKING:  # the resolver reads the workspace it is handed; it only names its type
    from featcheck.workspace.workspace import Workspace

DepList = tuple[tuple[Edge, int], ...]
"""(declaration, unit key of the dependency) pairs; a unit key is `package * 2 + host`."""


class BuildContext:
    """Edge lists of every package for one target, resolver version and host."""

    def __init__(
        self,
        index: Workspace,
        target: TargetCfg,
        host: TargetCfg,
        resolver: int,
        unify_workspace: bool = False,
        bound: Callable[[int], tuple[Edge, ...]] | None = None,
    ) -> None:
        self.index = index
        self.target = target
        self.host = host
        self.resolver = resolver
        self.unify_workspace = unify_workspace
        """cargo's `resolver.feature-unification = "workspace"`: every build resolves as if
        all workspace members were selected (see `build_requests`)."""
        self.bound = bound
        """The edges a package gains where Cargo.lock binds a dependency cargo's resolve has
        none for (a what-if build, `fixes/counterfactual.py`); None: the resolve's edges only."""
        self.decoupled = resolver >= 2
        """cargo's `FeatureOpts` for `cargo build`/`cargo tree -e normal` (no dev units): from
        resolver 2 (3 changes only version picking) build-deps and proc-macros get their own
        feature set and host units are told apart while walking (`decouple_host_deps`,
        `track_for_host`), dev-dependencies do not count when nothing is built for tests
        (`decouple_dev_deps`), and `[target.X]` dependencies for other platforms do not count
        (`ignore_inactive_targets`). Resolver 1 unifies everything."""
        self.feature_mask = -1 if self.decoupled else -2
        """ANDed with a unit key: resolver 1 keeps one feature set for host and target."""
        self._applies: tuple[dict[str, bool], dict[str, bool]] = ({}, {})
        self._feature_deps: dict[int, DepList] = {}
        self._dev_deps: dict[int, DepList] = {}
        self._tree_deps: dict[int, DepList] = {}
        self._unedited: BuildContext | None = None
        self._edited: frozenset[int] = frozenset()

    def edited(self, index: Workspace, packages: frozenset[int]) -> BuildContext:
        """This context for an edited model (`fixes/counterfactual.py`) whose edits change the
        packages at `packages`: every other package has the same edges, so its lists are this
        context's (each what-if build listed them all again: three fifths of the lists of a
        100-member fix search)."""
        context = BuildContext(
            index, self.target, self.host, self.resolver, self.unify_workspace, self.bound
        )
        context._unedited, context._edited = self, packages
        return context

    def platform_active(self, platform: str | None, on_host: bool) -> bool:
        if platform is None:
            return True
        cache = self._applies[on_host]
        known = cache.get(platform)
        if known is None:
            known = cache[platform] = (self.host if on_host else self.target).applies(platform)
        return known

    def edges(self, position: int) -> tuple[Edge, ...]:
        """The edges of the package at `position`, with those the lock binds (`bound`)."""
        edges = self.index.packages[position].edges
        return edges if self.bound is None else edges + self.bound(position)

    def feature_deps(self, key: int, dev: bool = False) -> DepList:
        """The edges the feature resolver follows from unit `key`; with `dev` its
        dev-dependency edges instead, which resolver 1 follows from the roots of the resolve
        only."""
        if self._unedited is not None and key >> 1 not in self._edited:
            return self._unedited.feature_deps(key, dev)
        lists = self._dev_deps if dev else self._feature_deps
        found = lists.get(key)
        if found is None:
            found = lists[key] = self._collect(key, dev)
        return found

    def _collect(self, key: int, dev: bool) -> DepList:
        host = bool(key & 1)
        found: list[tuple[Edge, int]] = []
        for edge in self.edges(key >> 1):
            if (edge.kind == DEV) != dev:
                continue
            if self.decoupled and not self.platform_active(
                edge.platform, host or edge.kind == BUILD
            ):
                continue
            # cargo's `lib_fk`: host units stay host; build-deps and proc-macros become host.
            dep_host = host or (
                self.decoupled and (edge.kind == BUILD or self.index.packages[edge.dep].proc_macro)
            )
            found.append((edge, edge.dep * 2 + dep_host))
        return tuple(found)

    def tree_deps(self, key: int) -> DepList:
        """Normal edges `cargo tree -e normal` draws from a unit, optional or not."""
        if self._unedited is not None and key >> 1 not in self._edited:
            return self._unedited.tree_deps(key)
        found = self._tree_deps.get(key)
        if found is None:
            host, packages = bool(key & 1), self.index.packages
            # cargo tree's rule: host units stay host, proc-macros become host.
            found = self._tree_deps[key] = tuple(
                (edge, edge.dep * 2 + (host or packages[edge.dep].proc_macro))
                for edge in self.edges(key >> 1)
                if edge.kind == NORMAL and self.platform_active(edge.platform, host)
            )
        return found
