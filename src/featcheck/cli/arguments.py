"""The parsers of the command line: argparse's, with featcheck's usage errors and layout, and
the flags of `rules`, `rule` and `probe` (check's own are in check_arguments.py).

Built on the standard library's argparse: a commit hook pays for every millisecond of start-up,
and a CLI framework that coerces each parameter through a validation library cost more than the
audit of a small crate (see benchmarks/bench_cli.py).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import NoReturn

from featcheck.cli.terminal import EXIT_ERROR, CommandExit, help_width, print_error_lines


def rule_codes(values: list[str] | None) -> tuple[str, ...]:
    """`--select FC001,FC003 --select FC006` -> ("FC001", "FC003", "FC006"); an empty code (a
    trailing comma) names nothing."""
    return tuple(
        code.strip() for value in values or () for code in value.split(",") if code.strip()
    )


class Formatter(argparse.HelpFormatter):
    """argparse's layout with a capitalised `Usage:` and room for long option names; the
    description and epilog are wrapped to the terminal paragraph by paragraph, except the
    paragraphs with indented lines (examples), which are kept as written."""

    def __init__(self, prog: str) -> None:
        super().__init__(prog, max_help_position=32, width=help_width())

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        paragraphs = []
        for paragraph in text.strip("\n").split("\n\n"):
            lines = paragraph.splitlines()
            if any(line.startswith(" ") for line in lines[1:]):
                paragraphs.append("\n".join(indent + line for line in lines))
            else:  # argparse's own filling, which imports textwrap only when help is shown
                paragraphs.append(super()._fill_text(paragraph, width, indent))
        return "\n\n".join(paragraphs)

    def _format_action_invocation(self, action: argparse.Action) -> str:
        """`-p, --package MEMBER`, as cargo and ruff print it, not `-p MEMBER, --package
        MEMBER`."""
        if not action.option_strings or action.nargs == 0:
            return super()._format_action_invocation(action)
        value = self._format_args(action, self._get_default_metavar_for_optional(action))
        return f"{', '.join(action.option_strings)} {value}"

    def add_usage(
        self, usage: str | None, actions: object, groups: object, prefix: str | None = None
    ) -> None:
        super().add_usage(usage, actions, groups, "Usage: " if prefix is None else prefix)  # type: ignore[arg-type]


class Parser(argparse.ArgumentParser):
    """Usage errors end in one line and exit 2, as every other input error does."""

    def error(self, message: str) -> NoReturn:
        print_error_lines([f"featcheck: error: {message} (see `{self.prog} --help`)"])
        raise CommandExit(EXIT_ERROR)


def new_parser(
    prog: str, description: str, epilog: str | None = None, usage: str | None = None
) -> Parser:
    """A parser whose help says `Arguments:` and `Options:`, as cargo's does."""
    parser = Parser(
        prog=prog,
        description=description,
        epilog=epilog,
        usage=usage,
        formatter_class=Formatter,
        allow_abbrev=False,
        add_help=False,
    )
    parser._positionals.title = "Arguments"
    parser._optionals.title = "Options"
    parser.add_argument("-h", "--help", action="help", help="Print this help.")
    return parser


def add_path(parser: Parser, what: str, default: Path | None = Path(".")) -> None:
    parser.add_argument("path", nargs="?", type=Path, default=default, metavar="PATH", help=what)


def add_project(parser: Parser, group: argparse._ArgumentGroup | None = None) -> None:
    add_path(
        parser,
        "A directory with a Cargo.toml, or the Cargo.toml itself (default: the nearest "
        "Cargo.toml at or above the current directory, as cargo finds it).",
        None,
    )
    (group or parser).add_argument(
        "--manifest-path",
        type=Path,
        metavar="PATH",
        help="The project's Cargo.toml, as cargo's --manifest-path takes it.",
    )


def seconds(text: str) -> float:
    """A positive number of seconds (argparse reports the ValueError as a usage error)."""
    value = float(text)
    if not value > 0:
        raise ValueError(text)
    return value


seconds.__name__ = "number of seconds"  # how argparse names the type in its message


def rules_parser(prog: str) -> Parser:
    parser = new_parser(f"{prog} rules", "List every rule.")
    add_path(parser, "The project whose own rules ([[rule]] entries) to list too (default: .).")
    return parser


def rule_parser(prog: str) -> Parser:
    parser = new_parser(f"{prog} rule", "Print one rule's documentation.")
    parser.add_argument("code", help="A rule code or name, e.g. FC001.")
    add_path(parser, "The project whose own rules to look in too (default: .).")
    return parser


_PROBE_HELP = """Measure the member's findings on this machine: build and time a probe of each.

Where the member builds burn's CPU backend (burn-flex), the probe times its matmul: does it
run on one core? Every other finding whose crate has a probe program (regex, memchr, ...;
see --rule) is timed as the member builds the crate and as featcheck's fix builds it. One
statement, one consent, one report.

The probe is the only part of featcheck that compiles and runs code. It builds registry
crates at the versions your Cargo.lock pins (burn-flex, burn-backend and gemm with exactly
the features your member resolves) plus featcheck's own small probe crate, in your cache
directory ($XDG_CACHE_HOME or ~/.cache, featcheck/probe). Compiling runs those crates'
build scripts and proc-macros; before it does, the probe lists them and asks (on a
terminal) or needs --yes (anywhere else). It never builds or runs your crate, its build
script or its path dependencies. A probe built before compiles nothing and asks nothing.

It times an N x N f32 matmul on burn's CPU backend (warm-up, then 10 timed runs; min and
median) with RAYON_NUM_THREADS=1 and with all cores, recording which threads of the probe
did the work. The first build of a configuration takes minutes (the statement says how many
crates and estimates the time here; the report says how long it took); later probes of it
start timing within seconds.

Verdict, from the CPU time of each thread during the all-core matmuls (valid on a busy
machine): single-threaded or multi-threaded; timings are shown as the second piece of
evidence, marked when measured under load. Inconclusive only when it cannot be told: one
core, n below 192, or threads not observable (not Linux) with timings that do not settle it.

Exit codes: 1 when something measurably costs here (the matmul single-threaded, a finding
1.10x slower than fixed); else inconclusive (exit 3) when the matmul's verdict is, or a
finding's two builds computed different results (no ratio); else 0 (multi-threaded, no
measurable cost). 3, not 0: an inconclusive probe measured nothing, and a CI gate must not
read it as a pass. Exit 2 on errors.
"""


def probe_parser(prog: str) -> Parser:
    parser = new_parser(f"{prog} probe", _PROBE_HELP)
    add = parser.add_argument
    add_project(parser)
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
        help="Also build and time the matmul with featcheck's confirmed fix applied (on a "
        "temporary copy), and PyTorch when it is importable.",
    )
    add(
        "--rule",
        action="append",
        metavar="CODE",
        help="Only the member's finding of this rule, not the matmul: time its crate "
        "(FC002, FC008-FC023: burn-ndarray, gemm, matrixmultiply, faer, regex, memchr, "
        "crc32fast, rustfft, flate2, blake3, aho-corasick, serde_json, mimalloc) as the member "
        "builds it and as fixed (or with the costly feature off), side by side (repeatable; `all`: "
        "every finding with a probe).",
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
        "-y",
        "--yes",
        action="store_true",
        help="Build without asking (required where no terminal can ask, such as CI).",
    )
    add(
        "--timeout",
        type=seconds,
        default=300.0,
        metavar="SECONDS",
        help="Seconds for each cargo call and probe run, and for featcheck's own work (all of "
        "a --no-exec audit) (default: 300).",
    )
    add("-v", "--verbose", action="store_true", help="Print each cargo command to stderr.")
    return parser
