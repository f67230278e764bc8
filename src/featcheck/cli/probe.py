"""`featcheck probe`: the probe's options from the flags, its run (probe/command.py), its
report and exit code (1 when the member's matmul runs on one core)."""

from __future__ import annotations

import argparse
import os
import shlex
import sys
from pathlib import Path

from featcheck.audit import project_manifest
from featcheck.boundary import TrustContext
from featcheck.cli.terminal import EXIT_CLEAN, EXIT_FINDINGS, fail
from featcheck.errors import FeatcheckError
from featcheck.probe.command import ProbeOptions, run_probe
from featcheck.probe.report import render_json, render_text
from featcheck.probe.rules import report as rules_report
from featcheck.probe.rules.measured import record as record_measurements
from featcheck.probe.rules.run import RuleProbeOptions, run_rule_probes
from featcheck.probe.verdict import Verdict


def probe(arguments: argparse.Namespace) -> int:
    """Build and time the member's matmul (or with --rule, the crates of its findings)."""
    try:
        path = project_manifest(arguments.path, arguments.manifest_path)
    except FeatcheckError as error:
        fail(error)
    if arguments.rule:
        return _probe_rules(arguments, path)
    options = ProbeOptions(
        path=path,
        package=arguments.package,
        n=arguments.n,
        compare_fix=arguments.compare_fix,
        offline=arguments.offline,
        mlp=arguments.mlp,
        timeout=arguments.timeout,
        on_command=_show_command if arguments.verbose else None,
        confirm=None if arguments.yes else _confirm,
    )
    try:
        report = run_probe(options, _say)
    except FeatcheckError as error:
        fail(error)
    if arguments.output_format == "json":
        sys.stdout.write(render_json(report))
    else:
        render_text(report)
    single = report.current.decision.verdict is Verdict.SINGLE
    return EXIT_FINDINGS if single else EXIT_CLEAN


def _probe_rules(arguments: argparse.Namespace, path: Path) -> int:
    """`--rule CODE`: each finding's crate timed as built and as fixed; exit 1 where one
    measurably costs speed here."""
    options = RuleProbeOptions(
        path=path,
        codes=tuple(code.strip() for value in arguments.rule for code in value.split(",")),
        package=arguments.package,
        offline=arguments.offline,
        timeout=arguments.timeout,
        on_command=_show_command if arguments.verbose else None,
        confirm=None if arguments.yes else _confirm,
    )
    try:
        # The probe's one trust context, from the path the user named: its copies get it derived.
        trust = TrustContext.of(path, os.environ)
        report = run_rule_probes(options, _say, trust)
        record_measurements(report, trust)  # for `featcheck --measured`
    except FeatcheckError as error:
        fail(error)
    if arguments.output_format == "json":
        sys.stdout.write(rules_report.render_json(report))
    else:
        rules_report.render_text(report, sys.stdout)
    return EXIT_FINDINGS if rules_report.costs_here(report) else EXIT_CLEAN


def _say(text: str) -> None:
    print(f"featcheck: {text}", file=sys.stderr, flush=True)


def _show_command(command: list[str]) -> None:
    _say(f"running: {shlex.join(command)}")


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
