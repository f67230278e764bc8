"""The command line: builds options from flags, runs the audit, renders, and sets the exit code.

Exit codes: 0 no finding at or above the failing level, 1 findings, 2 usage, input or cargo error.

Built on the standard library's argparse: a commit hook pays for every millisecond of start-up,
and a CLI framework that coerces each parameter through a validation library cost more than the
audit of a small crate (see benchmarks/bench_cli.py). Nothing here imports the audit, rich or
tomlkit until a command needs them.
"""

from __future__ import annotations

import argparse
import functools
import io
import os
import shlex
import sys
import threading
from collections.abc import Sequence
from contextlib import AbstractContextManager, nullcontext, suppress
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn, TextIO

from featcheck import __version__
from featcheck.errors import FeatcheckError

if TYPE_CHECKING:
    from rich.console import Console

    from featcheck.featureset import FeatureSelection
    from featcheck.fixes.commit import Prepared
    from featcheck.report import AuditResult

EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2
OUTPUT_FORMATS = ("text", "json", "github", "sarif")
FAIL_ON_LEVELS = ("error", "warning", "info", "never")
RESOLVERS = ("featcheck", "cargo")
COLOUR_CHOICES = ("auto", "always", "never")
COMMANDS = ("check", "rules", "rule", "probe")

_EXAMPLES = """\
Examples:
  featcheck                    audit the Cargo project in the current directory
  featcheck crates/app -p app --target aarch64-apple-darwin
  featcheck . --format sarif -o featcheck.sarif
  cargo tree -e normal -f '{p} [{f}]' -i burn-flex | featcheck --tree -
  cargo featcheck              the same audit, as a cargo subcommand

Other commands:
  featcheck rules              list every rule
  featcheck rule CODE          print one rule's documentation
  featcheck probe [PATH]       time the member's matmul in a probe build

Exit codes: 0 clean, 1 findings at or above --fail-on, 2 usage, input or cargo error.
Formats: text (default), json, sarif (code scanning), github (annotations and job
summary; the default when GITHUB_ACTIONS=true). NO_COLOR turns colour off, FORCE_COLOR on;
--color always or never decides over both.
"""


class _Exit(Exception):
    """Ends a command with an exit code (raised by helpers deep in a command)."""

    def __init__(self, code: int) -> None:
        super().__init__(code)
        self.code = code


class _Formatter(argparse.HelpFormatter):
    """argparse's layout with a capitalised `Usage:` and room for long option names; the
    description and epilog are wrapped to the terminal paragraph by paragraph, except the
    paragraphs with indented lines (examples), which are kept as written."""

    def __init__(self, prog: str) -> None:
        super().__init__(prog, max_help_position=32, width=_help_width())

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        import textwrap

        paragraphs = []
        for paragraph in text.strip("\n").split("\n\n"):
            lines = paragraph.splitlines()
            if any(line.startswith(" ") for line in lines[1:]):
                paragraphs.append("\n".join(indent + line for line in lines))
            else:
                joined = " ".join(line.strip() for line in lines)
                paragraphs.append(
                    textwrap.fill(joined, width, initial_indent=indent, subsequent_indent=indent)
                )
        return "\n\n".join(paragraphs)

    def add_usage(
        self,
        usage: str | None,
        actions: object,
        groups: object,
        prefix: str | None = None,
    ) -> None:
        super().add_usage(usage, actions, groups, "Usage: " if prefix is None else prefix)  # type: ignore[arg-type]


@functools.cache
def _help_width() -> int:
    """The width argparse's formatter takes from `shutil.get_terminal_size` (COLUMNS, else the
    terminal, else 80; less its margin of 2), found the same way here: given no width, every
    parser argument imports shutil, which brings the zlib, bz2 and lzma modules (2 ms)."""
    return (_terminal_columns() or 80) - 2


@functools.cache
def _terminal_columns() -> int:
    """COLUMNS when set, else the width of the terminal stdout is, else 0."""
    try:
        columns = int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        columns = 0
    if columns <= 0:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns  # type: ignore[union-attr]
        except (AttributeError, ValueError, OSError):
            columns = 0
    return columns


def _report_width(output: Path | None) -> int | None:
    """What the text report wraps to: the terminal's width (or COLUMNS); None (the report's
    own 100 columns) for a file or a pipe."""
    return None if output is not None else _terminal_columns() or None


class _Parser(argparse.ArgumentParser):
    """Usage errors end in one line and exit 2, as every other input error does."""

    def error(self, message: str) -> NoReturn:
        _print_error_lines([f"featcheck: error: {message} (see `{self.prog} --help`)"])
        raise _Exit(EXIT_ERROR)


def _parser(prog: str, description: str, epilog: str | None = None) -> _Parser:
    return _Parser(
        prog=prog,
        description=description,
        epilog=epilog,
        formatter_class=_Formatter,
        allow_abbrev=False,
    )


def _add_path(parser: _Parser, what: str) -> None:
    """The optional PATH every command takes: the project, the current directory by default."""
    parser.add_argument(
        "path", nargs="?", type=Path, default=Path("."), help=f"{what} (default: .)."
    )


def _add_project(parser: _Parser) -> None:
    """PATH or `--manifest-path`, for the commands that audit or build a project: without
    either, the Cargo.toml cargo would use here (the nearest one at or above the current
    directory)."""
    parser.add_argument(
        "path",
        nargs="?",
        type=Path,
        default=None,
        help="A directory with a Cargo.toml, or the Cargo.toml itself (default: the nearest "
        "Cargo.toml at or above the current directory, as cargo finds it).",
    )
    parser.add_argument(
        "--manifest-path",
        type=Path,
        metavar="PATH",
        help="The project's Cargo.toml, as cargo's --manifest-path takes it.",
    )


def _project_path(arguments: argparse.Namespace) -> Path:
    from featcheck.audit import project_manifest

    return project_manifest(arguments.path, arguments.manifest_path)


def _check_parser(prog: str) -> _Parser:
    parser = _parser(
        prog,
        "Audit a project (or saved cargo tree text) and report what costs performance.\n\n"
        "Resolves features per workspace member and per target exactly as `cargo build -p "
        "MEMBER`\ndoes (`cargo tree -e normal -p MEMBER --target T`), then applies the rules.",
        _EXAMPLES,
    )
    add = parser.add_argument
    _add_project(parser)
    add("--version", action="store_true", help="Print the version.")
    add(
        "-p",
        "--package",
        action="append",
        metavar="MEMBER",
        help="Audit only this workspace member (repeatable).",
    )
    add(
        "--target",
        action="append",
        metavar="TRIPLE",
        help="Audit for this target triple (repeatable; default: host).",
    )
    add(
        "--tree",
        metavar="FILE",
        help="Audit text saved from `cargo tree -f '{p} [{f}]'` instead (- for stdin).",
    )
    add(
        "--format",
        dest="output_format",
        choices=OUTPUT_FORMATS,
        help="Output format (default: github when GITHUB_ACTIONS=true, else text).",
    )
    add(
        "--fail-on",
        choices=FAIL_ON_LEVELS,
        help="Lowest severity that makes the exit code 1 (default: the configuration's "
        "fail-on, else warning).",
    )
    add("--offline", action="store_true", help="Pass --offline to cargo.")
    add(
        "--locked",
        action="store_true",
        help="Pass --locked to cargo (fail if Cargo.lock is stale).",
    )
    add(
        "--timeout",
        type=_seconds,
        default=300.0,
        metavar="SECONDS",
        help="Seconds to wait for each cargo, rustc or rustup call, then end it and all it "
        "started; featcheck's own work after cargo's answer (planning and resolving the build "
        "configurations, the rules, the fixes) gets the same budget (default: 300).",
    )
    add(
        "--color",
        choices=COLOUR_CHOICES,
        default="auto",
        help="Colour the text report: auto (on a terminal, unless NO_COLOR; FORCE_COLOR forces "
        "it), always or never.",
    )
    add(
        "-q",
        "--quiet",
        action="store_true",
        help="Text format: print only findings (nothing when clean), no notes or summary.",
    )
    add(
        "-v",
        "--verbose",
        action="store_true",
        help="Text format: show each finding's chain, notes, full why and other fixes; "
        "print each cargo and rustc command to stderr.",
    )
    add(
        "--trust-checkout",
        action="store_true",
        help="Let cargo obey the project's rust-toolchain.toml and .cargo/config.toml, which "
        "can run the project's own programs (default: it runs none).",
    )
    add(
        "--select",
        action="append",
        metavar="CODES",
        help="Also run these rules (codes or names, comma-separated), e.g. the hints.",
    )
    add("--ignore", action="append", metavar="CODES", help="Do not run these rules.")
    add(
        "--fix",
        action="store_true",
        help="Apply the safe fixes, all or nothing: cargo resolves and featcheck audits the "
        "fixed copy first; then the manifests and Cargo.lock are written, and the diff shown.",
    )
    add(
        "--diff",
        action="store_true",
        help="Print the diff --fix would write (Cargo.lock too), and change nothing.",
    )
    add(
        "--resolver",
        choices=RESOLVERS,
        default="featcheck",
        help="featcheck: resolve features from one `cargo metadata` call (fast, proven equal "
        "to cargo); cargo: ask `cargo tree -e normal` per member and target.",
    )
    add(
        "-o",
        "--output",
        type=Path,
        metavar="FILE",
        help="Write the report to FILE instead of stdout (a regular file or a new name; "
        "an existing symlink or special file there is refused).",
    )
    add(
        "--sarif",
        type=Path,
        metavar="FILE",
        help="Also write the report as SARIF to FILE, from the same audit (as -o writes it), "
        "whatever --format prints.",
    )
    add(
        "--root",
        type=Path,
        metavar="DIR",
        help="Print file paths relative to DIR (default: the repository root, the nearest "
        "directory above PATH with a .git, else PATH).",
    )
    add(
        "--no-exec",
        action="store_true",
        help="Start no process (no cargo, rustc, rustup): read the manifests, Cargo.lock and "
        "the local cargo registry or vendor/; fixes are not confirmed.",
    )
    add(
        "-F",
        "--features",
        action="append",
        metavar="FEATURES",
        help="Audit the build with these features, as cargo applies them to each member "
        "(space or comma separated, `member/feature` and `dependency/feature` too; repeatable).",
    )
    add("--all-features", action="store_true", help="Audit the build with every feature on.")
    add(
        "--no-default-features",
        action="store_true",
        help="Audit the build without default features.",
    )
    add(
        "--each-feature",
        action="store_true",
        help="Also audit each feature of each member on its own (with --no-default-features, "
        "as cargo-hack does), and no feature at all, in one run.",
    )
    return parser


def _seconds(text: str) -> float:
    """A positive number of seconds (argparse reports the ValueError as a usage error)."""
    value = float(text)
    if not value > 0:
        raise ValueError(text)
    return value


_seconds.__name__ = "number of seconds"  # how argparse names the type in its message


def check(arguments: argparse.Namespace) -> int:
    """`featcheck [check] [PATH] ...`: the audit."""
    if arguments.version:
        print(f"featcheck {__version__}")
        return EXIT_CLEAN
    from featcheck.audit import AuditOptions, audit_project

    chosen_format: str = arguments.output_format or _default_format()
    github = chosen_format == "github" or _in_actions()
    terminal = _Terminal(spinner=not arguments.quiet, github=github)
    try:
        configurations = _configurations(arguments)
        if arguments.root is not None and not arguments.root.is_dir():
            raise FeatcheckError("--root: not a directory", path=arguments.root)
    except FeatcheckError as error:
        _fail(error, github=github)
    options = AuditOptions(
        packages=tuple(arguments.package or ()),
        targets=tuple(arguments.target or ()),
        offline=arguments.offline,
        locked=arguments.locked,
        timeout=arguments.timeout,
        select=_codes(arguments.select),
        ignore=_codes(arguments.ignore),
        on_command=terminal.show_command if arguments.verbose else None,
        on_progress=terminal.progress if terminal.spinner else None,
        trust_checkout=arguments.trust_checkout,
        resolver=arguments.resolver,
        no_exec=arguments.no_exec,
        configurations=configurations,
        each_feature=arguments.each_feature,
        root=arguments.root,
    )
    try:
        if arguments.tree is not None:
            if arguments.fix or arguments.diff:
                raise FeatcheckError("--fix and --diff need the project, not saved tree text")
            if configurations or arguments.each_feature:
                raise FeatcheckError(
                    "feature flags need the project: saved tree text is one build already"
                )
            from featcheck.tree_mode import audit_tree_text

            text = _read_tree_input(arguments.tree)
            source = "<stdin>" if arguments.tree == "-" else arguments.tree
            result = audit_tree_text(text, source, options)
        else:
            path = _project_path(arguments)
            reading = "Reading the manifests" if arguments.no_exec else "Resolving features"
            renderer = functools.partial(_renderer_module, chosen_format)
            with terminal.working(reading):
                result = audit_project(path, options, meanwhile=renderer)
            if arguments.diff or arguments.fix:
                from featcheck.fixes.commit import prepare

                again = options._replace(update_lockfile=True)
                with terminal.working("Resolving the fixes"):
                    prepared = prepare(
                        result,
                        path,
                        lambda copy, root: audit_project(copy, again._replace(root=root)),
                    )
                if arguments.diff:
                    return _show_diff(prepared)
                result = _apply_fixes(prepared, result)
    except FeatcheckError as error:
        _fail(error, github=github)
    if arguments.verbose:
        for skip in result.skipped:  # said once, so that a skipped target is never just "clean"
            _print_checkout_text(f"featcheck: {skip.describe()}", sys.stderr)
    try:
        _render(
            result,
            chosen_format,
            quiet=arguments.quiet,
            verbose=arguments.verbose,
            output=arguments.output,
            colour=arguments.color,
        )
        if arguments.sarif is not None:
            _write_sarif(result, arguments.sarif)
    except FeatcheckError as error:
        _fail(error, github=github)
    if result.configuration_errors:
        lines = [f"featcheck: error: {line}" for line in result.configuration_errors]
        _print_error_lines(lines, github=github)
    return _exit_code(result, arguments.fail_on, github=github)


def _codes(values: list[str] | None) -> tuple[str, ...]:
    """`--select FC001,FC003 --select FC006` -> ("FC001", "FC003", "FC006")."""
    return tuple(
        code.strip() for value in values or () for code in value.split(",") if code.strip()
    )


def _configurations(arguments: argparse.Namespace) -> tuple[FeatureSelection, ...]:
    """The feature flags as one configuration; none when no flag is given."""
    from featcheck.featureset import FeatureSelection

    features, all_features = arguments.features, arguments.all_features
    no_default = arguments.no_default_features
    if arguments.each_feature and (all_features or no_default):
        flag = "--all-features" if all_features else "--no-default-features"
        raise FeatcheckError(f"{flag} cannot be used with --each-feature")
    if not (features or all_features or no_default):
        return ()
    try:
        selection = FeatureSelection.of(
            features or (), no_default=no_default, all_features=all_features
        )
    except ValueError as error:
        raise FeatcheckError(f"--features: {error}") from None
    return (selection,)


def _exit_code(result: AuditResult, fail_on: str | None, *, github: bool = False) -> int:
    from featcheck.report import Severity

    if result.configuration_errors:
        return EXIT_ERROR  # reported with the rest; a configuration could not be audited
    chosen = fail_on or result.fail_on or "warning"
    if chosen != "never":
        level = Severity.parse(chosen)
        if any(f.severity >= level for f in result.findings):
            return EXIT_FINDINGS
    if result.incomplete:
        # Not clean: a --no-exec audit could not see packages the verdict depends on.
        from featcheck.noexec.gaps import summary_line

        _print_error_lines([f"featcheck: {summary_line(result.incomplete)}"], github=github)
        return EXIT_ERROR
    if result.no_verdict:
        # Not clean either: nothing was audited, or the saved tree cannot speak for a member.
        _print_error_lines(
            [f"featcheck: error: no verdict: {'; '.join(result.no_verdict)}"], github=github
        )
        return EXIT_ERROR
    return EXIT_CLEAN


def _show_diff(prepared: Prepared) -> int:
    """`--diff`: what `--fix` would write, on stdout; nothing written; exit 1 when there is
    something to fix."""
    from featcheck.fixes.apply import render_diff

    _print_diff(render_diff(prepared.changes), sys.stdout)
    _print_unfixable(prepared)
    print(f"featcheck: {len(prepared.changes)} file(s) would change", file=sys.stderr)
    return EXIT_FINDINGS if prepared.changes else EXIT_CLEAN


def _print_unfixable(prepared: Prepared) -> None:
    from featcheck.render.common import printable

    for line in prepared.unfixable:
        print(f"featcheck: {printable(line)}", file=sys.stderr)


def _print_diff(diff: str, stream: TextIO) -> None:
    """A diff quotes manifest lines: control characters (not tabs) escaped, inert in any log."""
    from featcheck.render.safe_text import safe_line

    # A CRLF line ending is the manifest's own style, not a hidden CR: it is shown as a line end.
    lines = [safe_line(line.removesuffix("\r"), tabs=True) for line in diff.split("\n")]
    if lines and not lines[-1]:
        lines.pop()
    if _in_actions():
        from featcheck.render.workflow import stop_commands

        stream.write(stop_commands(lines))
    else:
        stream.write("".join(f"{line}\n" for line in lines))


def _apply_fixes(prepared: Prepared, result: AuditResult) -> AuditResult:
    """`--fix`: write what cargo resolved on the copy, show what changed (on stderr), and
    return the audit of the fixed checkout."""
    from featcheck.fixes.apply import render_diff, write_changes

    write_changes(prepared.changes)
    _print_diff(render_diff(prepared.changes), sys.stderr)
    _print_unfixable(prepared)
    print(f"featcheck: fixed {len(prepared.changes)} file(s)", file=sys.stderr)
    return prepared.result if prepared.result is not None else result


def list_rules(arguments: argparse.Namespace) -> int:
    """`featcheck rules [PATH]`: every rule (with the project's own), code, name, default
    severity and what it checks."""
    from featcheck.config import project_catalogue
    from featcheck.rules.docs import documented_rules, rule_table

    try:
        catalogue = project_catalogue(arguments.path)
    except FeatcheckError as error:
        _fail(error)
    rules = documented_rules(catalogue.rules)
    _print_checkout_text("\n".join(rule_table(rules, _report_width(None) or 100)))
    return EXIT_CLEAN


def show_rule(arguments: argparse.Namespace) -> int:
    """`featcheck rule CODE`: one rule's documentation."""
    from featcheck.config import project_catalogue
    from featcheck.rules.docs import find_documented, rule_markdown

    try:
        rule = find_documented(arguments.code, project_catalogue(arguments.path).rules)
    except FeatcheckError as error:
        _fail(error)
    if rule is None:
        _fail(FeatcheckError(f"unknown rule {arguments.code!r} (see `featcheck rules`)"))
    text = rule_markdown(rule)
    if not sys.stdout.isatty():
        _print_checkout_text(text)  # Markdown as written: for a pager, a file or the docs
        return EXIT_CLEAN
    # On a terminal, rendered (loaded only here: rich's Markdown brings a parser and pygments).
    # A project's own rule text is the checkout's: made printable and inert first.
    from rich.console import Console
    from rich.markdown import Markdown

    from featcheck.render.safe_text import safe_line

    shown = "\n".join(safe_line(line) for line in text.splitlines())
    Console(highlight=False).print(Markdown(shown, hyperlinks=False))
    return EXIT_CLEAN


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
        from featcheck.render.safe_text import safe_line

        line = f"featcheck: running: {safe_line(shlex.join(command))}"
        if self.github:
            from featcheck.render.workflow import stop_commands

            with self._lock:
                sys.stderr.write(stop_commands([line]))
                sys.stderr.flush()
            return
        self.console.print(line, markup=False, style="dim")

    def working(self, what: str) -> AbstractContextManager[object]:
        """A spinner for the duration of the block, or nothing when stderr is not a terminal."""
        if not self.spinner:
            return nullcontext()
        self._what = what
        self._status = self.console.status(f"{what}...", spinner="dots")
        return self._status

    def progress(self, text: str) -> None:
        """What cargo is doing, beside the spinner's text (called from a reader thread)."""
        status = getattr(self, "_status", None)
        if status is not None:
            status.update(f"{self._what}: {text}")


def _in_actions() -> bool:
    """Inside GitHub Actions, whose runner reads workflow commands from everything printed."""
    return os.environ.get("GITHUB_ACTIONS") == "true"


def _default_format() -> str:
    """github inside GitHub Actions (GITHUB_ACTIONS=true), text everywhere else."""
    return "github" if _in_actions() else "text"


def _renderer_module(output_format: str) -> object:
    """Load the renderer `_render` will use (the audit calls this while cargo works)."""
    import importlib

    name = {"json": "json_report", "sarif": "sarif", "github": "github"}.get(output_format)
    return importlib.import_module(f"featcheck.render.{name or 'text_report'}")


def _colour(output: Path | None, choice: str = "auto") -> bool | None:
    """True when the report goes to a terminal: it is rendered into a buffer first, where rich
    would see none. None leaves it to rich (FORCE_COLOR). A file (-o) and NO_COLOR get plain
    text, without even bold. `--color always` or `never` decides over all of that."""
    if choice != "auto":
        return choice == "always"
    if output is not None or os.environ.get("NO_COLOR"):
        return False
    try:
        return True if sys.stdout.isatty() else None
    except ValueError:  # a closed stdout
        return None


def _render(
    result: AuditResult,
    output_format: str,
    *,
    quiet: bool,
    verbose: bool,
    output: Path | None = None,
    colour: str = "auto",
) -> None:
    """Render to stdout, or with `output` to that file (see render/output.py)."""
    stream = io.StringIO()
    if output_format == "json":
        from featcheck.render.json_report import render_json

        stream.write(render_json(result))
    elif output_format == "sarif":
        from featcheck.render.sarif import render_sarif

        stream.write(render_sarif(result))
    elif output_format == "github":
        from featcheck.render.github import write_github

        write_github(result, stream)
    elif quiet:
        from featcheck.render.text_report import render_findings

        render_findings(
            result,
            stream,
            verbose=verbose,
            colour=_colour(output, colour),
            width=_report_width(output),
        )
    else:
        from featcheck.render.text_report import render_text

        render_text(
            result,
            stream,
            verbose=verbose,
            colour=_colour(output, colour),
            width=_report_width(output),
        )
    text = stream.getvalue()
    if output is not None:
        from featcheck.render.output import write_report

        write_report(output, text)
        return
    if output_format == "text" and _in_actions():
        # The text report quotes manifest lines: in an Actions log it is kept inert as a whole.
        from featcheck.render.workflow import stop_commands

        text = stop_commands(text.splitlines())
    sys.stdout.write(text)


def _write_sarif(result: AuditResult, path: Path) -> None:
    """`--sarif FILE`: the same result as SARIF, written as `-o` writes a report."""
    from featcheck.render.output import write_report
    from featcheck.render.sarif import render_sarif

    write_report(path, render_sarif(result))


def cargo_main() -> None:
    """Entry point of `cargo featcheck`: cargo runs `cargo-featcheck featcheck ARGS...`."""
    args = sys.argv[1:]
    if args[:1] == ["featcheck"]:
        args = args[1:]
    _short_lived_process()
    _exit_now(_run_to_a_reader(args, prog="cargo featcheck"))


_PROBE_HELP = """Measure whether the member's matmul runs on one core: build and time a probe.

The probe is the only part of featcheck that compiles and runs code. It builds registry
crates at the versions your Cargo.lock pins (burn, burn-flex and gemm with exactly the
features your member resolves) plus featcheck's own small probe crate, in your cache
directory ($XDG_CACHE_HOME or ~/.cache, featcheck/probe). Compiling runs those crates'
build scripts and proc-macros; before it does, the probe lists them and asks (on a
terminal) or needs --yes (anywhere else). It never builds or runs your crate, its build
script or its path dependencies. A probe built before compiles nothing and asks nothing.

It times an N x N f32 matmul and one 784-512-10 MLP train step (batch 256) on burn's CPU
backend (warm-up, then 10 timed runs; min and median) with RAYON_NUM_THREADS=1 and with
all cores, recording which threads of the probe did the work. The first build of a
configuration takes minutes; later probes of it start timing within seconds.

Verdict, from the CPU time of each thread during the all-core matmuls (valid on a busy
machine): single-threaded (exit 1) or multi-threaded (exit 0); timings are shown as the
second piece of evidence, marked when measured under load. Inconclusive (exit 0) only
when it cannot be told: one core, n below 192, or threads not observable (not Linux) with
timings that do not settle it. Exit 2 on errors.
"""


def _probe_parser(prog: str) -> _Parser:
    parser = _parser(prog, _PROBE_HELP)
    add = parser.add_argument
    _add_project(parser)
    add("-p", "--package", metavar="MEMBER", help="The workspace member to probe.")
    add(
        "--n",
        type=int,
        default=1024,
        metavar="N",
        help="Matrix size (below 192 burn-flex never parallelises; default: 1024).",
    )
    add(
        "--compare-fix",
        action="store_true",
        help="Also build and time the member with featcheck's confirmed fix applied (on a "
        "temporary copy), and PyTorch when it is importable.",
    )
    add(
        "--format",
        dest="output_format",
        choices=("text", "json"),
        default="text",
        help="Output format (default: text).",
    )
    add(
        "--offline",
        action="store_true",
        help="Keep cargo off the network (needs a filled registry cache).",
    )
    add(
        "--mlp",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="Also time one training step of a 784-512-10 MLP (default: on).",
    )
    add(
        "-y",
        "--yes",
        action="store_true",
        help="Build without asking (required where no terminal can ask, such as CI).",
    )
    add(
        "--timeout",
        type=_seconds,
        default=300.0,
        metavar="SECONDS",
        help="Seconds for each cargo resolution and probe run (default: 300).",
    )
    add("-v", "--verbose", action="store_true", help="Print each cargo command to stderr.")
    return parser


def probe(arguments: argparse.Namespace) -> int:
    """`featcheck probe`: build and time the member's matmul."""
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
        print("Build and run the probe? [y/N]: ", end="", file=sys.stderr, flush=True)
        return sys.stdin.readline().strip().lower() in {"y", "yes"}

    try:
        path = _project_path(arguments)
    except FeatcheckError as error:
        _fail(error)
    options = ProbeOptions(
        path=path,
        package=arguments.package,
        n=arguments.n,
        compare_fix=arguments.compare_fix,
        offline=arguments.offline,
        mlp=arguments.mlp,
        timeout=arguments.timeout,
        on_command=show_command if arguments.verbose else None,
        confirm=None if arguments.yes else confirm,
    )
    try:
        report = run_probe(options, say)
    except FeatcheckError as error:
        _fail(error)
    if arguments.output_format == "json":
        from featcheck.probe.report import render_json

        sys.stdout.write(render_json(report))
    else:
        from featcheck.probe.report import render_text

        render_text(report)
    single = report.current.decision.verdict is Verdict.SINGLE
    return EXIT_FINDINGS if single else EXIT_CLEAN


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
    or inside GitHub Actions it becomes one escaped `::error` annotation (render/github.py).
    """
    from featcheck.render.common import printable_lines

    first, *rest = printable_lines(str(error)) if str(error) else ["unknown error"]
    _print_error_lines(
        [f"featcheck: error: {first}", *(f"  {line}" for line in rest)], github=github
    )
    raise _Exit(EXIT_ERROR)


def _print_error_lines(lines: list[str], *, github: bool = False) -> None:
    """Lines that may quote the checkout, on stderr: printable, and in GitHub Actions one
    `::error` annotation whose message holds them all, escaped (render/github.py)."""
    from featcheck.render.safe_text import safe_line

    shown = [safe_line(line) for line in lines]
    if github or _in_actions():
        from featcheck.render.workflow import error_annotation

        sys.stderr.write(error_annotation(shown))
    else:
        sys.stderr.write("".join(f"{line}\n" for line in shown))
    sys.stderr.flush()


def _print_checkout_text(text: str, stream: TextIO | None = None) -> None:
    """Text that may quote the checkout (a project rule's documentation), each line printable
    and inert (render/safe_text.py)."""
    from featcheck.render.safe_text import safe_line

    lines = text.removesuffix("\n").split("\n")
    (stream or sys.stdout).write("".join(f"{safe_line(line)}\n" for line in lines))


def run(args: Sequence[str], prog: str = "featcheck") -> int:
    """Run one command line (without the program name) and return its exit code."""
    args = list(args)
    command = args[0] if args and args[0] in COMMANDS else "check"
    if args and args[0] == command:
        args = args[1:]
    try:
        if command == "rules":
            parser = _parser(f"{prog} rules", "List every rule.")
            _add_path(parser, "The project whose own rules ([[rule]] entries) to list too")
            return list_rules(parser.parse_args(args))
        if command == "rule":
            parser = _parser(f"{prog} rule", "Print one rule's documentation.")
            parser.add_argument("code", help="A rule code or name, e.g. FC001.")
            _add_path(parser, "The project whose own rules to look in too")
            return show_rule(parser.parse_args(args))
        if command == "probe":
            return probe(_probe_parser(f"{prog} probe").parse_args(args))
        return check(_check_parser(prog).parse_args(args))
    except _Exit as done:
        return done.code


def main() -> None:
    """Console-script entry point."""
    _short_lived_process()
    _exit_now(_run_to_a_reader(sys.argv[1:]))


def _run_to_a_reader(args: list[str], prog: str = "featcheck") -> int:
    """`run`, whose output may go to a reader that has gone away (`featcheck | head -0`): then
    there is nobody to tell, and the exit code says the report was not delivered."""
    try:
        return run(args, prog)
    except BrokenPipeError:
        return EXIT_ERROR


def _exit_now(code: int) -> NoReturn:
    """End the process once the output is out, without tearing the interpreter down: freeing
    every object of an audit one by one took 20 ms of a single crate's half second. Nothing
    is left to run at exit (temporary directories and the lockfile are restored by then)."""
    for stream in (sys.stdout, sys.stderr):
        with suppress(BrokenPipeError, ValueError):  # a reader that went away, a closed stream
            stream.flush()
    os._exit(code)


def _short_lived_process() -> None:
    """No cyclic garbage collection in featcheck's own process: an audit builds a few hundred
    thousand objects that live until it ends (the metadata document, the model, the graphs),
    and the collector walked them again and again (10% of a 500-member audit, measured in
    benchmarks/bench_cli.py; the peak RSS did not change). Here, not in `run`, which tests call
    in a long-lived process; for the same reason the audit keeps what it would free on
    returning (`audit.KEPT_UNTIL_EXIT`)."""
    import gc

    from featcheck import audit

    gc.disable()
    audit.KEPT_UNTIL_EXIT = []
