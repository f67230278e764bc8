"""A budget for featcheck's own work, as `--timeout` bounds each process it starts.

Planning the build configurations, resolving them, running the rules over each build and
resolving the builds a fix would give are all featcheck's own work over cargo's one answer; a
checkout decides how much of it there is (features, members, `each-feature`). The same
`--timeout` seconds bound all of it, counted from when that work starts: past them the audit
stops with one line (exit 2) instead of running on.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from featcheck.errors import FeatcheckError


class Deadline:
    """The moment featcheck's own work must be done by."""

    def __init__(self, seconds: float, clock: Callable[[], float] = time.monotonic) -> None:
        self.seconds = seconds
        self._clock = clock
        self._end = clock() + seconds

    def check(self, doing: str) -> None:
        """Raise a FeatcheckError when the budget is spent; `doing` names the step."""
        if self._clock() > self._end:
            raise FeatcheckError(
                f"{doing} took longer than --timeout ({self.seconds:g} s): audit fewer "
                "configurations (each-feature, configurations) or members (-p), or raise "
                "--timeout"
            )


NO_DEADLINE = Deadline(float("inf"))
"""For callers outside an audit (tests, the probe): never spent."""
