"""What a check prints once the audit is done, and the exit code it ends with.

`--output FILE`: a report written to a file that only featcheck's report can end up in.
In CI the file's name often lies inside the checkout under review, and a pull request may commit
that name as a symlink to any file the runner's user can write (a shell profile, a git hook).
So an existing name must be a regular file; a symlink, directory, FIFO or device there is
refused. Missing directories on the way are made (`-o out/x.sarif` in a fresh checkout), after
that check. The report goes to a fresh temporary file created next to the name (O_EXCL: never an
existing file), which then replaces the name by rename; rename replaces the name itself, never
what a link points to, and a reader sees the old report or the new one, never half of one.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import stat
import sys
from pathlib import Path

from featcheck import render
from featcheck.cli.terminal import (
    EXIT_CLEAN,
    EXIT_ERROR,
    EXIT_FINDINGS,
    colour,
    fail,
    in_actions,
    print_checkout_text,
    print_error_lines,
    terminal_columns,
)
from featcheck.errors import FeatcheckError
from featcheck.noexec.gaps import summary_line
from featcheck.render.common import Renderer, RenderOptions
from featcheck.render.safe_text import stop_commands
from featcheck.report import AuditResult
from featcheck.severity import FailOn


def finish(result: AuditResult, arguments: argparse.Namespace, output_format: str) -> int:
    """Print the report (and with --sarif write the SARIF file), then say the exit code: 0
    clean, 1 findings at or above the failing level, 2 when the audit could not give a verdict."""
    github = output_format == "github" or in_actions()
    if arguments.verbose:
        for skip in result.skipped:  # said once, so that a skipped target is never just "clean"
            print_checkout_text(f"featcheck: {skip.describe()}", sys.stderr)
    output = arguments.output
    options = RenderOptions(
        verbose=arguments.verbose,
        quiet=arguments.quiet,
        colour=colour(output, arguments.color),
        # The terminal's width (or COLUMNS); None, the report's own, for a file or a pipe.
        width=None if output is not None else terminal_columns() or None,
    )
    try:
        text = _rendered(render.renderer(output_format, options), result)
        if output is not None:
            write_report(output, text)
        elif not render.FORMATS[output_format].inert and in_actions():
            # The text report quotes manifest lines: in an Actions log it is kept inert as a
            # whole.
            sys.stdout.write(stop_commands(text.splitlines()))
        else:
            sys.stdout.write(text)
        if arguments.sarif is not None:
            sarif = render.renderer("sarif", RenderOptions())
            write_report(arguments.sarif, _rendered(sarif, result))
    except FeatcheckError as error:
        fail(error, github=github)
    if result.configuration_errors:  # reported with the rest; a configuration could not be audited
        lines = [f"featcheck: error: {line}" for line in result.configuration_errors]
        print_error_lines(lines, github=github)
        return EXIT_ERROR
    fail_on = None if arguments.fail_on is None else FailOn(arguments.fail_on)
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


def _rendered(renderer: Renderer, result: AuditResult) -> str:
    stream = io.StringIO()
    renderer(result, stream)
    return stream.getvalue()


def _new_file(path: Path) -> tuple[int, Path]:
    """A new file beside `path`, of mode 0o666 less the umask as the kernel applies it (what `>`
    gives a new file). Reading the umask would set it for the whole process, threads and the
    processes they start included."""
    while True:
        temporary = path.parent / f".{path.name}.{os.urandom(4).hex()}"
        with contextlib.suppress(FileExistsError):
            flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0)
            return os.open(temporary, flags, 0o666), temporary


def write_report(path: Path, text: str) -> None:
    """A relative `path` must not pass through a symlinked directory either (a checkout could
    commit `reports` as a link to a directory outside it); an absolute one was chosen whole by
    whoever wrote the command line, so its directories are taken as they are.
    """
    current = Path()
    for part in () if path.is_absolute() else path.parts[:-1]:
        current = current / part
        if current.is_symlink():
            raise FeatcheckError(
                f"the directory {current} is a symlink; featcheck writes a report only into a "
                "real directory",
                path=path,
            )
    try:
        try:
            status: os.stat_result | None = os.lstat(path)
        except FileNotFoundError:
            status = None
        if status is not None and not stat.S_ISREG(status.st_mode):
            kind = "a symlink" if stat.S_ISLNK(status.st_mode) else "not a regular file"
            raise FeatcheckError(
                f"is {kind}; featcheck writes a report only to a regular file or a new name",
                path=path,
            )
        path.parent.mkdir(parents=True, exist_ok=True)
        handle, temporary = _new_file(path)
        try:
            with os.fdopen(handle, "w", encoding="utf-8", newline="") as stream:
                stream.write(text)
            os.replace(temporary, path)
        except BaseException:
            Path(temporary).unlink(missing_ok=True)
            raise
    except OSError as error:
        raise FeatcheckError(f"cannot write: {error.strerror or error}", path=path) from None
