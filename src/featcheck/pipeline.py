"""The audit after cargo answered, as a pipeline of stages (featcheck.stages): members ->
configurations -> resolve -> detect -> place -> finish (suppressions, notes, order)."""

from __future__ import annotations

from pathlib import Path

from featcheck.cargo.metadata import WorkspaceMetadata
from featcheck.cargo.runner import CargoRunner
from featcheck.deadline import Deadline
from featcheck.locate import ManifestCache
from featcheck.options import AuditOptions
from featcheck.report import AuditResult
from featcheck.stages.configurations import plan_builds, with_every_feature
from featcheck.stages.detect import detect_all
from featcheck.stages.finish import finish, new_result
from featcheck.stages.members import Run, scope_of
from featcheck.stages.place import place
from featcheck.stages.resolve import resolve


def audit_workspace(
    manifest: Path,
    options: AuditOptions,
    runner: CargoRunner,
    metadata: WorkspaceMetadata,
    manifests: ManifestCache,
    *,
    all_features: bool,
) -> AuditResult:
    """The audit of the members `manifest` selects, from cargo's metadata (asked with
    `all_features` or not); `runner` answers the questions that come up on the way. The work
    after cargo's answer is bounded by `options.timeout` as a whole (deadline.py)."""
    run = Run(manifest, options, runner, manifests, Deadline(options.timeout))
    scope = scope_of(run, metadata)
    plan = plan_builds(run, scope)
    scope = with_every_feature(run, scope, plan, all_features=all_features)
    resolved = resolve(run, scope, plan)
    result = new_result(run, scope, plan)
    found = detect_all(run, scope, plan, resolved.builds)
    result.skipped, result.incomplete = found.skipped, found.incomplete
    placed = place(run, scope, plan, resolved, found.flagged, result.root)
    return finish(run, scope, result, placed, found.unread_note)
