"""Living with builds: what cargo is doing, shown on stderr while the probe compiles.

cargo's status lines (`   Compiling burn-core v0.22.1`) are counted against the number of
packages in the probe's dependency graph. On a terminal one line is rewritten in place; in a
log (CI, a pipe) a line is printed every few crates or every half minute, never a flood.
"""

from __future__ import annotations

import re
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TextIO

from featcheck.wording import plural

_STATUS = re.compile(
    r"^\s*(?P<verb>Compiling|Downloaded|Downloading|Blocking|Finished|Updating|Locking|Adding)"
    r"\s+(?P<rest>.*)$"
)
_PACKAGE = re.compile(r"^(?P<name>[A-Za-z0-9_][A-Za-z0-9_-]*) v(?P<version>\S+)")


@dataclass(frozen=True)
class CargoEvent:
    """One status line of cargo: what it did, and to which package (if it names one)."""

    verb: str
    package: str | None
    """`name vVERSION`, when the line names a package."""
    text: str


def parse_status(line: str) -> CargoEvent | None:
    """Read a cargo status line (`   Compiling gemm v0.19.0`); None for anything else."""
    match = _STATUS.match(line.rstrip())
    if match is None:
        return None
    rest = match["rest"]
    package = _PACKAGE.match(rest)
    return CargoEvent(
        match["verb"],
        f"{package['name']} v{package['version']}" if package else None,
        line.strip(),
    )


class BuildProgress:
    """Shows a build's progress on a stream (stderr): live on a terminal, sparse in logs.

    While another cargo holds a lock the build needs (another probe building in the same
    cache), cargo says `Blocking waiting for file lock on ...`, once per lock and attempt: it
    is shown once, and the time until cargo goes on is kept apart (`waited`), so that a build's
    time is its own."""

    LOG_EVERY_CRATES = 25
    LOG_EVERY_SECONDS = 30.0

    def __init__(
        self,
        total: int,
        stream: TextIO | None = None,
        *,
        live: bool | None = None,
        clock: Callable[[], float] = time.monotonic,
    ):
        self.total = max(total, 1)
        self.stream = stream if stream is not None else sys.stderr
        self.live = self.stream.isatty() if live is None else live
        self.clock = clock
        self.compiled = 0
        self.started = clock()
        self.waited = 0.0
        """Seconds cargo spent waiting for another build's lock."""
        self._waiting_since: float | None = None
        self._said_waiting = False
        self._last_log = self.started
        self._logged_at = 0
        self._width = 0

    def line(self, raw: str) -> None:
        """Feed one line of cargo's stderr."""
        event = parse_status(raw)
        if event is not None and event.verb == "Blocking":
            self._blocked(event)
            return
        if self._waiting_since is not None and raw.strip():  # cargo has the lock: it goes on
            self.waited += self.clock() - self._waiting_since
            self._waiting_since = None
        if event is None:
            return
        if event.verb == "Compiling":
            self.compiled += 1
            self._show(event.package or "")
        elif event.verb in ("Downloading", "Updating"):
            self._say(event.text)

    def _blocked(self, event: CargoEvent) -> None:
        if self._waiting_since is None:
            self._waiting_since = self.clock()
        if not self._said_waiting:
            self._said_waiting = True
            self._say(
                f"waiting for another build in the probe's cache (cargo: {event.text}); "
                "the wait is not counted as build time"
            )

    def _counter(self) -> str:
        return f"{min(self.compiled, self.total)}/{plural(self.total, 'crate')}"

    def _show(self, package: str) -> None:
        if self.live:
            text = f"featcheck: building the probe: {self._counter()} ({package})"
            padding = " " * max(0, self._width - len(text))
            self._width = len(text)
            self.stream.write("\r" + text + padding)
            self.stream.flush()
            return
        now = self.clock()
        if (
            self.compiled - self._logged_at >= self.LOG_EVERY_CRATES
            or now - self._last_log >= self.LOG_EVERY_SECONDS
        ):
            self._logged_at = self.compiled
            self._last_log = now
            self._say(
                f"building the probe: {self._counter()} compiled "
                f"({now - self.started - self.waited:.0f} s, now {package})"
            )

    def _say(self, text: str) -> None:
        self._clear()
        self.stream.write(f"featcheck: {text}\n")
        self.stream.flush()

    def _clear(self) -> None:
        if self.live and self._width:
            self.stream.write("\r" + " " * self._width + "\r")
            self._width = 0

    def done(self) -> None:
        """Replace the live line by a summary: the wait for another build, then the build."""
        elapsed = self.clock() - self.started - self.waited
        fresh = max(0, self.total - self.compiled)
        if self.waited >= 0.5:
            self._say(f"waited {self.waited:.0f} s for another build")
        self._say(
            f"built the probe in {elapsed:.0f} s ({plural(self.compiled, 'crate')} compiled"
            + (f", {fresh} up to date" if fresh else "")
            + ")"
        )

    def abandon(self) -> None:
        """Clear the live line (before an error message)."""
        self._clear()
        self.stream.flush()
