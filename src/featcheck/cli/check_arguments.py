"""The flags of `featcheck [check]`, the audit, in the groups its help reads in."""

from __future__ import annotations

import argparse
from pathlib import Path

from featcheck.cli.arguments import Parser, add_project, new_parser, seconds
from featcheck.render import FORMATS, formats_help
from featcheck.severity import FailOn, Severity

Group = argparse._ArgumentGroup  # what `add_argument_group` returns (argparse names it so)

_DESCRIPTION = """\
Audit a project (or saved cargo tree text) and report what costs performance.

Resolves features per workspace member and per target exactly as `cargo build -p MEMBER`
does (`cargo tree -e normal -p MEMBER --target T`), then applies the rules.

Commands:
  check [PATH]      audit the project; the default command (`featcheck PATH`)
  rules [PATH]      list every rule, the project's own too
  rule CODE [PATH]  print one rule's documentation
  probe [PATH]      time the member's findings in a probe build (`probe --help`)
"""

_EXAMPLES = f"""\
Examples:
  featcheck                    audit the Cargo project in the current directory
  featcheck crates/app -p app --target aarch64-apple-darwin
  featcheck . --format sarif -o featcheck.sarif
  featcheck . --diff           the fixes --fix would write, as a diff
  cargo tree -e normal -f '{{p}} [{{f}}]' -i burn-flex | featcheck --tree -
  cargo featcheck              the same audit, as a cargo subcommand

Exit codes: 0 clean, 1 findings at or above --fail-on, 2 usage, input or cargo error,
130 interrupted. Formats: {formats_help()}. NO_COLOR turns colour off, FORCE_COLOR on;
--color always or never decides over both.
"""


_COMMANDS = (
    "[check] [OPTIONS] [PATH]",
    "rules [PATH]",
    "rule CODE [PATH]",
    "probe [OPTIONS] [PATH]",
)
"""The usage: one line per command, as cargo and ruff list theirs."""


def check_parser(prog: str) -> Parser:
    usage = f"\n{' ' * len('Usage: ')}".join(f"{prog} {command}" for command in _COMMANDS)
    parser = new_parser(prog, _DESCRIPTION, _EXAMPLES, usage=usage)
    selection = parser.add_argument_group("Selection (what to audit)")
    add_project(parser, selection)
    parser.add_argument("--version", action="store_true", help="Print the version.")
    _add_selection(selection)
    add = parser.add_argument_group("Rules").add_argument
    add(
        "--select",
        action="append",
        metavar="CODES",
        help="Also run these rules (codes or names, comma-separated), e.g. the hints.",
    )
    add(
        "--ignore",
        action="append",
        metavar="CODES",
        help="Do not run these rules; FC900: report no unused suppressions.",
    )
    add(
        "--fail-on",
        choices=tuple(level.value for level in FailOn),
        metavar="LEVEL",
        help="Lowest severity that makes the exit code 1: error, warning, info or never "
        "(default: the configuration's fail-on, else warning).",
    )
    _add_output(parser.add_argument_group("Output"))
    add = parser.add_argument_group("Fixes").add_argument
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
        "--fix-level",
        choices=tuple(level.label for level in sorted(Severity, reverse=True)),
        metavar="LEVEL",
        help="Lowest severity whose fixes --fix and --diff apply: error, warning or info "
        "(default: the configuration's fix-level, else the failing level, --fail-on; warning "
        "when that is never).",
    )
    _add_comparison(parser.add_argument_group("Comparison"))
    _add_cargo(parser.add_argument_group("Cargo and trust"))
    return parser


def _add_selection(group: Group) -> None:
    add = group.add_argument
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


def _add_output(group: Group) -> None:
    add = group.add_argument
    add(
        "--format",
        dest="output_format",
        choices=tuple(FORMATS),
        metavar="FORMAT",
        help=f"Output format: {', '.join(FORMATS)} (default: github when GITHUB_ACTIONS=true, "
        "else text).",
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
        "--color",
        choices=("auto", "always", "never"),
        default="auto",
        metavar="WHEN",
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


def _add_comparison(group: Group) -> None:
    add = group.add_argument
    add(
        "--baseline",
        type=Path,
        metavar="FILE",
        help="Hide the findings FILE accepts (written by --write-baseline) and say how many; "
        "name its entries that match nothing any more (default: the configuration's baseline).",
    )
    add(
        "--write-baseline",
        type=Path,
        metavar="FILE",
        help="Write every finding of this audit to FILE as a baseline (sorted, one per line, "
        "reviewable in a diff), and exit 0.",
    )
    add(
        "--new-since",
        metavar="REF",
        help="Audit the tree at git revision REF too (from the repository's objects, in a "
        "directory of featcheck's) and report only the findings it did not have.",
    )
    add(
        "--measured",
        action="store_true",
        help="Attach to each finding the probe can time its cost measured on this machine "
        "(kept by `featcheck probe --rule`), or say that the number is quoted.",
    )


def _add_cargo(group: Group) -> None:
    add = group.add_argument
    add("--offline", action="store_true", help="Pass --offline to cargo.")
    add(
        "--locked",
        action="store_true",
        help="Pass --locked to cargo (fail if Cargo.lock is stale).",
    )
    add(
        "--timeout",
        type=seconds,
        default=300.0,
        metavar="SECONDS",
        help="Seconds to wait for each cargo, rustc or rustup call, then end it and all it "
        "started; featcheck's own work after cargo's answer (planning and resolving the build "
        "configurations, the rules, the fixes) gets the same budget (default: 300).",
    )
    add(
        "--no-exec",
        action="store_true",
        help="Start no process (no cargo, rustc, rustup): read the manifests, Cargo.lock and "
        "the local cargo registry or vendor/; fixes are not confirmed, so --fix and --diff "
        "are refused.",
    )
    add(
        "--trust-checkout",
        action="store_true",
        help="Let cargo obey the project's rust-toolchain.toml and .cargo/config.toml, which "
        "can run the project's own programs (default: it runs none).",
    )
