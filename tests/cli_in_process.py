"""What `featcheck check` prints for several command lines that differ only in what they print
(the format, `--diff`), from one audit in this process, with cargo's answers from a given
source (`cargo_answers.RecordedCargo`, or a recording of real cargo).

Each output is made by the command line's own stages, as `featcheck.cli.check` chains them:
its parser and options, the audit, the fix stage (`--diff`), the report stage and its exit
code. Every process an audit would start for cargo (the workspace's metadata, a fix's copy
confirmed by cargo, `--diff`'s audit of the fixed copy) asks the source instead; a real
process is refused (cargo/process.py), so a question the source cannot answer fails the test
rather than running cargo.

`run_in_process` is `support.run_featcheck` without the process: any command line, real cargo.
"""

from __future__ import annotations

import contextlib
import io
import os
import subprocess
import sys
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, NoReturn
from unittest import mock

import featcheck.pipeline
import featcheck.stages.place
from featcheck.audit import SourceFactory, project_manifest, started_audit
from featcheck.boundary import TrustContext
from featcheck.cargo.pending_metadata import MetadataSource
from featcheck.cargo.process import ProcessRefused
from featcheck.cargo.runner import CargoRunner
from featcheck.cli import check, lazy, run
from featcheck.cli.check_arguments import check_parser
from featcheck.cli.terminal import CommandExit, Progress, fail, help_width, terminal_columns
from featcheck.errors import FeatcheckError
from featcheck.featureset import AuditOptions
from featcheck.pipeline import audit_started
from featcheck.report import AuditResult

ENVIRONMENT = {"NO_COLOR": "1", "COLUMNS": "100"}
"""What `support.run_featcheck` gives its featcheck, and the rule snapshots were taken with."""


@contextlib.contextmanager
def answered_by(source_of: SourceFactory) -> Iterator[None]:
    """Every cargo of an audit is `source_of`'s: the audit's own, `--diff`'s audit of the fixed
    copy (pipeline.audit_project) and the copy a fix is confirmed in (stages/place.py)."""

    def copy_source(
        source: MetadataSource, copy: Path, options: AuditOptions, tree: Path | None = None
    ) -> object:
        # What place.py's copy_source gives its runner: the audit's network and time, never
        # --locked (the copy's lockfile must change), no download progress.
        given = AuditOptions(
            offline=options.offline, timeout=options.timeout, on_command=options.on_command
        )
        made = source_of(copy, given, source.trust.derive(tree or copy))
        if isinstance(source, CargoRunner) and isinstance(made, CargoRunner):
            made._setup = source.prepared_setup()  # the audit's toolchain, as place.py gives it
        return made

    # Read first: where a stage no longer names these (renamed, moved), this fails at once.
    saved = featcheck.pipeline.cargo_source, featcheck.stages.place.copy_source
    featcheck.pipeline.cargo_source = source_of  # type: ignore[assignment]
    featcheck.stages.place.copy_source = copy_source  # type: ignore[assignment]
    try:
        yield
    finally:
        featcheck.pipeline.cargo_source, featcheck.stages.place.copy_source = saved


@contextlib.contextmanager
def _as_the_command_line(
    cwd: Path, environment: Mapping[str, str | None] | None = None
) -> Iterator[None]:
    """The environment and directory `run_featcheck` gives its process, over `environment`
    (a None value: the variable is unset); all of it put back on leaving."""
    given = dict(environment or {})
    saved = {name: os.environ.get(name) for name in (*given, *ENVIRONMENT)}
    before = Path.cwd()
    for name, value in given.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value
    os.environ.update(ENVIRONMENT)
    _measure_the_terminal_again()
    os.chdir(cwd)
    try:
        yield
    finally:
        os.chdir(before)
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
        _measure_the_terminal_again()


def _measure_the_terminal_again() -> None:
    """A process measures its terminal once (COLUMNS, else the terminal); each command line
    here is a process of its own, with its own COLUMNS."""
    terminal_columns.cache_clear()
    help_width.cache_clear()


class _Printed:
    """stdout and stderr of one stage, with the exit code it ended with."""

    def __init__(self) -> None:
        self.stdout, self.stderr = io.StringIO(), io.StringIO()
        self.code: int | None = None

    @contextlib.contextmanager
    def capturing(self) -> Iterator[None]:
        with contextlib.redirect_stdout(self.stdout), contextlib.redirect_stderr(self.stderr):
            try:
                yield
            except CommandExit as done:
                self.code = done.code


@contextlib.contextmanager
def refusing_processes() -> Iterator[None]:
    """Start no process in this block: every process featcheck starts goes through
    `subprocess.Popen` (cargo/process.py's `open_process`, and `subprocess.run`)."""

    def refuse(argv: Sequence[str], *_: object, **__: object) -> NoReturn:
        raise ProcessRefused(str(argv[0]))

    with mock.patch.object(subprocess, "Popen", refuse):
        yield


def printed(
    command_lines: Mapping[str, Sequence[str]],
    cwd: Path,
    source_of: SourceFactory,
    *,
    processes: bool = False,
) -> dict[str, str]:
    """For each kind, `exit code: N\\n--- stdout\\n...--- stderr\\n...` as `featcheck ARGS` in
    `cwd` prints it; command lines that audit alike share one audit. Without `processes`,
    starting one fails (the source must answer everything)."""
    parsed = {
        kind: check_parser("featcheck").parse_args(args) for kind, args in command_lines.items()
    }
    refusal = contextlib.nullcontext() if processes else refusing_processes()
    with _as_the_command_line(cwd), answered_by(source_of), refusal:
        # One audit per distinct options: a text report searches no alternatives, JSON does.
        audits: list[tuple[AuditOptions, _Printed, _Audited | None]] = []
        outputs = {}
        for kind, arguments in parsed.items():
            options = _options(arguments)
            earlier = [(audit, done) for made, audit, done in audits if made == options]
            if earlier:
                audit, audited = earlier[0]
            else:
                audit, audited = _Printed(), None
                with audit.capturing():
                    audited = _audit(arguments, source_of)
                audits.append((options, audit, audited))
            stage = _Printed()
            if audited is None:
                stage.code = audit.code
            else:
                with stage.capturing():
                    stage.code = _report(arguments, *audited)
            stdout = audit.stdout.getvalue() + stage.stdout.getvalue()
            stderr = audit.stderr.getvalue() + stage.stderr.getvalue()
            outputs[kind] = f"exit code: {stage.code}\n--- stdout\n{stdout}--- stderr\n{stderr}"
    return outputs


def _options(arguments: Any) -> AuditOptions:
    return check._options(arguments, _progress(arguments), arguments.output_format or "text")


def _progress(arguments: Any) -> Progress:
    return Progress(spinner=not arguments.quiet)


_Audited = tuple[Path, AuditOptions, TrustContext, AuditResult]


def _audit(arguments: Any, source_of: SourceFactory) -> _Audited:
    """`check._audit_project` up to its fix stage, with `source_of` for cargo."""
    options = _options(arguments)
    path = project_manifest(arguments.path, arguments.manifest_path)
    trust = TrustContext.of(path, os.environ, trust_checkout=arguments.trust_checkout)
    try:
        with started_audit(path, options, trust, source_of) as started:
            result = audit_started(started)
    except FeatcheckError as error:
        fail(error)
    result.fix_level = check._fix_level(arguments, result)
    return path, options, trust, result


def _report(
    arguments: Any, path: Path, options: AuditOptions, trust: TrustContext, result: AuditResult
) -> int:
    """The rest of `check.check`: `--diff`'s stage, or the report and its exit code."""
    output_format: str = arguments.output_format or "text"
    try:
        if arguments.diff:
            lazy.fix_stage()(result, path, options, trust, _progress(arguments), diff=True)
    except FeatcheckError as error:
        fail(error)
    return lazy.report_stage(output_format)(result, arguments, output_format)


def run_in_process(
    *args: str,
    cwd: Path | None = None,
    stdin: str | None = None,
    columns: int = 200,
    environment: Mapping[str, str | None] | None = None,
) -> subprocess.CompletedProcess[str]:
    """`support.run_featcheck` in this process: the same command line (`featcheck.cli.run`) in
    the same environment (with `environment` over the test's, None unsetting a variable), its
    streams captured (`stdin` its input), without a Python start-up and imports of its own. For
    tests of what featcheck prints; a test of the process itself (signals, exit on a broken
    pipe, what runs beside it) runs it as a user does."""
    stage = _Printed()
    given = io.TextIOWrapper(io.BytesIO((stdin or "").encode()), encoding="utf-8")
    with _as_the_command_line(cwd or Path.cwd(), environment), _reading(given):
        os.environ["COLUMNS"] = str(columns)  # put back with the rest on leaving
        _measure_the_terminal_again()
        with stage.capturing():
            try:
                stage.code = run(list(args))
            except SystemExit as done:  # argparse's usage errors, --help
                stage.code = done.code if isinstance(done.code, int) else 1
    assert stage.code is not None
    return subprocess.CompletedProcess(
        ["featcheck", *args], stage.code, stage.stdout.getvalue(), stage.stderr.getvalue()
    )


@contextlib.contextmanager
def _reading(stream: io.TextIOWrapper) -> Iterator[None]:
    saved, sys.stdin = sys.stdin, stream
    try:
        yield
    finally:
        sys.stdin = saved
