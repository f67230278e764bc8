"""The last stage: the result renderers get, with the findings merged across configurations,
suppressions applied, notes said and the findings in report order."""

from __future__ import annotations

from typing import Any

from featcheck.featureset import DEFAULT
from featcheck.matrix import ConfigurationPlan
from featcheck.noexec.gaps import gap_notes
from featcheck.options import report_root
from featcheck.policy.allow_names import KnownNames
from featcheck.policy.suppress import SuppressionResult, apply_suppressions, declaration_spans
from featcheck.report import AuditResult, Finding, Location
from featcheck.severity import Confidence, FailOn, Severity
from featcheck.stages.configurations import nothing_audited
from featcheck.stages.deferral import merged_apart, settled, uncovered
from featcheck.stages.members import Run, Scope


def new_result(run: Run, scope: Scope, plan: ConfigurationPlan) -> AuditResult:
    """The result before any finding: what was audited, and how."""
    metadata, members, fail_on = scope.metadata, scope.members, scope.settings.fail_on
    return AuditResult(
        report_root(run.manifest.parent, run.options.root),
        audited=run.manifest.parent,
        workspace_root=metadata.root,
        local_manifests=tuple(p.manifest_path for p in metadata.unpublished()),
        members=[m.name for m in members],
        targets=scope.targets,
        fail_on=None if fail_on is None else FailOn(fail_on),
        fix_level=None
        if scope.settings.fix_level is None
        else Severity.parse(scope.settings.fix_level),
        baseline=scope.settings.baseline,
        user_rules=scope.config.catalogue.user_rules,
        configuration_errors=plan.errors,
        configurations={m.name: list(plan.selections[m.id]) for m in members},
        no_verdict=nothing_audited(plan, scope),
    )


def finish(
    run: Run, scope: Scope, result: AuditResult, placed: list[Finding], unread_note: str | None
) -> AuditResult:
    """`result` with the placed findings merged, suppressed and sorted, and its notes."""
    run.deadline.check("applying the suppressions")
    metadata = scope.metadata
    # Nothing audited (every configuration refused): no suppression could have matched.
    ran = set() if result.no_verdict else scope.ran()
    cfg = None if run.options.no_exec else run.source.target_cfg
    misnamed = KnownNames(metadata, scope.targets, cfg).misnamed

    def suppress(findings: list[Finding]) -> SuppressionResult:
        return apply_suppressions(
            findings,
            scope.config,
            result.root,
            [metadata.root / "Cargo.toml", *(m.manifest_path for m in scope.members)],
            members=result.members,
            targets=scope.targets,
            rules=ran,
            read=run.manifests.get,
            read_text=run.manifests.text,
            spans=_suppression_places,
            misnamed=misnamed,
            # A suppression may look unused only because the build was not seen whole.
            unused_confidence=Confidence.INCOMPLETE if result.incomplete else Confidence.RESOLVED,
        )

    merged = merged_apart(placed)
    suppression = suppress(merged)
    # A deferred finding another reported finding covers goes before suppressions count: an
    # allow for it has matched nothing the report would show.
    standing = uncovered(merged, suppression.kept)
    changed = len(standing) != len(merged)
    if changed or any(a is not b for a, b in zip(standing, merged, strict=True)):
        suppression = suppress(standing)
    kept = settled(suppression.kept, result.configurations)
    result.findings = sorted([*kept, *suppression.unused], key=finding_order)
    result.suppressed = suppression.suppressed_counts()
    result.rules = tuple(sorted(ran))
    if unread_note is not None and not result.incomplete:
        result.notes.append(unread_note)
    if result.incomplete:
        result.notes.extend(gap_notes(result.incomplete))
    return result


def _suppression_places(finding: Finding) -> tuple[Location, ...]:
    """Lines where an inline `# featcheck: allow` counts for `finding`: the edited declaration,
    the `workspace = true` line inheriting it, and the member's own declarations on the way."""
    inherited = (finding.inherited_by,) if finding.inherited_by is not None else ()
    return (*declaration_spans(finding), *inherited, *finding.member_declarations)


def finding_order(finding: Finding) -> tuple[Any, ...]:
    return (
        finding.member or "",
        finding.configuration or DEFAULT,  # the default build first
        finding.target or "",
        finding.code,
        finding.crate,
        finding.crate_version,
    )
