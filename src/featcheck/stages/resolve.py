"""The third stage: what cargo builds for each (member, target, configuration), by featcheck's
own resolver over the one metadata (the differential tests put cargo tree in its place:
tests/cargo_tree_oracle.py)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

from featcheck.cargo.pending_metadata import MetadataSource
from featcheck.cargo.tree_text import ParsedTree
from featcheck.deadline import Deadline
from featcheck.featureset import FeatureSelection
from featcheck.fixes.counterfactual import WhatIf
from featcheck.fixes.lockcheck import LockView
from featcheck.matrix import ConfigurationPlan
from featcheck.resolution import (
    FeatureSelectionError,
    resolve_configurations,
)
from featcheck.semantics.cfg import TargetCfg
from featcheck.stages.members import Run, Scope
from featcheck.workspace.workspace import Workspace

BuildKey = tuple[str, str, FeatureSelection]
"""(member package id, target triple, feature selection)."""

Builds = dict[BuildKey, ParsedTree]


@dataclass(frozen=True)
class ResolverModel:
    """What featcheck's resolver works on: the indexed metadata and each target's cfg."""

    metadata: Workspace
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
        return cls(metadata, by_triple, source.host_cfg(), scope.resolver, unify)

    @property
    def current(self) -> int | None:
        """The package cargo runs for (metadata's `resolve.root`), as `resolve_builds` takes it."""
        root = self.metadata.resolve_root
        return self.metadata.by_id.get(root) if root is not None else None

    def what_if(self, deadline: Deadline) -> WhatIf:
        """Counterfactual resolution over this model, within `deadline`, binding what an edit
        turns on to the versions Cargo.lock holds."""
        lock = LockView(self.metadata)
        return WhatIf(
            self.metadata,
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
    return Resolved(model, _resolve_in_process(model, plan, run.deadline))


def _resolve_in_process(
    model: ResolverModel, plan: ConfigurationPlan, deadline: Deadline
) -> Builds:
    errors: dict[tuple[str, FeatureSelection], FeatureSelectionError] = {}
    graphs = resolve_configurations(
        model.metadata,
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
