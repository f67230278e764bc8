"""The second stage: the build configurations of each member (matrix.py), and cargo's metadata
asked again when they need more than it gave."""

from __future__ import annotations

from featcheck.matrix import ConfigurationPlan, audits_itself, plan_configurations
from featcheck.options import beyond_defaults
from featcheck.stages.members import Run, Scope
from featcheck.workspace.workspace import parse_metadata


def plan_builds(run: Run, scope: Scope) -> ConfigurationPlan:
    """The feature selections to resolve for each member, and those cargo would refuse."""
    root_id = scope.metadata.resolve_root
    return plan_configurations(
        [scope.metadata.document(m.id) for m in scope.members],
        scope.requested,
        each=scope.each_feature,
        legacy_root=root_id if scope.resolver == 1 else None,
        self_audited=frozenset(
            m.id for m in scope.members if audits_itself(m.name, scope.rules_of[m.id])
        ),
        deadline=run.deadline,
    )


def with_every_feature(
    run: Run, scope: Scope, plan: ConfigurationPlan, *, all_features: bool
) -> Scope:
    """The scope over metadata that covers every package the plan's builds may use."""
    extra = plan.dependency_features()
    if extra or (not all_features and beyond_defaults(scope.requested, scope.each_feature)):
        # Plain `cargo metadata` leaves out the optional dependencies nothing enables by
        # default, and `--all-features` those that only a `dependency/feature` value enables:
        # ask again with both (the values were matched against the members already).
        pending = run.source.start_metadata(run.manifest, all_features=True, features=extra)
        metadata = pending.result(parse_metadata)
        return scope.reread(run, metadata, extra)
    return scope


def nothing_audited(plan: ConfigurationPlan, scope: Scope) -> list[str]:
    """Why nothing was audited, if so: "no findings" must not stand for a run that looked at
    no build (every configuration refused, e.g. `-F nope`) or ran no rule."""
    if not any(plan.selections.values()):
        return ["no build configuration could be audited"]
    if not any(scope.rules_of.values()):
        return ["no rule was run"]
    return []
