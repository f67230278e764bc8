"""`featcheck probe` without --rule: every measurement the member's findings have, in one run.

The member is resolved and audited once. Where it builds burn-flex, burn's matmul is timed
(command.py: the verdict on one core or several, whatever burn-flex's findings say); every
finding whose crate has a rule program (regex, memchr, ...) is timed as built and as fixed
(rules/run.py). One statement and one consent cover every build, then one report.

What it prints: the matmul's report (report.py) with the other findings' rule probes below it
(rules/report.py), as text or one JSON object. The JSON keeps each part's versioned schema:
where the member builds burn-flex, the matmul's object (`kind: "matmul"`) with the rule probes'
object under `rules` (null when none ran); for a member without burn-flex, the rule probes'
object (`kind: "rules"`), as `--rule all` prints it. Both fields were added to version 1 of the
matmul's schema.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from featcheck.boundary import TrustContext
from featcheck.errors import FeatcheckError
from featcheck.probe import report as matmul_report
from featcheck.probe.command import (
    ProbeOptions,
    ProbeReport,
    checked_manifest,
    member_findings,
    plan_matmul,
    probe_error,
    start_probe,
    time_matmul,
)
from featcheck.probe.resolve import BACKEND, MemberGraph, builds_backend
from featcheck.probe.rules import report as rules_report
from featcheck.probe.rules.run import (
    RuleProbeReport,
    plan_rules,
    time_rules,
    timed_crates,
    timed_findings,
)
from featcheck.probe.statement import confirm_build
from featcheck.render.safe_text import json_document


@dataclass
class MemberProbeReport:
    """The member's measurements: burn's matmul where it builds burn-flex, and the findings
    the rule programs time."""

    member: str
    target: str
    matmul: ProbeReport | None
    rules: RuleProbeReport | None


def run_member_probe(
    options: ProbeOptions, say: Callable[[str], None], trust: TrustContext
) -> MemberProbeReport:
    """Probe everything of the member that has a program, in the run's trust context
    (`TrustContext.of` the path the user named); a FeatcheckError (one line) when nothing
    has, or on any failure."""
    try:
        return _run(options, say, trust)
    except FeatcheckError as error:
        raise probe_error(error) from None


def _run(
    options: ProbeOptions, say: Callable[[str], None], trust: TrustContext
) -> MemberProbeReport:
    started = time.monotonic()
    manifest = checked_manifest(options, trust)
    builder, resolved = start_probe(manifest, options, say, trust)
    member = resolved.member.name
    say(f"auditing {member} for its findings and featcheck's fixes (cargo confirms them)")
    wanted = {code.upper() for code in options.codes} or {"ALL"}
    findings = member_findings(
        resolved,
        # A rule named runs even where it is opt-in (FC015's hint): it was asked for.
        select=tuple(sorted(wanted - {"ALL"})),
        offline=options.offline,
        timeout=options.timeout,
        on_command=options.on_command,
    )
    timed = timed_findings(findings, wanted)
    flex = not options.codes and builds_backend(resolved.graph)
    if not flex and not timed:
        raise FeatcheckError(_nothing_to_probe(resolved, options.codes, wanted))
    matmul = plan_matmul(builder, resolved, findings, options) if flex else None
    rules = plan_rules(builder, resolved, timed, options) if timed else None
    plans = [*(matmul.plans if matmul else ()), *(rules.plans if rules else ())]
    confirm_build(plans, member, resolved.lockfile is not None, options.confirm, say)
    return MemberProbeReport(
        member,
        resolved.target,
        time_matmul(builder, matmul, options, say, started) if matmul else None,
        time_rules(builder, resolved, rules, options, say) if rules else None,
    )


def _nothing_to_probe(resolved: MemberGraph, codes: tuple[str, ...], wanted: set[str]) -> str:
    member, target = resolved.member.name, resolved.target
    if not codes:
        return (
            f"nothing to probe: {member} does not build {BACKEND} (burn's CPU backend Flex) "
            f"for {target} and has no finding whose crate the probe can time ({timed_crates()})"
        )
    asked = "any rule with a probe" if "ALL" in wanted else ", ".join(sorted(wanted))
    return (
        f"nothing to probe: {member} has no finding of {asked} on {target} whose crate the "
        f"probe can time ({timed_crates()})"
    )


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
