"""The third stage: what cargo builds for each (member, target, configuration), by featcheck's
own resolver over the one metadata, or asked of cargo itself (`--resolver cargo`)."""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from pathlib import Path
from typing import NamedTuple

from featcheck.cargo.runner import CargoRunner
from featcheck.cargo.tree_text import ParsedTree, TreeTextError, parse_tree_text
from featcheck.deadline import Deadline
from featcheck.errors import FeatcheckError
from featcheck.featureset import FeatureSelection
from featcheck.fixes.counterfactual import WhatIf
from featcheck.fixes.lockcheck import LockView
from featcheck.graph import DependencyGraph, Node
from featcheck.matrix import ConfigurationPlan
from featcheck.options import Resolver
from featcheck.resolution import (
    FeatureSelectionError,
    resolve_configurations,
)
from featcheck.semantics.cfg import TargetCfg
from featcheck.sources import MetadataSource
from featcheck.stages.members import Run, Scope
from featcheck.workspace.model import Package
from featcheck.workspace.table import PackageIndex
from featcheck.workspace.workspace import Workspace

BuildKey = tuple[str, str, FeatureSelection]
"""(member package id, target triple, feature selection)."""

Builds = dict[BuildKey, ParsedTree]


@dataclass(frozen=True)
class ResolverModel:
    """What featcheck's resolver works on: the indexed metadata and each target's cfg."""

    metadata: Workspace
    index: PackageIndex
    cfgs: dict[str, TargetCfg]
    host: TargetCfg
    resolver: int
    unify_workspace: bool = False
    """Features unify over every workspace member's build (cargo/unification.py)."""

    @classmethod
    def of(cls, source: MetadataSource, scope: Scope) -> ResolverModel:
        # One `rustc --print cfg` each (cached), asked here: resolution never runs cargo.
        cfgs = [source.target_cfg(triple) for triple in scope.targets]
        by_triple = {cfg.triple: cfg for cfg in cfgs}
        metadata, unify = scope.metadata, scope.unification.workspace
        return cls(metadata, metadata.index, by_triple, source.host_cfg(), scope.resolver, unify)

    @property
    def current(self) -> int | None:
        """The package cargo runs for (metadata's `resolve.root`), as `resolve_builds` takes it."""
        root = self.index.resolve_root
        return self.index.by_id.get(root) if root is not None else None

    def what_if(self, deadline: Deadline) -> WhatIf:
        """Counterfactual resolution over this model, within `deadline`, binding what an edit
        turns on to the versions Cargo.lock holds."""
        lock = LockView(self.metadata, self.index)
        return WhatIf(
            self.index,
            self.cfgs,
            self.host,
            self.resolver,
            self.current,
            lock,
            deadline,
            self.unify_workspace,
        )


class Resolved(NamedTuple):
    model: ResolverModel
    builds: Builds


def resolve(run: Run, scope: Scope, plan: ConfigurationPlan) -> Resolved:
    """The model and every build of the plan; a configuration that does not resolve is
    dropped from `plan`."""
    model = ResolverModel.of(run.source, scope)
    if run.options.resolver is Resolver.CARGO:
        if not isinstance(run.source, CargoRunner):
            raise FeatcheckError(
                "--no-exec runs no process, but --resolver cargo asks `cargo tree` (drop "
                "--no-exec, or use the default --resolver featcheck)"
            )
        builds = _ask_cargo(run.source, run.manifest, scope.members, scope.targets, plan)
        return Resolved(model, builds)
    return Resolved(model, _resolve_in_process(model, plan, run.deadline))


def _resolve_in_process(
    model: ResolverModel, plan: ConfigurationPlan, deadline: Deadline
) -> Builds:
    errors: dict[tuple[str, FeatureSelection], FeatureSelectionError] = {}
    graphs = resolve_configurations(
        model.index,
        plan.distinct_jobs(),
        list(model.cfgs.values()),
        model.resolver,
        host=model.host,
        errors=errors,
        deadline=deadline,
        unify_workspace=model.unify_workspace,
    )
    for (member, selection), error in errors.items():
        plan.refuse(member, selection, str(error))
    builds: Builds = {}
    for key, graph in graphs.items():
        member_node = next(graph.nodes())  # the member comes first, as in cargo tree's output
        builds[key] = ParsedTree(graph, False, True, False, [member_node])
    plan.share(builds)
    return builds


def _ask_cargo(
    runner: CargoRunner,
    manifest: Path,
    members: list[Package],
    targets: list[str],
    plan: ConfigurationPlan,
) -> Builds:
    """One `cargo tree` per build, run in parallel. With the default features, a refusal
    stops the audit."""
    by_id = {m.id: m for m in members}
    jobs = [(by_id[m], t, s) for m, s in plan.distinct_jobs() for t in targets]

    def tree(job: tuple[Package, str, FeatureSelection]) -> str | FeatcheckError:
        member, target, selection = job
        try:
            return runner.tree(manifest, member.id, target, features=selection)
        except FeatcheckError as error:
            if selection.is_default:
                raise
            return error

    workers = max(1, min(len(jobs), os.cpu_count() or 1))
    with ThreadPoolExecutor(max_workers=workers) as pool:
        trees = list(pool.map(tree, jobs))
    builds: Builds = {}
    for (member, target, selection), text in zip(jobs, trees, strict=True):
        if isinstance(text, FeatcheckError):
            if selection in plan.selections[member.id]:
                plan.refuse(member.id, selection, text.message)
            continue
        try:
            builds[(member.id, target, selection)] = member_part(parse_tree_text(text), member)
        except TreeTextError as error:
            raise FeatcheckError(
                f"could not read cargo tree output for {member.name}: {error}"
            ) from None
    plan.share(builds)
    return builds


def member_part(tree: ParsedTree, member: Package) -> ParsedTree:
    """The member's part of `cargo tree -p MEMBER` output. Where features unify over the
    workspace, cargo selects every member and prints each one's tree (measured with nightly
    cargo 1.97): only what the audited member reaches is its build."""
    if len(tree.roots) < 2:
        return tree
    ref = member.ref
    root = next((n for n in tree.roots if (n.name, n.version) == (ref.name, ref.version)), None)
    if root is None:
        raise TreeTextError(f"cargo tree printed no tree for {ref.name}")
    graph = tree.graph
    # Depth first, children in cargo's order (by package id): the order cargo prints the
    # member's tree in when it is printed alone, the member first.
    part: dict[Node, set[Node]] = {}
    stack = [root]
    while stack:
        node = stack.pop()
        if node not in part:
            part[node] = set(graph.dependencies(node))
            stack.extend(reversed(graph.sorted_dependencies(node)))
    return replace(tree, graph=DependencyGraph(part), roots=[root])
