"""A budget for featcheck's own work, as `--timeout` bounds each process it starts.

Planning the build configurations, resolving them, running the rules over each build and
resolving the builds a fix would give are all featcheck's own work over cargo's one answer; a
checkout decides how much of it there is (features, members, `each-feature`). In `--no-exec`
reading the checkout is featcheck's own work too: the lockfile, every manifest, the registry's.
The same `--timeout` seconds bound all of it, counted from when that work starts (cargo's
answer; the start of a `--no-exec` audit): past them the audit stops with one line (exit 2)
instead of running on.

Each loop over checkout data checks the budget as it goes (`check`). A single call can still
run long — a TOML parser over a 64 MiB lockfile — so a `--no-exec` audit, which only reads
and computes, also runs under an alarm at the deadline (`bounding`).
"""

from __future__ import annotations

import signal
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import FrameType

from featcheck.errors import FeatcheckError

TIMEOUT_HINT = (
    "audit fewer configurations (each-feature, configurations) or members (-p), or raise --timeout"
)
READING = "reading the checkout (--no-exec)"
READING_HINT = "raise --timeout for a checkout this large"


class Deadline:
    def __init__(self, seconds: float, clock: Callable[[], float] = time.monotonic) -> None:
        self.seconds = seconds
        self._clock = clock
        self._end = clock() + seconds
        self._step = ("featcheck's own work", TIMEOUT_HINT)
        """The step checked last: what an alarm names (`bounding`)."""

    def check(self, doing: str, hint: str = TIMEOUT_HINT) -> None:
        self._step = (doing, hint)
        if self._clock() > self._end:
            raise self.spent(doing, hint)

    def left(self) -> float:
        return self._end - self._clock()

    def spent(self, doing: str, hint: str = TIMEOUT_HINT) -> FeatcheckError:
        return FeatcheckError(
            f"{doing} did not finish within {self.seconds:g} s (--timeout): {hint}"
        )

    @contextmanager
    def bounding(self, doing: str, hint: str = TIMEOUT_HINT) -> Iterator[None]:
        """The block, stopped where it is once the budget is spent, even inside one long
        call: an alarm (SIGALRM) at the deadline raises the `spent` error there, naming the
        step checked last. Once the alarm has gone off, whatever leaves the block (a reader
        may have caught the error and said something else, or nothing) is that one line.
        Only for blocks that read and compute, whose half-done state nothing uses after the
        error. Where no alarm can be set (not the main thread, no SIGALRM, one already in
        use) the block runs on its own checks alone."""
        self.check(doing, hint)
        if (
            self.seconds == float("inf")
            or not hasattr(signal, "setitimer")
            or threading.current_thread() is not threading.main_thread()
            or signal.getsignal(signal.SIGALRM) not in (signal.SIG_DFL, signal.SIG_IGN, None)
            or signal.getitimer(signal.ITIMER_REAL) != (0.0, 0.0)
        ):
            yield
            return
        armed, fired = True, False

        def expire(_signal: int, _frame: FrameType | None) -> None:
            nonlocal fired
            if armed:  # not once the block is left: the alarm may still be on its way
                fired = True
                # Raised while Python runs a finalizer (a `__del__`, a weakref callback), the
                # error is printed and dropped, and the block would run to its end: the alarm
                # goes off again until the block is left.
                signal.setitimer(signal.ITIMER_REAL, _AGAIN)
                raise self.spent(*self._step)

        previous = signal.signal(signal.SIGALRM, expire)
        signal.setitimer(signal.ITIMER_REAL, max(self._end - self._clock(), 0.001))
        try:
            yield
        except Exception:
            if fired:
                raise self.spent(*self._step) from None
            raise
        finally:
            armed = False
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, previous)
        if fired:
            raise self.spent(*self._step)


_AGAIN = 0.05
"""Seconds after which a spent budget's alarm goes off again, until its block is left."""

NO_DEADLINE = Deadline(float("inf"))
"""For callers outside an audit (tests, the probe): never spent."""
