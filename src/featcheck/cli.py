"""The command line: builds options from flags, runs the audit, renders, and sets the exit code.

Exit codes: 0 no finding at or above the failing level, 1 findings, 2 usage, input or cargo error.
"""

from __future__ import annotations

import functools
import io
import os
import shlex
import sys
import threading
from contextlib import AbstractContextManager, nullcontext
from dataclasses import replace
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, NoReturn, TextIO

import typer
from typer.core import TyperGroup

from featcheck import __version__
from featcheck.errors import FeatcheckError

if TYPE_CHECKING:
    from rich.console import Console

    from featcheck.report import AuditResult

EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2
_GROUP_FLAGS = ("--help", "-h", "--version")


class _DefaultToCheck(TyperGroup):
    """`featcheck PATH` means `featcheck check PATH`: the audit is the default command."""

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        if not args or (args[0] not in self.commands and args[0] not in _GROUP_FLAGS):
            args = ["check", *args]
        return super().parse_args(ctx, args)


# `\b` keeps click from re-wrapping the example lines.
_EXAMPLES = (
    "\b\n"
    "Examples:\n"
    "  featcheck                    audit the Cargo project in the current directory\n"
    "  featcheck crates/app -p app --target aarch64-apple-darwin\n"
    "  featcheck . --format sarif -o featcheck.sarif\n"
    "  cargo tree -e normal -f '{p} [{f}]' -i burn-flex | featcheck --tree -\n"
    "  cargo featcheck              the same audit, as a cargo subcommand\n"
    "\n"
    "\b\n"
    "Exit codes: 0 clean, 1 findings at or above --fail-on, 2 usage, input or cargo error.\n"
    "Formats: text (default), json, sarif (code scanning), github (annotations and job\n"
    "summary; the default when GITHUB_ACTIONS=true). NO_COLOR turns colour off."
)

app = typer.Typer(
    cls=_DefaultToCheck,
    add_completion=False,
    no_args_is_help=False,
    rich_markup_mode=None,
    context_settings={"help_option_names": ["-h", "--help"]},
    help="Audit the resolved Cargo feature set of a Rust project for silent performance losses.",
)


class OutputFormat(str, Enum):
    text = "text"
    json = "json"
    github = "github"
    sarif = "sarif"


class Resolver(str, Enum):
    featcheck = "featcheck"
    cargo = "cargo"


class FailOn(str, Enum):
    error = "error"
    warning = "warning"
    info = "info"
    never = "never"


def _version(value: bool) -> None:
    if value:
        print(f"featcheck {__version__}")
        raise typer.Exit(EXIT_CLEAN)


@app.callback(epilog=_EXAMPLES)
def _root(
    version: Annotated[
        bool,
        typer.Option("--version", callback=_version, is_eager=True, help="Print the version."),
    ] = False,
) -> None:
    """Audit the resolved Cargo feature set of a Rust project for silent performance losses."""


@app.command(epilog=_EXAMPLES)
def check(
    path: Annotated[
        Path, typer.Argument(help="A directory with a Cargo.toml, or the Cargo.toml itself.")
    ] = Path("."),
    package: Annotated[
        list[str] | None,
        typer.Option(
            "--package",
            "-p",
            metavar="MEMBER",
            help="Audit only this workspace member (repeatable).",
        ),
    ] = None,
    target: Annotated[
        list[str] | None,
        typer.Option(
            "--target",
            metavar="TRIPLE",
            help="Audit for this target triple (repeatable; default: host).",
        ),
    ] = None,
    tree: Annotated[
        str | None,
        typer.Option(
            "--tree",
            metavar="FILE",
            help="Audit text saved from `cargo tree -f '{p} [{f}]'` instead (- for stdin).",
        ),
    ] = None,
    output_format: Annotated[
        OutputFormat | None,
        typer.Option(
            "--format",
            help="Output format  [default: github when GITHUB_ACTIONS=true, else text]",
        ),
    ] = None,
    fail_on: Annotated[
        FailOn | None,
        typer.Option(
            "--fail-on",
            help="Lowest severity that makes the exit code 1  [default: the configuration's "
            "fail-on, else warning]",
        ),
    ] = None,
    offline: Annotated[bool, typer.Option("--offline", help="Pass --offline to cargo.")] = False,
    locked: Annotated[
        bool, typer.Option("--locked", help="Pass --locked to cargo (fail if Cargo.lock is stale).")
    ] = False,
    timeout: Annotated[
        float,
        typer.Option("--timeout", metavar="SECONDS", help="Seconds to wait for each cargo call."),
    ] = 300.0,
    quiet: Annotated[
        bool,
        typer.Option(
            "--quiet",
            "-q",
            help="Text format: print only findings (nothing when clean), no notes or summary.",
        ),
    ] = False,
    verbose: Annotated[
        bool,
        typer.Option(
            "--verbose",
            "-v",
            help="Text format: show each finding's chain, notes, full why and other fixes; "
            "print each cargo and rustc command to stderr.",
        ),
    ] = False,
    trust_checkout: Annotated[
        bool,
        typer.Option(
            "--trust-checkout",
            help="Let cargo obey the project's rust-toolchain.toml and .cargo/config.toml, "
            "which can run the project's own programs (default: it runs none).",
        ),
    ] = False,
    select: Annotated[
        list[str] | None,
        typer.Option(
            "--select",
            metavar="CODES",
            help="Also run these rules (codes or names, comma-separated), e.g. the hints.",
        ),
    ] = None,
    ignore: Annotated[
        list[str] | None,
        typer.Option("--ignore", metavar="CODES", help="Do not run these rules."),
    ] = None,
    fix: Annotated[
        bool,
        typer.Option(
            "--fix",
            help="Apply the fixes cargo confirmed, show the diff, then audit again "
            "(cargo may update Cargo.lock for the new features, as `cargo add` would).",
        ),
    ] = False,
    diff: Annotated[
        bool,
        typer.Option("--diff", help="Print the diff --fix would apply, and change nothing."),
    ] = False,
    resolver: Annotated[
        Resolver,
        typer.Option(
            "--resolver",
            help="featcheck: resolve features from one `cargo metadata` call (fast, proven equal "
            "to cargo); cargo: ask `cargo tree -e normal` per member and target.",
        ),
    ] = Resolver.featcheck,
    output: Annotated[
        Path | None,
        typer.Option(
            "--output",
            "-o",
            metavar="FILE",
            help="Write the report to FILE instead of stdout (a regular file or a new name; "
            "an existing symlink or special file there is refused).",
        ),
    ] = None,
    no_exec: Annotated[
        bool,
        typer.Option(
            "--no-exec",
            help="Start no process (no cargo, rustc, rustup): read the manifests, Cargo.lock "
            "and the local cargo registry or vendor/; fixes are not confirmed.",
        ),
    ] = False,
) -> None:
    """Audit a project (or saved cargo tree text) and report what costs performance.

    Resolves features per workspace member and per target exactly as `cargo build -p MEMBER`
    does (`cargo tree -e normal -p MEMBER --target T`), then applies the rules.
    """
    from featcheck.audit import AuditOptions, audit_project, audit_tree_text

    chosen_format = output_format or _default_format()
    github = chosen_format is OutputFormat.github or _in_actions()
    terminal = _Terminal(spinner=not quiet, github=github)
    options = AuditOptions(
        packages=tuple(package or ()),
        targets=tuple(target or ()),
        offline=offline,
        locked=locked,
        timeout=timeout,
        select=_codes(select),
        ignore=_codes(ignore),
        on_command=terminal.show_command if verbose else None,
        trust_checkout=trust_checkout,
        resolver=resolver.value,
        no_exec=no_exec,
    )
    try:
        if tree is not None:
            if fix or diff:
                raise FeatcheckError("--fix and --diff need the project, not saved tree text")
            text = _read_tree_input(tree)
            result = audit_tree_text(text, "<stdin>" if tree == "-" else tree, options)
        else:
            with terminal.working("Reading the manifests" if no_exec else "Resolving features"):
                result = audit_project(path, options)
            if diff:
                _show_diff(result)
            if fix:
                _apply_fixes(result)
                with terminal.working("Auditing again"):
                    result = audit_project(path, replace(options, update_lockfile=True))
    except FeatcheckError as error:
        _fail(error, github=github)
    if verbose:
        for skip in result.skipped:  # said once, so that a skipped target is never just "clean"
            print(f"featcheck: {skip.describe()}", file=sys.stderr)
    try:
        _render(result, chosen_format, quiet=quiet, verbose=verbose, output=output)
    except FeatcheckError as error:
        _fail(error, github=github)
    raise typer.Exit(_exit_code(result, fail_on, github=github))


def _codes(values: list[str] | None) -> tuple[str, ...]:
    """`--select FC001,FC003 --select FC006` -> ("FC001", "FC003", "FC006")."""
    return tuple(
        code.strip() for value in values or () for code in value.split(",") if code.strip()
    )


def _exit_code(result: AuditResult, fail_on: FailOn | None, *, github: bool = False) -> int:
    from featcheck.report import Severity

    chosen = fail_on.value if fail_on is not None else result.fail_on or "warning"
    if chosen != "never":
        level = Severity.parse(chosen)
        if any(f.severity >= level for f in result.findings):
            return EXIT_FINDINGS
    if result.incomplete:
        # Not clean: a --no-exec audit could not see packages the verdict depends on.
        from featcheck.noexec.gaps import summary_line

        _print_error_lines([f"featcheck: {summary_line(result.incomplete)}"], github=github)
        return EXIT_ERROR
    return EXIT_CLEAN


def _show_diff(result: AuditResult) -> None:
    """`--diff`: the diff on stdout, nothing written; exit 1 when there is something to fix."""
    from featcheck.fixes.apply import plan_changes, render_diff

    changes = plan_changes(result.findings)
    _print_diff(render_diff(changes), sys.stdout)
    unfixable = sum(1 for f in result.findings if f.fix is None and f.location is not None)
    print(
        f"featcheck: {len(changes)} file(s) would change"
        + (f"; {unfixable} finding(s) have no confirmed fix" if unfixable else ""),
        file=sys.stderr,
    )
    raise typer.Exit(EXIT_FINDINGS if changes else EXIT_CLEAN)


def _print_diff(diff: str, stream: TextIO) -> None:
    """A diff quotes manifest lines: control characters (not tabs) escaped, inert in Actions."""
    from featcheck.render.common import printable

    # A CRLF line ending is the manifest's own style, not a hidden CR: it is shown as a line end.
    lines = [printable(line.removesuffix("\r"), tabs=True) for line in diff.split("\n")]
    if lines and not lines[-1]:
        lines.pop()
    if _in_actions():
        from featcheck.render.github import stop_commands

        stream.write(stop_commands(lines))
    else:
        stream.write("".join(f"{line}\n" for line in lines))


def _apply_fixes(result: AuditResult) -> None:
    """`--fix`: write the confirmed fixes and show what changed (on stderr)."""
    from featcheck.fixes.apply import plan_changes, render_diff, write_changes

    changes = plan_changes(result.findings)
    write_changes(changes)
    _print_diff(render_diff(changes), sys.stderr)
    print(f"featcheck: fixed {len(changes)} file(s)", file=sys.stderr)


@app.command("rules")
def list_rules(
    path: Annotated[
        Path,
        typer.Argument(help="The project whose own rules ([[rule]] entries) to list too."),
    ] = Path("."),
) -> None:
    """List every rule: code, name, default severity, what it checks."""
    from featcheck.config import project_catalogue
    from featcheck.rules.docs import documented_rules, rule_line

    try:
        catalogue = project_catalogue(path)
    except FeatcheckError as error:
        _fail(error)
    for rule in documented_rules(catalogue.rules):
        print(rule_line(rule))


@app.command("rule")
def show_rule(
    code: Annotated[str, typer.Argument(help="A rule code or name, e.g. FC001.")],
    path: Annotated[
        Path, typer.Argument(help="The project whose own rules to look in too.")
    ] = Path("."),
) -> None:
    """Print one rule's documentation."""
    from featcheck.config import project_catalogue
    from featcheck.rules.docs import find_documented, rule_markdown

    try:
        rule = find_documented(code, project_catalogue(path).rules)
    except FeatcheckError as error:
        _fail(error)
    if rule is None:
        _fail(FeatcheckError(f"unknown rule {code!r} (see `featcheck rules`)"))
    print(rule_markdown(rule), end="")


# --- terminal manners, machine formats and `cargo featcheck` (issue 4) ---------------------


class _Terminal:
    """stderr while an audit runs: a spinner on a terminal, cargo commands with --verbose.

    With `github` (an Actions log), each command line is printed inside its own stop-commands
    block, one block at a time: the checkout's values in it must not become workflow commands.
    """

    def __init__(self, *, spinner: bool, github: bool = False) -> None:
        # Only a real terminal gets the animation (FORCE_COLOR must not put it in CI logs).
        self.spinner = spinner and sys.stderr.isatty()
        self.github = github
        self._lock = threading.Lock()

    @functools.cached_property
    def console(self) -> Console:
        """Made on first use: a hook's non-interactive run never pays for importing rich."""
        from rich.console import Console

        # rich drops colour when stderr is not a terminal or NO_COLOR is set.
        return Console(stderr=True, highlight=False, soft_wrap=True)

    def show_command(self, command: list[str]) -> None:
        """Print one command line (called from the audit's worker threads)."""
        from featcheck.render.common import printable

        line = f"featcheck: running: {printable(shlex.join(command))}"
        if self.github:
            from featcheck.render.github import stop_commands

            with self._lock:
                sys.stderr.write(stop_commands([line]))
                sys.stderr.flush()
            return
        self.console.print(line, markup=False, style="dim")

    def working(self, what: str) -> AbstractContextManager[object]:
        """A spinner for the duration of the block, or nothing when stderr is not a terminal."""
        if not self.spinner:
            return nullcontext()
        return self.console.status(f"{what}...", spinner="dots")


def _in_actions() -> bool:
    """Inside GitHub Actions, whose runner reads workflow commands from everything printed."""
    return os.environ.get("GITHUB_ACTIONS") == "true"


def _default_format() -> OutputFormat:
    """github inside GitHub Actions (GITHUB_ACTIONS=true), text everywhere else."""
    return OutputFormat.github if _in_actions() else OutputFormat.text


def _render(
    result: AuditResult,
    output_format: OutputFormat,
    *,
    quiet: bool,
    verbose: bool,
    output: Path | None = None,
) -> None:
    """Render to stdout, or with `output` to that file (see render/output.py)."""
    stream = io.StringIO()
    if output_format is OutputFormat.json:
        from featcheck.render.json_report import render_json

        stream.write(render_json(result))
    elif output_format is OutputFormat.sarif:
        from featcheck.render.sarif import render_sarif

        stream.write(render_sarif(result))
    elif output_format is OutputFormat.github:
        from featcheck.render.github import write_github

        write_github(result, stream)
    elif quiet:
        from featcheck.render.text_report import render_findings

        render_findings(result, stream, verbose=verbose)
    else:
        from featcheck.render.text_report import render_text

        render_text(result, stream, verbose=verbose)
    text = stream.getvalue()
    if output is not None:
        from featcheck.render.output import write_report

        write_report(output, text)
        return
    if output_format is OutputFormat.text and _in_actions():
        # The text report quotes manifest lines: in an Actions log it is kept inert as a whole.
        from featcheck.render.github import stop_commands

        text = stop_commands(text.splitlines())
    sys.stdout.write(text)


def cargo_main() -> None:
    """Entry point of `cargo featcheck`: cargo runs `cargo-featcheck featcheck ARGS...`."""
    args = sys.argv[1:]
    if args[:1] == ["featcheck"]:
        args = args[1:]
    app(args=args, prog_name="cargo featcheck")


# --- end of issue 4 additions -------------------------------------------------------------


# --- `featcheck probe` (issue 5): the one command that compiles and runs code --------------


class ProbeFormat(str, Enum):
    text = "text"
    json = "json"


_PROBE_HELP = """Measure whether the member's matmul runs on one core: build and time a probe.

\b
The probe is the only part of featcheck that compiles and runs code. It builds registry
crates at the versions your Cargo.lock pins (burn, burn-flex and gemm with exactly the
features your member resolves) plus featcheck's own small probe crate, in your cache
directory ($XDG_CACHE_HOME or ~/.cache, featcheck/probe). Compiling runs those crates'
build scripts and proc-macros; before it does, the probe lists them and asks (on a
terminal) or needs --yes (anywhere else). It never builds or runs your crate, its build
script or its path dependencies. A probe built before compiles nothing and asks nothing.

\b
It times an N x N f32 matmul and one 784-512-10 MLP train step (batch 256) on burn's CPU
backend (warm-up, then 10 timed runs; min and median) with RAYON_NUM_THREADS=1 and with
all cores, recording which threads of the probe did the work. The first build of a
configuration takes minutes; later probes of it start timing within seconds.

\b
Verdict, from the CPU time of each thread during the all-core matmuls (valid on a busy
machine): single-threaded (exit 1) or multi-threaded (exit 0); timings are shown as the
second piece of evidence, marked when measured under load. Inconclusive (exit 0) only
when it cannot be told: one core, n below 192, or threads not observable (not Linux) with
timings that do not settle it. Exit 2 on errors.
"""


@app.command("probe", help=_PROBE_HELP)
def probe(
    path: Annotated[
        Path, typer.Argument(help="A directory with a Cargo.toml, or the Cargo.toml itself.")
    ] = Path("."),
    package: Annotated[
        str | None,
        typer.Option("--package", "-p", metavar="MEMBER", help="The workspace member to probe."),
    ] = None,
    n: Annotated[
        int,
        typer.Option(
            "--n", metavar="N", help="Matrix size (below 192 burn-flex never parallelises)."
        ),
    ] = 1024,
    compare_fix: Annotated[
        bool,
        typer.Option(
            "--compare-fix",
            help="Also build and time the member with featcheck's confirmed fix applied (on a "
            "temporary copy), and PyTorch when it is importable.",
        ),
    ] = False,
    output_format: Annotated[
        ProbeFormat, typer.Option("--format", help="Output format.")
    ] = ProbeFormat.text,
    offline: Annotated[
        bool,
        typer.Option(
            "--offline", help="Keep cargo off the network (needs a filled registry cache)."
        ),
    ] = False,
    mlp: Annotated[
        bool,
        typer.Option("--mlp/--no-mlp", help="Also time one training step of a 784-512-10 MLP."),
    ] = True,
    yes: Annotated[
        bool,
        typer.Option(
            "--yes",
            "-y",
            help="Build without asking (required where no terminal can ask, such as CI).",
        ),
    ] = False,
    timeout: Annotated[
        float,
        typer.Option(
            "--timeout", metavar="SECONDS", help="Seconds for each cargo resolution and probe run."
        ),
    ] = 300.0,
    verbose: Annotated[
        bool, typer.Option("--verbose", "-v", help="Print each cargo command to stderr.")
    ] = False,
) -> None:
    from featcheck.probe.command import ProbeOptions, run_probe
    from featcheck.probe.verdict import Verdict

    def say(text: str) -> None:
        print(f"featcheck: {text}", file=sys.stderr, flush=True)

    def show_command(command: list[str]) -> None:
        say(f"running: {shlex.join(command)}")

    def confirm(statement: str) -> bool:
        # The statement is already on stderr. Without a terminal nobody can answer, and a CI
        # log read afterwards is no consent: there the user says --yes in the command line.
        if not (sys.stdin.isatty() and sys.stderr.isatty()):
            raise FeatcheckError(
                "the probe must compile the crates listed above and no terminal can confirm "
                "it; pass --yes to allow the build (a probe built before needs no --yes)"
            )
        return typer.confirm("Build and run the probe?", default=False, err=True)

    options = ProbeOptions(
        path=path,
        package=package,
        n=n,
        compare_fix=compare_fix,
        offline=offline,
        mlp=mlp,
        timeout=timeout,
        on_command=show_command if verbose else None,
        confirm=None if yes else confirm,
    )
    try:
        report = run_probe(options, say)
    except FeatcheckError as error:
        _fail(error)
    if output_format is ProbeFormat.json:
        from featcheck.probe.report import render_json

        sys.stdout.write(render_json(report))
    else:
        from featcheck.probe.report import render_text

        render_text(report)
    single = report.current.decision.verdict is Verdict.SINGLE
    raise typer.Exit(EXIT_FINDINGS if single else EXIT_CLEAN)


# --- end of issue 5 additions -------------------------------------------------------------


def _read_tree_input(name: str) -> str:
    if name == "-":
        data = sys.stdin.buffer.read()
    else:
        try:
            data = Path(name).read_bytes()
        except OSError as error:
            raise FeatcheckError(f"cannot read: {error.strerror or error}", path=name) from None
    return data.decode("utf-8", errors="replace")


def _fail(error: FeatcheckError, *, github: bool = False) -> NoReturn:
    """The error on stderr, control characters escaped, and exit 2.

    The message may quote the checkout (cargo's errors quote manifest lines), so with `github`
    or inside GitHub Actions it is printed inside a stop-commands block (render/github.py).
    """
    from featcheck.render.common import printable_lines

    first, *rest = printable_lines(str(error)) if str(error) else ["unknown error"]
    _print_error_lines(
        [f"featcheck: error: {first}", *(f"  {line}" for line in rest)], github=github
    )
    raise typer.Exit(EXIT_ERROR)


def _print_error_lines(lines: list[str], *, github: bool = False) -> None:
    """Lines that may quote the checkout, on stderr: printable, and inside stop-commands in
    GitHub Actions (render/github.py)."""
    from featcheck.render.common import printable

    shown = [printable(line) for line in lines]
    if github or _in_actions():
        from featcheck.render.github import stop_commands

        sys.stderr.write(stop_commands(shown))
    else:
        sys.stderr.write("".join(f"{line}\n" for line in shown))
    sys.stderr.flush()


def main() -> None:
    """Console-script entry point."""
    app()
