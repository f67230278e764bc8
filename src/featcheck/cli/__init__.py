"""The command line: builds options from flags, runs the command, and sets the exit code.

A run loads the parsers and the chosen command; what a command needs beyond that is loaded at
one boundary, cli/lazy.py, which says what each deferred module costs and buys.
"""

from __future__ import annotations

import argparse
import gc
import os
import signal
import sys
from collections.abc import Callable, Sequence
from contextlib import suppress
from types import FrameType
from typing import NoReturn

from featcheck.cli import check, lazy
from featcheck.cli.arguments import Parser, probe_parser, rule_parser, rules_parser
from featcheck.cli.check_arguments import check_parser
from featcheck.cli.terminal import (
    EXIT_CLEAN,
    EXIT_ERROR,
    EXIT_INTERRUPTED,
    CommandExit,
    fail,
    print_checkout_text,
    terminal_columns,
)
from featcheck.errors import FeatcheckError
from featcheck.render.safe_text import safe_line

__all__ = ["cargo_main", "main", "run"]


def list_rules(arguments: argparse.Namespace) -> int:
    try:
        table = lazy.rule_table(arguments.path, terminal_columns() or 100)
    except FeatcheckError as error:
        fail(error)
    print_checkout_text("\n".join(table))
    return EXIT_CLEAN


def show_rule(arguments: argparse.Namespace) -> int:
    """One rule's page: Markdown as written for a pager, a file or the docs; rendered on a
    terminal."""
    try:
        text = lazy.rule_markdown(arguments.code, arguments.path)
    except FeatcheckError as error:
        fail(error)
    if text is None:
        fail(FeatcheckError(f"unknown rule {arguments.code!r} (see `featcheck rules`)"))
    if not sys.stdout.isatty():
        print_checkout_text(text)
        return EXIT_CLEAN
    # A project's own rule text is the checkout's: made printable and inert first.
    lazy.print_markdown("\n".join(safe_line(line) for line in text.splitlines()))
    return EXIT_CLEAN


COMMANDS: dict[str, tuple[Callable[[str], Parser], Callable[..., int]]] = {
    "check": (check_parser, check.check),
    "rules": (rules_parser, list_rules),
    "rule": (rule_parser, show_rule),
    "probe": (probe_parser, lazy.probe),
}
"""Each command's parser and what runs it; `check` is the default."""


def run(args: Sequence[str], prog: str = "featcheck") -> int:
    """Run one command line (without the program name) and return its exit code."""
    args = list(args)
    command = args[0] if args and args[0] in COMMANDS else "check"
    if args and args[0] == command:
        args = args[1:]
    parser, execute = COMMANDS[command]
    try:
        return execute(parser(prog).parse_args(args))
    except CommandExit as done:
        return done.code


def main() -> None:
    _exit_now(_run_to_a_reader(sys.argv[1:]))


def cargo_main() -> None:
    """Entry point of `cargo featcheck`: cargo runs `cargo-featcheck featcheck ARGS...`."""
    args = sys.argv[1:]
    if args[:1] == ["featcheck"]:
        args = args[1:]
    _exit_now(_run_to_a_reader(args, prog="cargo featcheck"))


def _run_to_a_reader(args: list[str], prog: str = "featcheck") -> int:
    """`run` in a process of its own, whose output may go to a reader that has gone away
    (`featcheck | head -0`): then there is nobody to tell, and the exit code says the report
    was not delivered. Ctrl-C ends it with one line and exit 130, once what was under way is
    undone (see `_on_interrupt`)."""
    if signal.getsignal(signal.SIGINT) is signal.default_int_handler:  # not ignored (`&`)
        signal.signal(signal.SIGINT, _on_interrupt)
    try:
        # No cyclic garbage collection in featcheck's own process: an audit builds a few
        # hundred thousand objects that live until it ends (the metadata document, the model,
        # the graphs), and the collector walked them again and again (10% of a 500-member
        # audit, measured in benchmarks/bench_cli.py; the peak RSS did not change). Here, not
        # in `run`, which tests call in a long-lived process; for the same reason the audit
        # keeps what it would free on returning (`audit.KEPT_UNTIL_EXIT`).
        gc.disable()
        lazy.keep_until_exit()
        return run(args, prog)
    except BrokenPipeError:
        return EXIT_ERROR
    except KeyboardInterrupt:
        return _interrupted()
    except Exception:
        # Ctrl-C can land inside an import, and Python may leave that module half loaded: what
        # trips on it while the run unwinds is the interrupt's doing, not a failure to report.
        if not _interrupt_asked:
            raise
        return _interrupted()


_interrupt_asked = False
"""Set by Ctrl-C's handler (`_on_interrupt`)."""


def _interrupted() -> int:
    _end_processes()
    with suppress(BrokenPipeError, ValueError):
        print("featcheck: interrupted", file=sys.stderr)
    return EXIT_INTERRUPTED


def _on_interrupt(number: int, frame: FrameType | None) -> None:
    """Ctrl-C: the cargo and rustc processes end at once (they run in sessions of their own,
    which the terminal's interrupt does not reach), then KeyboardInterrupt unwinds the run:
    Cargo.lock is put back, temporary copies are removed, and no fix is half written
    (fileio.uninterrupted). A second Ctrl-C does not cut that short."""
    global _interrupt_asked
    _interrupt_asked = True
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    process = sys.modules.get("featcheck.cargo.process")
    if process is not None and process.hold_interrupt():
        return  # raised once the process being started is noted, and ended with the others
    _end_processes()
    raise KeyboardInterrupt


def _end_processes() -> None:
    # Loaded with the audit's front (`keep_until_exit`) when a process could have started.
    process = sys.modules.get("featcheck.cargo.process")
    if process is not None:
        process.end_every_process()


def _exit_now(code: int) -> NoReturn:
    """End the process once the output is out, without tearing the interpreter down: freeing
    every object of an audit one by one took 20 ms of a single crate's half second. Nothing
    is left to run at exit (temporary directories and the lockfile are restored by then)."""
    for stream in (sys.stdout, sys.stderr):
        with suppress(BrokenPipeError, ValueError):  # a reader that went away, a closed stream
            stream.flush()
    # os._exit runs no at-exit handler: what a --new-since audit still runs on its thread (its
    # cargo, its git: the working tree's audit failed first) is ended here.
    _end_processes()
    os._exit(code)
