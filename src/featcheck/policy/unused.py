"""FC900 `unused-suppression`: a finding for each suppression that matched nothing, so that stale
or mistyped suppressions do not linger."""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable
from pathlib import Path

from featcheck.policy.inline import InlineAllow, Suppression
from featcheck.policy.settings import ANY_CODE, Allow, Config, relative_location
from featcheck.report import Finding, Location
from featcheck.rules.unused_suppression import UNUSED_SUPPRESSION, UNUSED_SUPPRESSION_CODE
from featcheck.severity import Confidence, Severity
from featcheck.workspace.names import same_crate


def unused_findings(
    config: Config,
    used: set[Suppression],
    inline: Iterable[InlineAllow],
    root: Path,
    *,
    members: Collection[str] | None,
    targets: Collection[str] | None,
    rules: Collection[str] | None,
    misnamed: Callable[[Allow], str | None] | None,
    confidence: Confidence = Confidence.RESOLVED,
) -> list[Finding]:
    """An FC900 finding for each allow entry and inline code not in `used`, in file and line
    order (see `apply_suppressions` for which are left alone), each with `confidence`; none
    when FC900 is ignored."""
    if not config.reports_unused:
        return []
    unused: list[Finding] = []
    severity = config.severity.get(UNUSED_SUPPRESSION_CODE, UNUSED_SUPPRESSION.severity)
    for allow in config.all_allows():
        why = misnamed(allow) if misnamed is not None and allow not in used else None
        if why is not None:
            unused.append(_unused_finding(allow, root, severity, confidence, why))
        elif allow not in used and _could_match(allow, members, targets, rules):
            unused.append(_unused_finding(allow, root, severity, confidence))
    unused += [
        _unused_finding(item, root, severity, confidence)
        for item in inline
        if item not in used and _ran(item.code, rules)
    ]
    unused.sort(key=_location_order)
    return unused


def _could_match(
    allow: Allow,
    members: Collection[str] | None,
    targets: Collection[str] | None,
    rules: Collection[str] | None,
) -> bool:
    """Whether this audit covered what the allow entry is about (else it is not "unused")."""
    if (
        members is not None
        and allow.member is not None
        and not any(same_crate(allow.member, m) for m in members)
    ):
        return False
    if targets is not None and allow.target is not None and allow.target not in targets:
        return False
    return _ran(allow.code, rules)


def _ran(code: str, rules: Collection[str] | None) -> bool:
    """Whether the audit ran the rule `code` (`*`: any rule at all)."""
    return rules is None or code in rules or (code == ANY_CODE and bool(rules))


def _unused_finding(
    item: Suppression,
    root: Path,
    severity: Severity,
    confidence: Confidence,
    misnamed: str | None = None,
) -> Finding:
    kind = "`allow` entry" if isinstance(item, Allow) else "`# featcheck: allow` comment"
    location = relative_location(item.origin, root) if item.origin is not None else None
    matches = f"can never match: {misnamed}" if misnamed else "matches no finding"
    return Finding(
        code=UNUSED_SUPPRESSION.code,
        rule=UNUSED_SUPPRESSION.name,
        severity=severity,
        # A member that does not exist heads no group of its own: the entry is configuration.
        member=item.member if isinstance(item, Allow) and not misnamed else None,
        crate=(item.crate or "") if isinstance(item, Allow) else "",
        crate_version="",
        feature="",
        target=None,
        message=(f"this suppression of {item.describe()} (reason: {item.reason}) {matches}"),
        location=location,
        why=UNUSED_SUPPRESSION.why,
        suggestion=f"Remove this {kind}, or correct its code, crate, member or target.",
        confidence=confidence,
    )


def _location_order(finding: Finding) -> tuple[str, int, int]:
    location: Location | None = finding.location
    if location is None:
        return ("", 0, 0)
    return (location.file, location.line, location.column)
