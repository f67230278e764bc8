"""`featcheck probe`: the probe's options from the flags, its run (probe/member.py), its
report and exit code."""

from __future__ import annotations

import argparse
import os
import shlex
import sys

from featcheck.audit import project_manifest
from featcheck.boundary import TrustContext
from featcheck.cli.arguments import rule_codes
from featcheck.cli.terminal import EXIT_CLEAN, EXIT_FINDINGS, fail
from featcheck.errors import FeatcheckError
from featcheck.pipeline import audit_project
from featcheck.probe.cache import record as record_measurements
from featcheck.probe.command import ProbeOptions
from featcheck.probe.member import run_member_probe
from featcheck.probe.report import render_text
from featcheck.probe.schema import render_json
from featcheck.probe.verdict import Verdict

EXIT_INCONCLUSIVE = 3
"""Nothing measured a cost, and something could not be told (the matmul's verdict is
inconclusive, or a finding's two builds computed different results): not 0, which a CI gate
reads as "measured: no cost", nor 1 (a measured cost) or 2 (featcheck or cargo failed). 3 is
used by nothing else featcheck, Python or a shell returns."""


def probe(arguments: argparse.Namespace) -> int:
    try:
        path = project_manifest(arguments.path, arguments.manifest_path)
        # The probe's one trust context, from the path the user named: its copies get it derived.
        trust = TrustContext.of(path, os.environ)
        options = ProbeOptions(
            path=path,
            package=arguments.package,
            n=arguments.n,
            compare_fix=arguments.compare_fix,
            offline=arguments.offline,
            timeout=arguments.timeout,
            on_command=(lambda c: _say(f"running: {shlex.join(c)}")) if arguments.verbose else None,
            confirm=None if arguments.yes else _confirm,
            codes=rule_codes(arguments.rule),
        )
        report = run_member_probe(options, _say, trust, audit_project)
        if report.rules is not None:
            record_measurements(report, trust)  # for `featcheck --measured`
    except FeatcheckError as error:
        fail(error)
    if arguments.output_format == "json":
        sys.stdout.write(render_json(report))
    else:
        render_text(report)
    matmul, rules = report.matmul, report.rules or []
    verdict = matmul.current.decision.verdict if matmul is not None else None
    if verdict is Verdict.SINGLE or report.costs_here:
        return EXIT_FINDINGS
    # A finding's two builds that computed different results got no ratio.
    if verdict is Verdict.INCONCLUSIVE or any(not r.agree for r in rules):
        return EXIT_INCONCLUSIVE
    return EXIT_CLEAN


def _say(text: str) -> None:
    print(f"featcheck: {text}", file=sys.stderr, flush=True)


def _confirm(statement: str) -> bool:
    # The statement is already on stderr. Without a terminal nobody can answer, and a CI log
    # read afterwards is no consent: there the user says --yes in the command line.
    if not (sys.stdin.isatty() and sys.stderr.isatty()):
        raise FeatcheckError(
            "the probe must compile the crates listed above and no terminal can confirm "
            "it; pass --yes to allow the build (a probe built before needs no --yes)"
        )
    print("Build and run the probe? [y/N]: ", end="", file=sys.stderr, flush=True)
    return sys.stdin.readline().strip().lower() in {"y", "yes"}
