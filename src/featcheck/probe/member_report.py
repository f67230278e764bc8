"""What `featcheck probe` prints: the matmul's report (report.py) with the other findings'
rule probes below it (rules/report.py), as text or one JSON object.

The JSON keeps each part's versioned schema: where the member builds burn-flex, the matmul's
object (`kind: "matmul"`) with the rule probes' object under `rules` (null when none ran);
for a member without burn-flex, the rule probes' object (`kind: "rules"`), as `--rule all`
prints it. Both fields were added to version 1 of the matmul's schema.
"""

from __future__ import annotations

import sys
from typing import Any

from featcheck.probe import report as matmul_report
from featcheck.probe.member import MemberProbeReport
from featcheck.probe.rules import report as rules_report
from featcheck.render.json_text import json_document


def report_json(report: MemberProbeReport) -> dict[str, Any]:
    """The report as a JSON-ready dict (see the module's text)."""
    rules = rules_report.report_json(report.rules) if report.rules is not None else None
    if report.matmul is None:
        assert rules is not None  # run_member_probe refuses a member with nothing to probe
        return rules
    data = matmul_report.report_json(report.matmul)
    return {"version": data.pop("version"), "kind": "matmul", **data, "rules": rules}


def render_json(report: MemberProbeReport) -> str:
    """One JSON object and a newline, printable and free of workflow commands."""
    return json_document(report_json(report)) + "\n"


def render_text(report: MemberProbeReport) -> None:
    """The report on stdout: the matmul's, then each rule probe's (under the matmul's header,
    or with its own where the member has no burn-flex)."""
    if report.matmul is not None:
        matmul_report.render_text(report.matmul)
    if report.rules is not None:
        sys.stdout.flush()
        rules_report.render_text(report.rules, sys.stdout, header=report.matmul is None)
