"""A Cargo.lock out of date with the manifests before any fix.

Fixes are confirmed by resolving them in memory with Cargo.lock's versions, which is what cargo
does with a lockfile that matches the manifests. When cargo had to rewrite the lockfile to
audit the project at all, the versions it picked are not the ones `--fix`'s cargo starts from,
so no fix is called confirmed: the run says so once, and `--fix` asks cargo for each fix.
"""

from __future__ import annotations

from dataclasses import replace

from featcheck.report import AuditResult, Finding

OUT_OF_DATE = (
    "Cargo.lock is out of date with the manifests (cargo rewrites it before any fix): no fix "
    "is confirmed; `--fix` asks cargo for each and applies those it accepts"
)
"""Said once per run."""

FIX_NOTE = "`--fix` asks cargo for it first"
"""Said by each fix `--fix` would try (the run's note says why, once)."""


def out_of_date(result: AuditResult) -> AuditResult:
    """The result with no fix confirmed, and the run's note saying why."""
    return replace(
        result,
        findings=[_unconfirmed(finding) for finding in result.findings],
        notes=[*result.notes, OUT_OF_DATE],
    )


def _unconfirmed(finding: Finding) -> Finding:
    alternatives = tuple(replace(a, confirmed=False) for a in finding.alternatives)
    fix = finding.fix
    if fix is not None and fix.safe:
        note = f"{FIX_NOTE}; {fix.note}" if fix.note else FIX_NOTE
        fix = replace(fix, confirmed=False, note=note)
    elif fix is not None:
        fix = replace(fix, confirmed=False)
    return replace(finding, fix=fix, alternatives=alternatives)
