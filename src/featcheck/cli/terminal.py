"""What the command line prints besides a report: its exit codes, its error lines, the
terminal's width and colour, and while an audit runs, a spinner on a terminal and cargo's
commands with --verbose (`Progress`).

Lines that may quote the checkout are made printable and inert; inside GitHub Actions an error
becomes one escaped `::error` annotation (both render/safe_text.py), which is loaded with every
command: it imports no more than the regular expressions it needs.
"""

from __future__ import annotations

import functools
import os
import shlex
import sys
import threading
from contextlib import AbstractContextManager, nullcontext
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn, TextIO

from featcheck.cargo.last_answer import NOT_RUN
from featcheck.cli import lazy
from featcheck.errors import FeatcheckError
from featcheck.render.safe_text import (
    annotation_place,
    error_annotation,
    printable_lines,
    safe_line,
    stop_commands,
)

if TYPE_CHECKING:
    from rich.console import Console

EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2
EXIT_INTERRUPTED = 130
"""Ctrl-C: 128 + SIGINT, the status a shell gives a program the interrupt ended."""


class CommandExit(Exception):
    """Ends a command with an exit code (raised by helpers deep in a command)."""

    def __init__(self, code: int) -> None:
        super().__init__(code)
        self.code = code


def in_actions() -> bool:
    """Inside GitHub Actions, whose runner reads workflow commands from everything printed."""
    return os.environ.get("GITHUB_ACTIONS") == "true"


@functools.cache
def terminal_columns() -> int:
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


@functools.cache
def help_width() -> int:
    """The width argparse's formatter takes from `shutil.get_terminal_size` (COLUMNS, else the
    terminal, else 80; less its margin of 2), found the same way here: given no width, every
    parser argument imports shutil, which brings the zlib, bz2 and lzma modules (2 ms)."""
    return (terminal_columns() or 80) - 2


def colour(output: Path | None, choice: str = "auto") -> bool | None:
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


def fail(error: FeatcheckError, *, github: bool = False) -> NoReturn:
    """The error on stderr, and exit 2; it may quote the checkout (cargo's errors quote manifest
    lines)."""
    first, *rest = printable_lines(str(error)) if str(error) else ["unknown error"]
    place = ""
    if error.path is not None and (github or in_actions()):
        # The runner names a repository's files relative to its workspace.
        workspace = os.environ.get("GITHUB_WORKSPACE") or os.getcwd()
        place = annotation_place(error.path, workspace, error.line, error.column)
    print_error_lines(
        [f"featcheck: error: {first}", *(f"  {line}" for line in rest)], github=github, place=place
    )
    raise CommandExit(EXIT_ERROR)


def print_error_lines(lines: list[str], *, github: bool = False, place: str = "") -> None:
    """Lines that may quote the checkout, on stderr: printable, and in GitHub Actions one
    `::error` annotation whose message holds them all, escaped (on the file and line `place`
    names, where the error names one)."""
    shown = [safe_line(line) for line in lines]
    if github or in_actions():
        sys.stderr.write(error_annotation(shown, place))
    else:
        sys.stderr.write("".join(f"{line}\n" for line in shown))
    sys.stderr.flush()


def print_checkout_text(text: str, stream: TextIO | None = None) -> None:
    """Text that may quote the checkout (a project rule's documentation), each line printable
    and inert."""
    lines = text.removesuffix("\n").split("\n")
    (stream or sys.stdout).write("".join(f"{safe_line(line)}\n" for line in lines))


class Progress:
    """With `github` (an Actions log), each command line is printed inside its own stop-commands
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
        return lazy.stderr_console()

    def show_command(self, command: list[str]) -> None:
        """Print one command line (called from the audit's worker threads)."""
        if command[:1] == [NOT_RUN]:
            shown = safe_line(shlex.join(command[1:]))
            line = f"featcheck: reusing the answer of: {shown} (nothing it reads has changed)"
        else:
            line = f"featcheck: running: {safe_line(shlex.join(command))}"
        if self.github:
            with self._lock:
                sys.stderr.write(stop_commands([line]))
                sys.stderr.flush()
            return
        self.console.print(line, markup=False, style="dim")

    def working(self, what: str) -> AbstractContextManager[object]:
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
