"""No entry point escapes the hostile matrix: every option of every parser featcheck has, every
hook of .pre-commit-hooks.yaml and every step and input of action.yml is run by a row of
hostile_matrix.py, or is exempt below with the reason it reads and writes nothing a checkout
controls. A new option, hook or step fails here until a row runs it on the hostile family.
"""

from __future__ import annotations

import argparse
from collections.abc import Iterator

import pytest
import yaml
from actions_support import load_action
from hostile_matrix import ACTION, ENTRIES, HOOK, Entry
from support import REPO

from featcheck.cli import COMMANDS
from featcheck.cli.terminal import CommandExit

EXEMPT_OPTIONS = {
    # Prints the help and exits before anything is read.
    ("check", "--help"): "prints the help",
    ("rules", "--help"): "prints the help",
    ("rule", "--help"): "prints the help",
    ("probe", "--help"): "prints the help",
    # Prints featcheck's version and exits: reads nothing of the checkout.
    ("check", "--version"): "prints the version",
    # The user's explicit opt-out of the trust line: cargo then obeys the checkout's toolchain
    # file and configuration as plain cargo does (tests/cargo/test_hostile.py shows the
    # family's programs run then). Nothing to hold it to.
    ("check", "--trust-checkout"): "obeys the checkout by the user's choice",
    # The consent to build: the probe then compiles registry crates (their build scripts and
    # proc-macros run, by design) in the user's cache. The rows run the probe up to where it
    # asks; tests/probe/ covers the build, which takes minutes.
    ("probe", "--yes"): "consents to the build, which runs code by design",
}

EXEMPT_STEPS = {
    # actions/cache is GitHub's own service: it restores or saves the install's directory
    # under a key of the action's files, never the checkout's. The rows stand for a cache hit
    # with a cached install (run_action's `cached_install`).
    "Cache the install": "GitHub's cache service, keyed by the action's own files",
}


def _parsers() -> Iterator[tuple[str, argparse.ArgumentParser]]:
    """Each command's parser, and any argparse subcommand under it."""
    todo: list[tuple[str, argparse.ArgumentParser]] = [
        (name, make("featcheck")) for name, (make, _) in COMMANDS.items()
    ]
    while todo:
        name, parser = todo.pop()
        yield name, parser
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                todo += [(f"{name} {sub}", p) for sub, p in action.choices.items()]


def _name(action: argparse.Action) -> str:
    return max(action.option_strings, key=len) if action.option_strings else action.dest


def _filled(entry: Entry) -> list[str]:
    """The entry's arguments with its placeholders given plain values (the parser checks only
    their shape), the command word left out."""
    args = [a.replace("{", "").replace("}", "") for a in entry.args]
    return args[1:] if args and args[0] == entry.subcommand else args


def _run_by_the_matrix() -> set[tuple[str, str]]:
    """(command, option) for each option some row gives a value other than its default."""
    parsers = dict(_parsers())
    run: set[tuple[str, str]] = set()
    for entry in ENTRIES:
        if entry.kind == ACTION:
            continue  # its options are the action's: the rows of featcheck's own run them
        parser = parsers[entry.subcommand]
        try:
            parsed = parser.parse_args(_filled(entry))
        except CommandExit:
            pytest.fail(f"the row {entry.name} does not parse: {_filled(entry)}")
        for action in parser._actions:
            if getattr(parsed, action.dest, action.default) != action.default:
                run.add((entry.subcommand, _name(action)))
    return run


def test_every_option_of_every_parser_is_run_by_the_matrix() -> None:
    every = {(name, _name(a)) for name, parser in _parsers() for a in parser._actions}
    missing = sorted(every - _run_by_the_matrix() - set(EXEMPT_OPTIONS))
    assert missing == [], (
        "options no row of tests/hostile/hostile_matrix.py runs on the hostile family: "
        f"{missing}; add them to a row (or, if they read and write nothing, to EXEMPT_OPTIONS "
        "with the reason)"
    )
    stale = sorted(set(EXEMPT_OPTIONS) - every)
    assert stale == [], f"exempt options featcheck no longer has: {stale}"


def test_every_hook_is_run_by_the_matrix() -> None:
    hooks = yaml.safe_load((REPO / ".pre-commit-hooks.yaml").read_text())
    rows = {entry.name for entry in ENTRIES if entry.kind == HOOK}
    assert {f"hook-{hook['id']}" for hook in hooks} <= rows


def test_every_step_and_input_of_the_action_is_run_by_the_matrix() -> None:
    """The rows run every `run:` step in bash, as the runner does; a step of another kind
    (another action, another shell) would be skipped silently, so it must be exempt."""
    action = load_action()
    assert [e for e in ENTRIES if e.kind == ACTION], "no row runs the Action"
    not_run = [
        step["name"]
        for step in action["runs"]["steps"]
        if ("run" not in step or step.get("shell") != "bash") and step["name"] not in EXEMPT_STEPS
    ]
    assert not_run == [], f"steps of action.yml the matrix cannot run: {not_run}"
    given = {name for e in ENTRIES if e.kind == ACTION for name in e.action}
    assert sorted(set(action["inputs"]) - given) == []
