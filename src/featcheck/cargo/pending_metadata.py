"""A `cargo metadata` answer on its way: what the audit does while cargo works, and the answer.

This module loads before cargo starts, so it knows the workspace model and the last audit's
answer (last_answer.py) by their types only: whoever takes the answer, after cargo has started,
hands in the parser and the reader of the kept answer (pipeline.py). Importing them here
would bring `dataclasses` and `hashlib` onto the path the user waits for before cargo starts
(about 30 ms, measured with cargo's start as the mark).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from featcheck.cargo.failures import failure_error
from featcheck.cargo.process import ProcessOutput, RunningProcess
from featcheck.errors import FeatcheckError

if TYPE_CHECKING:
    from featcheck.boundary import TrustContext
    from featcheck.cargo.last_answer import LastAnswer
    from featcheck.cargo.unification import Unification
    from featcheck.semantics.cfg import TargetCfg
    from featcheck.workspace.workspace import Workspace


Parse = Callable[[str], "Workspace"]
"""cargo's JSON answer as the workspace model (`workspace.parse_metadata`)."""
OpenLastAnswer = Callable[[Path | None, Sequence[str], Sequence[Path]], "LastAnswer | None"]
"""The kept answer of a command line in a cache directory, given files the command reads
(`LastAnswer.of_command`)."""


class PendingMetadata:
    def __init__(
        self,
        answer: Callable[[LastAnswer | None, Parse], Workspace],
        cancel: Callable[[], None] | None = None,
        last_answer: Callable[[OpenLastAnswer], LastAnswer | None] | None = None,
        answered_otherwise: Callable[[LastAnswer | None], bool] | None = None,
    ) -> None:
        self._answer: Callable[[LastAnswer | None, Parse], Workspace] | None = answer
        self._cancel = cancel
        self._last_answer = last_answer
        self._answered_otherwise = answered_otherwise
        self._last: LastAnswer | None = None

    def read_last_answer(self, open_last: OpenLastAnswer) -> None:
        """While cargo works: read and parse what it answered at the project's last audit."""
        if self._last_answer is not None and self._last is None:
            self._last = self._last_answer(open_last)
            if self._last is not None:
                self._last.read()

    @property
    def last_answer(self) -> Workspace | None:
        """The last audit's answer, parsed by `read_last_answer` (None without one). `result()`
        returns this very object when cargo answers the same again."""
        return self._last.metadata if self._last is not None else None

    def answered_otherwise(self) -> bool:
        """Whether cargo has answered already, and not what it answered at the last audit:
        an audit ahead of that answer is then wasted, and only delays the one that counts."""
        return (
            self._answered_otherwise is not None
            and self._answer is not None
            and self._answered_otherwise(self._last)
        )

    def result(self, parse: Parse) -> Workspace:
        assert self._answer is not None, "the metadata was taken or cancelled already"
        answer, self._answer = self._answer, None
        return answer(self._last, parse)

    def settle(self) -> None:
        """Wait for the answer to be kept for the next audit."""
        if self._last is not None:
            self._last.settle()

    def cancel(self) -> None:
        """Stop cargo: the audit ended before it needed the answer."""
        if self._answer is not None and self._cancel is not None:
            self._cancel()
        self._answer = None


def pending_cargo_metadata(
    running: RunningProcess,
    arguments: Sequence[str],
    cache: Path | None,
    finish: Callable[[RunningProcess], ProcessOutput],
    inputs: Sequence[Path],
) -> PendingMetadata:
    """The answer of the started `cargo ARGUMENTS` (`metadata`): `finish` waits for its
    output. Its last answer is kept in `cache`, and not read where one of `inputs` (files
    cargo reads) was written since."""

    def answer(last: LastAnswer | None, parse_metadata: Parse) -> Workspace:
        # cargo prints its one line of JSON, then takes ~10 ms to free what it built and
        # exit: the line is read meanwhile (or found equal to the last audit's, parsed
        # already), and kept only if cargo then succeeds having printed nothing more.
        line = running.stdout_once_a_line_ends()
        early: Workspace | None = None
        if line is not None:
            early = last.matching(line) if last is not None else None
            if early is None:
                with contextlib.suppress(FeatcheckError):
                    early = parse_metadata(line)
        output = finish(running)
        if output.returncode != 0:
            raise failure_error("cargo metadata", output.stderr)
        if early is not None and line is output.stdout:  # nothing printed after the line
            if last is not None:
                last.keep(output.stdout)
            return early
        return parse_metadata(output.stdout)

    verdict: list[bool] = []  # once cargo has answered, compared with the kept answer once

    def answered_otherwise(last: LastAnswer | None) -> bool:
        if not verdict:
            if not running.has_answered():
                return False
            line = running.stdout_once_a_line_ends()
            verdict.append(last is None or line is None or last.matching(line) is None)
        return verdict[0]

    return PendingMetadata(
        answer,
        running.cancel,
        lambda open_last: open_last(cache, arguments, inputs),
        answered_otherwise,
    )


# Where an audit's workspace comes from: a `MetadataSource`. Two exist: cargo itself
# (`cargo.runner.CargoRunner`: `cargo metadata`, `rustc --print cfg`), and the files alone
# (`noexec.source.FileSource`, `--no-exec`), which may return a workspace with gaps
# (`Workspace.unread`) that goes through the same pipeline. The pipeline speaks to this interface
# only; what needs cargo itself (a fix confirmed in a copy, the tests' cargo tree oracle) names
# `CargoRunner`, and a files source never stands in for it. A Protocol, not a base class: this
# module loads before cargo starts, and neither source inherits anything from the other.


class MetadataSource(Protocol):
    """The workspace model of one checkout and the cfg of the targets it is built for."""

    @property
    def checkout(self) -> Path:
        """The root of the tree it reads: no file is read through a link out of it."""
        ...

    @property
    def trust(self) -> TrustContext:
        """The run's trust context, derived for the tree it reads: a runner for a copy of
        that tree (a fix checked by cargo) gets it derived again, never computed anew."""
        ...

    def start_metadata(
        self, manifest_path: Path, *, all_features: bool = False, features: tuple[str, ...] = ()
    ) -> PendingMetadata:
        """The workspace of `manifest_path`, on its way while the caller does other work; its
        resolve holds the optional dependencies `all_features` and `features` turn on."""
        ...

    def host_triple(self) -> str: ...

    def host_cfg(self) -> TargetCfg:
        """The cfg of units built for the host (build scripts, proc-macros)."""
        ...

    def target_cfg(self, triple: str) -> TargetCfg:
        """The cfg of units built for `triple`, with the rustflags cargo gives it."""
        ...

    def unification(self, show: Callable[[Path], str]) -> Unification:
        """Over which builds cargo unifies features here (cargo/unification.py)."""
        ...
