"""Wording every format shares, so the terminal, annotations and SARIF say the same thing."""

from __future__ import annotations

from featcheck.report import AuditResult, Finding, Severity


def plural(count: int, word: str) -> str:
    """`1 error`, `2 errors`."""
    return f"{count} {word}{'' if count == 1 else 's'}"


def count_line(result: AuditResult) -> str:
    """`1 error (1 member, x86_64-unknown-linux-gnu; 2 suppressed)`, or `no findings (...)`."""
    scope = plural(len(result.members), "member")
    if result.targets:
        scope += f", {', '.join(result.targets)}"
    if result.suppressed:
        scope += f"; {sum(result.suppressed.values())} suppressed"
    if not result.findings:
        verdict = "no findings, audit incomplete" if result.incomplete else "no findings"
        return f"{verdict} ({scope})"
    counts = [
        plural(sum(1 for f in result.findings if f.severity is s), s.label)
        for s in sorted(Severity, reverse=True)
        if any(f.severity is s for f in result.findings)
    ]
    return f"{', '.join(counts)} ({scope})"


def build_of(finding: Finding) -> str:
    """`member app, target x86_64-unknown-linux-gnu`: whose build the finding is about."""
    parts = [
        f"member {finding.member}" if finding.member else "",
        f"target {finding.target}" if finding.target else "",
    ]
    return ", ".join(part for part in parts if part)
