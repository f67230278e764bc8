"""A `cargo metadata` answer on its way: what the audit does while cargo works, and the answer.

This module loads before cargo starts, so it knows the workspace model by its type only:
whoever takes the answer, after cargo has started, hands in the parser (`pipeline.py`).
Importing it here would bring `dataclasses` onto the path the user waits for before cargo
starts.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import TYPE_CHECKING

from featcheck.cargo.process import ProcessOutput, RunningProcess
from featcheck.errors import FeatcheckError

if TYPE_CHECKING:
    from featcheck.workspace.workspace import Workspace


Parse = Callable[[str], "Workspace"]
"""cargo's JSON answer as the workspace model (`workspace.parse_metadata`)."""


class PendingMetadata:
    """A `cargo metadata` answer on its way (see `CargoRunner.start_metadata`)."""

    def __init__(
        self,
        answer: Callable[[Parse], Workspace],
        cancel: Callable[[], None] | None = None,
    ) -> None:
        self._answer: Callable[[Parse], Workspace] | None = answer
        self._cancel = cancel

    def result(self, parse: Parse) -> Workspace:
        """The metadata, once cargo has answered, read by `parse`; its failure as a
        FeatcheckError."""
        assert self._answer is not None, "the metadata was taken or cancelled already"
        answer, self._answer = self._answer, None
        return answer(parse)

    def cancel(self) -> None:
        """Stop cargo: the audit ended before it needed the answer."""
        if self._answer is not None and self._cancel is not None:
            self._cancel()
        self._answer = None


def pending_cargo_metadata(
    running: RunningProcess,
    finish: Callable[[RunningProcess], ProcessOutput],
    failure: Callable[[ProcessOutput], FeatcheckError],
) -> PendingMetadata:
    """The answer of the started `cargo metadata`: `finish` waits for its output, `failure`
    is the error of a failed one."""

    def answer(parse_metadata: Parse) -> Workspace:
        # cargo prints its one line of JSON, then takes ~10 ms to free what it built and
        # exit: the line is parsed meanwhile, and used only if cargo then succeeds having
        # printed nothing more.
        line = running.stdout_once_a_line_ends()
        early: Workspace | None = None
        if line is not None:
            with contextlib.suppress(FeatcheckError):
                early = parse_metadata(line)
        output = finish(running)
        if output.returncode != 0:
            raise failure(output)
        if early is not None and line is output.stdout:  # nothing printed after the line
            return early
        return parse_metadata(output.stdout)

    return PendingMetadata(answer, running.cancel)
