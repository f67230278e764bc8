"""stderr while an audit runs: a spinner on a terminal, cargo commands with --verbose."""

from __future__ import annotations

import functools
import shlex
import sys
import threading
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from typing import TYPE_CHECKING

from featcheck.render.safe_text import safe_line
from featcheck.render.workflow import stop_commands

if TYPE_CHECKING:
    from rich.console import Console


class Progress:
    """What the audit is doing, on stderr.

    With `github` (an Actions log), each command line is printed inside its own stop-commands
    block, one block at a time: the checkout's values in it must not become workflow commands.
    """

    def __init__(
        self, make_console: Callable[[], Console], *, spinner: bool, github: bool = False
    ) -> None:
        # Only a real terminal gets the animation (FORCE_COLOR must not put it in CI logs).
        self.spinner = spinner and sys.stderr.isatty()
        self.github = github
        self._make_console = make_console
        self._lock = threading.Lock()

    @functools.cached_property
    def console(self) -> Console:
        """Made on first use: a hook's non-interactive run never pays for importing rich."""
        return self._make_console()

    def show_command(self, command: list[str]) -> None:
        """Print one command line (called from the audit's worker threads)."""
        line = f"featcheck: running: {safe_line(shlex.join(command))}"
        if self.github:
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
