"""The last stage: the result renderers get, with the findings merged across configurations,
suppressions applied, notes said and the findings in report order."""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from featcheck.boundary import repository_root
from featcheck.cargo.argv_gate import GateError, target_triple
from featcheck.errors import FeatcheckError
from featcheck.featureset import DEFAULT, FeatureSelection
from featcheck.matrix import ConfigurationPlan, merge_configurations
from featcheck.noexec.gaps import gap_notes
from featcheck.policy.settings import Allow
from featcheck.policy.suppress import SuppressionResult, apply_suppressions
from featcheck.report import AuditResult, Finding
from featcheck.rules import names_fc900
from featcheck.severity import Confidence, FailOn, Severity
from featcheck.stages.members import Run, Scope
from featcheck.workspace.model import crate_key
from featcheck.workspace.workspace import Workspace


def new_result(run: Run, scope: Scope, plan: ConfigurationPlan, root: Path) -> AuditResult:
    """The result before any finding; locations relative to `root` (`report_root`)."""
    metadata, members, fail_on = scope.metadata, scope.members, scope.settings.fail_on
    return AuditResult(
        root,
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
        user_rules=tuple(r for r in scope.config.catalogue.rules if not r.builtin),
        configuration_errors=plan.errors,
        configurations={m.name: list(plan.selections[m.id]) for m in members},
        workspace_features={m.name: frozenset(m.features) for m in metadata.members},
        # Why nothing was audited, if so: "no findings" must not stand for a run that looked
        # at no build (every configuration refused, e.g. `-F nope`) or ran no rule.
        no_verdict=["no build configuration could be audited"]
        if not any(plan.selections.values())
        else ["no rule was run"]
        if not any(scope.rules_of.values())
        else [],
    )


def finish(
    run: Run, scope: Scope, result: AuditResult, placed: list[Finding], unread_note: str | None
) -> AuditResult:
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
            misnamed=misnamed,
            # A suppression may look unused only because the build was not seen whole.
            unused_confidence=Confidence.INCOMPLETE if result.incomplete else Confidence.RESOLVED,
            report_unused=not any(map(names_fc900, run.options.ignore)),
        )

    # Merged across configurations, each deferred finding apart from the same finding made
    # without deferral: it may still go.
    merged = [
        *merge_configurations([f for f in placed if not f.deferred_to]),
        *merge_configurations([f for f in placed if f.deferred_to]),
    ]
    suppression = suppress(merged)
    # A deferred finding another reported finding covers goes before suppressions count: an
    # allow for it has matched nothing the report would show.
    standing = uncovered(merged, suppression.kept)
    if standing != merged:
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


def finding_order(finding: Finding) -> tuple[Any, ...]:
    return (
        finding.member or "",
        finding.configuration or DEFAULT,  # the default build first
        finding.target or "",
        finding.code,
        finding.crate,
        finding.crate_version,
    )


@dataclass
class KnownNames:
    """The workspace's members, every crate its dependency graph holds or declares, and the
    targets rustc knows (asked only for a target an entry names that was not audited).

    An `allow` entry is only reported unused (FC900) when the audit could have matched it: one
    for a member, target or rule that was not audited is left alone. A typo (`member = "ap"`)
    would then never be reported and never suppress anything; here such a name is told apart
    from one that merely was not audited this time."""

    metadata: Workspace
    audited_targets: list[str]
    target_check: Callable[[str], object] | None
    """Asks rustc about a target (the runner's `target_cfg`), raising FeatcheckError for one it
    does not know; None where rustc is not asked (--no-exec): no target is called unknown there."""

    @functools.cached_property
    def _members(self) -> list[str]:
        return sorted(m.name for m in self.metadata.members)

    @functools.cached_property
    def _crates(self) -> frozenset[str]:
        # Declared dependencies count too: an optional one no audited build turns on exists.
        return frozenset(crate_key(name) for name in self.metadata.packages.names())

    def misnamed(self, allow: Allow) -> str | None:
        """Why `allow` can never match a finding of this workspace, or None."""
        if allow.member is not None and allow.member not in self._members:
            return (
                f"no workspace member is named {allow.member} (members: {', '.join(self._members)})"
            )
        if allow.crate is not None and crate_key(allow.crate) not in self._crates:
            return f"no crate named {allow.crate} is in the dependency graph"
        if allow.target is not None and not self._target_exists(allow.target):
            return f"rustc knows no target {allow.target}"
        return None

    def _target_exists(self, target: str) -> bool:
        if target in self.audited_targets:
            return True
        try:
            target_triple(target)  # what cannot reach rustc's command line is no target
        except GateError:
            return False
        if self.target_check is None or target.endswith(".json"):
            return True  # (.json: a target specification file, cargo resolves it where it builds)
        try:
            self.target_check(target)
        except FeatcheckError:
            return False
        return True


# Findings that stand only where another rule's finding does not.
#
# A rule's `requires` names features the crate must have for the rule to speak; where another
# rule reports the crate for lacking one and its fix adds this rule's feature too, that rule
# speaks first (`rules.detect.covering_rules`): FC003 (burn-flex without `simd`) requires
# `rayon`, and on a burn-flex without `rayon` FC001 reports the crate, its fix adding `simd`.
# Such a finding is made anyway, `deferred_to` those features, and goes only where a finding of
# the same crate, member, target and configuration for one of them is reported. Where FC001 is
# ignored, suppressed, or finds nothing, FC003 reports `simd` with its own location and fix
# (placement.py gives it a fix that adds only `simd`); where FC001 is reported, FC003 stays out
# of the report as before.

_Cover = tuple[str | None, str | None, str, str, str, FeatureSelection | None]
"""A reported finding's member, target, crate, version, feature and one configuration."""


def uncovered(findings: Sequence[Finding], reported: Sequence[Finding]) -> list[Finding]:
    """`findings` with each deferred one cut to the configurations where no `reported` finding
    of its crate for a feature it defers to stands; gone where none is left."""
    covers = {
        (f.member, f.target, f.crate, f.crate_version, f.feature, c)
        for f in reported
        if not f.deferred_to
        for c in f.configurations or (None,)
    }
    kept: list[Finding] = []
    for finding in findings:
        if not finding.deferred_to:
            kept.append(finding)
        elif not finding.configurations:  # unknown: one cover for them all
            if not _covered(finding, None, covers):
                kept.append(finding)
        elif left := tuple(c for c in finding.configurations if not _covered(finding, c, covers)):
            kept.append(
                finding if left == finding.configurations else replace(finding, configurations=left)
            )
    return kept


def _covered(finding: Finding, configuration: FeatureSelection | None, covers: set[_Cover]) -> bool:
    place = (finding.member, finding.target, finding.crate, finding.crate_version)
    return any((*place, feature, configuration) in covers for feature in finding.deferred_to)


def settled(
    findings: Sequence[Finding], audited: Mapping[str, Sequence[FeatureSelection]]
) -> list[Finding]:
    """The reported findings with no deferral left: a deferred finding that stands merges with
    the same finding of other configurations, its configurations in audit order again (the
    member's base build first), as `merge_configurations` gives them."""
    revived = {f.identity for f in findings if f.deferred_to}
    merged = merge_configurations([replace(f, deferred_to=()) for f in findings])
    return [
        replace(f, configurations=_in_audit_order(f, audited)) if f.identity in revived else f
        for f in merged
    ]


def _in_audit_order(
    finding: Finding, audited: Mapping[str, Sequence[FeatureSelection]]
) -> tuple[FeatureSelection, ...]:
    order = {c: i for i, c in enumerate(audited.get(finding.member or "", ()))}
    return tuple(sorted(finding.configurations, key=lambda c: order.get(c, len(order))))


# A Cargo.lock out of date with the manifests before any fix.
#
# Fixes are confirmed by resolving them in memory with Cargo.lock's versions, which is what cargo
# does with a lockfile that matches the manifests. When cargo had to rewrite the lockfile to
# audit the project at all, the versions it picked are not the ones `--fix`'s cargo starts from,
# so no fix is called confirmed: the run says so once, and `--fix` asks cargo for each fix.

OUT_OF_DATE = (
    "Cargo.lock is out of date with the manifests (cargo rewrites it before any fix): no fix "
    "is confirmed; `--fix` asks cargo for each and applies those it accepts"
)

FIX_NOTE = "`--fix` asks cargo for it first"
"""Said by each fix `--fix` would try (the run's note says why, once)."""


def out_of_date(result: AuditResult) -> AuditResult:
    findings = []
    for finding in result.findings:
        alternatives = tuple(replace(a, confirmed=False) for a in finding.alternatives)
        fix = finding.fix
        if fix is not None:
            note = (f"{FIX_NOTE}; {fix.note}" if fix.note else FIX_NOTE) if fix.safe else fix.note
            fix = replace(fix, confirmed=False, note=note)
        findings.append(replace(finding, fix=fix, alternatives=alternatives))
    return replace(result, findings=findings, notes=[*result.notes, OUT_OF_DATE])


def report_root(audited: Path, chosen: Path | None) -> Path:
    """The directory locations are reported relative to: `chosen`, else the repository root
    (git's top level: where a developer stands, what code scanning and annotations attach to),
    else the audited directory. Absolute, symlinks kept as the manifest paths keep them."""
    if chosen is not None:
        return Path(os.path.abspath(chosen))
    return repository_root(audited) or audited
