"""Findings set against earlier ones: what is new is shown, what was there is counted.

A finding is hidden only where the earlier one had the same fingerprint and at least its
severity: a finding that has grown more severe since is new again. The exit code then follows
what is shown, as it follows suppressions.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from featcheck.comparison.baseline import BaselineEntry
from featcheck.comparison.fingerprint import configuration_token, fingerprint
from featcheck.report import AuditResult, Comparison, Finding, StaleEntry
from featcheck.severity import Severity


def against_baseline(
    result: AuditResult, entries: Sequence[BaselineEntry], file: str
) -> AuditResult:
    """`result` without the findings the baseline `file` (as reports name it) accepts; its
    stale entries said in a note each."""
    by_print = {entry.fingerprint: entry for entry in entries}
    shown: list[Finding] = []
    hidden: list[Finding] = []
    matched: set[str] = set()
    for finding in result.findings:
        printed = fingerprint(finding)
        entry = by_print.get(printed)
        if entry is not None:
            matched.add(printed)
        (hidden if entry is not None and entry.hides(finding, printed) else shown).append(finding)
    stale = [e for e in entries if e.fingerprint not in matched and _covered(result, e)]
    comparison = Comparison(
        "baseline",
        file,
        hidden=tuple(hidden),
        stale=tuple(StaleEntry(e.line, e.fingerprint, e.describe()) for e in stale),
    )
    notes = [
        f"{file}:{entry.line}: baseline entry matches no finding any more ({entry.describe()}); "
        "remove the line, or rewrite the file with --write-baseline"
        for entry in stale
    ]
    return replace(
        result,
        findings=shown,
        notes=[*result.notes, *notes],
        comparisons=[*result.comparisons, comparison],
    )


def against_revision(result: AuditResult, earlier: AuditResult, label: str) -> AuditResult:
    """`result` with only what the audit of the revision `label` did not find."""
    before: dict[str, Severity] = {}
    for finding in earlier.findings:
        printed = fingerprint(finding)
        before[printed] = max(before.get(printed, finding.severity), finding.severity)
    shown: list[Finding] = []
    hidden: list[Finding] = []
    for finding in result.findings:
        severity = before.get(fingerprint(finding))
        (hidden if severity is not None and finding.severity <= severity else shown).append(finding)
    now = {fingerprint(finding) for finding in result.findings}
    absent = tuple(f for f in earlier.findings if fingerprint(f) not in now)
    comparison = Comparison("revision", label, hidden=tuple(hidden), absent=absent)
    return replace(result, findings=shown, comparisons=[*result.comparisons, comparison])


def _covered(result: AuditResult, entry: BaselineEntry) -> bool:
    """Whether this audit saw the build the entry is about, with its rule run: only then does
    an entry that matches nothing say the finding is gone (not that it went unaudited)."""
    if result.rules and entry.code not in result.rules:
        return False
    if entry.member is not None and entry.member not in result.members:
        return False
    if entry.target is not None and result.targets and entry.target not in result.targets:
        return False
    if entry.member is None or not result.configurations:
        return entry.configuration == "default"
    audited = result.configurations.get(entry.member, [])
    return entry.configuration in {configuration_token(c) for c in audited}
