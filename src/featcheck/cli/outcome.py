"""What a check prints once the audit is done, and the exit code it ends with."""

from __future__ import annotations

import argparse
import io
import sys

from featcheck.cli.terminal import (
    EXIT_CLEAN,
    EXIT_ERROR,
    EXIT_FINDINGS,
    colour,
    fail,
    in_actions,
    print_checkout_text,
    print_error_lines,
    report_width,
)
from featcheck.errors import FeatcheckError
from featcheck.noexec.gaps import summary_line
from featcheck.render import formats
from featcheck.render.output import write_report
from featcheck.render.renderer import Renderer, RenderOptions
from featcheck.render.workflow import stop_commands
from featcheck.report import AuditResult
from featcheck.severity import FailOn


def finish(result: AuditResult, arguments: argparse.Namespace, output_format: str) -> int:
    """Print the report (and with --sarif write the SARIF file), then say the exit code."""
    github = output_format == "github" or in_actions()
    if arguments.verbose:
        for skip in result.skipped:  # said once, so that a skipped target is never just "clean"
            print_checkout_text(f"featcheck: {skip.describe()}", sys.stderr)
    try:
        _print_report(result, arguments, output_format)
        if arguments.sarif is not None:
            sarif = formats.renderer("sarif", RenderOptions())
            write_report(arguments.sarif, _rendered(sarif, result))
    except FeatcheckError as error:
        fail(error, github=github)
    if result.configuration_errors:
        lines = [f"featcheck: error: {line}" for line in result.configuration_errors]
        print_error_lines(lines, github=github)
    fail_on = None if arguments.fail_on is None else FailOn(arguments.fail_on)
    return exit_code(result, fail_on, github=github)


def _print_report(result: AuditResult, arguments: argparse.Namespace, output_format: str) -> None:
    """The report to stdout, or with `--output` to that file (see render/output.py)."""
    output = arguments.output
    options = RenderOptions(
        verbose=arguments.verbose,
        quiet=arguments.quiet,
        colour=colour(output, arguments.color),
        width=report_width(output),
    )
    text = _rendered(formats.renderer(output_format, options), result)
    if output is not None:
        write_report(output, text)
        return
    if not formats.FORMATS[output_format].inert and in_actions():
        # The text report quotes manifest lines: in an Actions log it is kept inert as a whole.
        text = stop_commands(text.splitlines())
    sys.stdout.write(text)


def _rendered(renderer: Renderer, result: AuditResult) -> str:
    stream = io.StringIO()
    renderer.render(result, stream)
    return stream.getvalue()


def exit_code(result: AuditResult, fail_on: FailOn | None, *, github: bool = False) -> int:
    """0 clean, 1 findings at or above `fail_on`, 2 when the audit could not give a verdict."""
    if result.configuration_errors:
        return EXIT_ERROR  # reported with the rest; a configuration could not be audited
    level = (fail_on or result.fail_on or FailOn.WARNING).threshold
    if level is not None and any(f.severity >= level for f in result.findings):
        return EXIT_FINDINGS
    if result.incomplete:
        # Not clean: a --no-exec audit could not see packages the verdict depends on.
        print_error_lines([f"featcheck: {summary_line(result.incomplete)}"], github=github)
        return EXIT_ERROR
    if result.no_verdict:
        # Not clean either: nothing was audited, or the saved tree cannot speak for a member.
        print_error_lines(
            [f"featcheck: error: no verdict: {'; '.join(result.no_verdict)}"], github=github
        )
        return EXIT_ERROR
    return EXIT_CLEAN
