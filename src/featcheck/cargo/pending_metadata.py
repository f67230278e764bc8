"""A `cargo metadata` answer on its way: what the audit does while cargo works, and the answer.

This module loads before cargo starts, so it knows the workspace model by its type only:
whoever takes the answer, after cargo has started, hands in the parser (pipeline.py). Importing
it here would bring `dataclasses` onto the path the user waits for before cargo starts.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from featcheck.boundary import TrustContext
    from featcheck.cargo.unification import Unification
    from featcheck.semantics.cfg import TargetCfg
    from featcheck.workspace.workspace import Workspace


Parse = Callable[[str], "Workspace"]
"""cargo's JSON answer as the workspace model (`workspace.parse_metadata`)."""


class PendingMetadata:
    def __init__(
        self,
        answer: Callable[[Parse], Workspace],
        cancel: Callable[[], None] | None = None,
        has_answered: Callable[[], bool] | None = None,
        settle: Callable[[], None] | None = None,
    ) -> None:
        """`has_answered`: None for an answer at hand (a kept one, the files' own)."""
        self._answer: Callable[[Parse], Workspace] | None = answer
        self._cancel = cancel
        self._has_answered = has_answered
        self._settle = settle

    def has_answered(self) -> bool:
        """Whether the answer is there to take: work done meanwhile can stop."""
        return self._has_answered is None or self._has_answered()

    def result(self, parse: Parse) -> Workspace:
        assert self._answer is not None, "the metadata was taken or cancelled already"
        answer, self._answer = self._answer, None
        return answer(parse)

    def settle(self) -> None:
        """Wait for the answer to be kept for the next audit."""
        if self._settle is not None:
            self._settle()

    def cancel(self) -> None:
        """Stop cargo: the audit ended before it needed the answer."""
        if self._answer is not None and self._cancel is not None:
            self._cancel()
        self._answer = None


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

    @property
    def trust(self) -> TrustContext:
        """The run's trust context, derived for the tree it reads: a runner for a copy of
        that tree (a fix checked by cargo) gets it derived again, never computed anew."""

    def start_metadata(
        self, manifest_path: Path, *, all_features: bool = False, features: tuple[str, ...] = ()
    ) -> PendingMetadata:
        """The workspace of `manifest_path`, on its way while the caller does other work; its
        resolve holds the optional dependencies `all_features` and `features` turn on."""

    def host_triple(self) -> str: ...

    def host_cfg(self) -> TargetCfg:
        """The cfg of units built for the host (build scripts, proc-macros)."""

    def target_cfg(self, triple: str) -> TargetCfg:
        """The cfg of units built for `triple`, with the rustflags cargo gives it."""

    def unification(self, show: Callable[[Path], str]) -> Unification:
        """Over which builds cargo unifies features here (cargo/unification.py)."""
