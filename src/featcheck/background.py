"""Work on a second thread while the first goes on: the few places an audit waits on two
processes at once (cargo and rustc, two rustup questions).

A plain thread rather than concurrent.futures: that package loads logging, which every run
would pay for before cargo even starts.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Generic, TypeVar

T = TypeVar("T")


class Background(Generic[T]):
    """`work()` running on its own thread from the moment this is made."""

    def __init__(self, work: Callable[[], T]) -> None:
        self._work = work
        self._value: T | None = None
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        try:
            self._value = self._work()
        except BaseException as error:  # handed to whoever asks for the result
            self._error = error

    def join(self) -> None:
        """Wait for `work()` to end, whatever it did."""
        self._thread.join()

    def result(self) -> T:
        """What `work()` returned, once it has; what it raised is raised here."""
        self._thread.join()
        if self._error is not None:
            raise self._error
        return self._value  # type: ignore[return-value]  # set by _run before the join returns
