"""`featcheck --help` as cargo and ruff print theirs: every command in the usage, the options in
groups, and every option still working."""

from __future__ import annotations

import re

import pytest
from cli_in_process import run_in_process

from featcheck.cli.check_arguments import check_parser

GROUPS = {
    "Arguments": ["PATH"],
    "Options": ["-h, --help", "--version"],
    "Selection (what to audit)": [
        "--manifest-path",
        "-p, --package",
        "--target",
        "--tree",
        "-F, --features",
        "--all-features",
        "--no-default-features",
        "--each-feature",
    ],
    "Rules": ["--select", "--ignore", "--fail-on"],
    "Output": [
        "--format",
        "-o, --output",
        "--sarif",
        "--root",
        "--color",
        "-q, --quiet",
        "-v, --verbose",
    ],
    "Fixes": ["--fix", "--diff", "--fix-level"],
    "Comparison": ["--baseline", "--write-baseline", "--new-since", "--measured"],
    "Cargo and trust": [
        "--offline",
        "--locked",
        "--timeout",
        "--no-exec",
        "--trust-checkout",
    ],
}


def _sections(text: str) -> dict[str, list[str]]:
    """Each `Title:` of the help with the options (or arguments) listed under it."""
    sections: dict[str, list[str]] = {}
    current: list[str] = []
    for line in text.splitlines():
        if re.fullmatch(r"[A-Z][\w ()]*:", line):
            current = sections.setdefault(line[:-1], [])
        elif match := re.match(r"  (-[-\w]+(?:, --[-\w]+)?|[A-Z]+)(?: [A-Z]+)?(?:  |$)", line):
            current.append(match.group(1))
    return sections


@pytest.mark.parametrize("args", [["--help"], ["check", "--help"]])
def test_help_lists_the_commands_and_groups_the_options(args: list[str]) -> None:
    done = run_in_process(*args, columns=100)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[:4] == [
        "Usage: featcheck [check] [OPTIONS] [PATH]",
        "       featcheck rules [PATH]",
        "       featcheck rule CODE [PATH]",
        "       featcheck probe [OPTIONS] [PATH]",
    ]
    commands = done.stdout.split("\nCommands:\n")[1].split("\n\n")[0].splitlines()
    assert [line.split()[0] for line in commands] == ["check", "rules", "rule", "probe"]
    sections = _sections(done.stdout)
    assert {title: sections[title] for title in GROUPS} == GROUPS
    assert list(sections) == ["Commands", *GROUPS, "Examples"]


def test_every_option_the_help_groups_still_parses() -> None:
    sections = _sections(run_in_process("--help").stdout)
    listed = {
        option
        for title in GROUPS
        for entry in sections.get(title, ())
        for option in entry.split(", ")
        if option.startswith("-")
    }
    parser = check_parser("featcheck")
    accepted = {option for action in parser._actions for option in action.option_strings}
    assert accepted == listed
    values = {"--fail-on": "info", "--fix-level": "info", "--format": "json", "--color": "never"}
    values |= {"--timeout": "5"}
    for action in parser._actions:
        if not action.option_strings or action.dest == "help":
            continue
        for option in action.option_strings:
            argv = [option] if action.nargs == 0 else [option, values.get(option, "x")]
            parsed = vars(parser.parse_args(["crates/app", *argv]))
            assert parsed[action.dest] not in (None, False, action.default), option
