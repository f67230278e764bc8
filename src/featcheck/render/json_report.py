"""`--format json`: the documented, versioned schema (see README, "JSON output").

Adding a field is not a breaking change; renaming, removing or changing the meaning of one is,
and bumps SCHEMA_VERSION (3: files are relative to the report root, not the audited directory).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict
from typing import Any

from featcheck import __version__
from featcheck.comparison.baseline import fingerprint
from featcheck.render.common import Renderer, RenderOptions, group_findings
from featcheck.render.safe_text import json_document
from featcheck.report import AuditResult, Comparison, Finding, Fix, fix_words
from featcheck.severity import Severity

SCHEMA_VERSION = 3


def finding_to_dict(finding: Finding) -> dict[str, Any]:
    location, configuration, cost = finding.location, finding.configuration, finding.cost
    return {
        "code": finding.code,
        "rule": finding.rule,
        "severity": finding.severity.label,
        "member": finding.member,
        "crate": finding.crate,
        "crate_version": finding.crate_version,
        "feature": finding.feature,
        "target": finding.target,
        "message": finding.message,
        "location": None  # the span, without the quoted line
        if location is None
        else {k: v for k, v in asdict(location).items() if k != "source_line"},
        "why": finding.why,
        "suggestion": finding.suggestion,
        "notes": list(finding.notes),
        "chain": list(finding.chain),
        "fix": fix_to_dict(finding.fix),
        "placement": finding.placement,
        "alternatives": [fix_to_dict(f) for f in finding.alternatives],
        "confidence": finding.confidence.value,
        "configuration": None if configuration is None else configuration.to_json(),
        "configurations": [c.to_json() for c in finding.configurations],
        "fingerprint": fingerprint(finding),
        "cost": None
        if cost is None
        else {  # with --measured: measured here (`here`, `ratio`, ...) or quoted from the rule
            "here": cost.here,
            "ratio": cost.ratio,
            "workload": cost.workload or None,
            "measured_on": cost.measured_on or None,
            "features": list(cost.features),
            "command": cost.command,
        },
    }


def fix_to_dict(fix: Fix | None) -> dict[str, Any] | None:
    """A fix: what to change, where, and whether resolving with it was confirmed to build the
    feature."""
    if fix is None:
        return None
    return {
        "description": fix_words(fix),
        "safe": fix.safe,
        "confirmed": fix.confirmed,
        "note": fix.note,
        "added_packages": fix.added,
        "lockfile_added_packages": fix.locked,
        "edits": [
            {
                "file": edit.file,
                "line": edit.line or None,
                "action": edit.action,
                "declaration": [str(key) for key in edit.declaration],
                "features": list(edit.features),
                "version": edit.version or None,
            }
            for edit in fix.edits
        ],
    }


def _comparison(comparison: Comparison) -> dict[str, Any]:
    """What the findings were compared with, and what that hid."""
    return {
        "kind": comparison.kind,
        "against": comparison.against,
        "hidden": _grouped(comparison.hidden),
        "absent": _grouped(comparison.absent),
        "stale": [
            {"line": e.line, "fingerprint": e.fingerprint, "entry": e.describe()}
            for e in comparison.stale
        ],
    }


def _grouped(findings: Sequence[Finding]) -> list[dict[str, Any]]:
    """The findings as `findings[]` holds them: each with the id of its group among them."""
    groups = group_findings(findings)
    group_of = {id(finding): group.id for group in groups for finding in group.findings}
    return [{**finding_to_dict(f), "group": group_of[id(f)]} for f in findings]


def render_json(result: AuditResult) -> str:
    severities = Counter(finding.severity for finding in result.findings)
    counts = {s.label: severities[s] for s in sorted(Severity, reverse=True)}
    document = {
        "version": SCHEMA_VERSION,
        "tool": {"name": "featcheck", "version": __version__},
        "members": result.members,
        "targets": result.targets,
        "notes": result.notes,
        "configurations": {
            member: [c.to_json() for c in found] for member, found in result.configurations.items()
        },
        "configuration_errors": result.configuration_errors,
        "no_verdict": result.no_verdict,
        "summary": counts,
        "suppressed": result.suppressed,
        # `skipped` and `incomplete`: each record's fields are the schema's keys, in order.
        "skipped": [asdict(skip) for skip in result.skipped],
        "findings": _grouped(result.findings),
        "comparisons": [_comparison(c) for c in result.comparisons],
        "complete": not result.incomplete,
        "incomplete": [asdict(gap) for gap in result.incomplete],
    }
    # Printed to a terminal or CI log it must carry no control character or workflow command.
    return json_document(document) + "\n"


def renderer(options: RenderOptions) -> Renderer:
    """The JSON renderer (it takes no options: the document always carries everything)."""
    return lambda result, out: out.write(render_json(result))
