"""Where an audit's workspace comes from: a `MetadataSource`.

Two exist. cargo itself (`cargo.runner.CargoRunner`: `cargo metadata`, `rustc --print cfg`),
and the files alone (`noexec.source.FileSource`, `--no-exec`: the manifests, Cargo.lock, the
local registry and built-in cfg tables), which may return a workspace with gaps
(`Workspace.unread`) that goes through the same pipeline. The pipeline speaks to this
interface only; what needs cargo itself (a fix confirmed in a copy, the tests' cargo tree
oracle) names `CargoRunner`, and a files source never stands in for it.

A Protocol, not a base class: this module loads before cargo starts, and neither source
inherits anything from the other.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from featcheck.boundary import TrustContext
    from featcheck.cargo.pending_metadata import PendingMetadata
    from featcheck.cargo.unification import Unification
    from featcheck.semantics.cfg import TargetCfg


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

    def host_triple(self) -> str:
        """The triple of the machine cargo runs on."""
        ...

    def host_cfg(self) -> TargetCfg:
        """The cfg of units built for the host (build scripts, proc-macros)."""
        ...

    def target_cfg(self, triple: str) -> TargetCfg:
        """The cfg of units built for `triple`, with the rustflags cargo gives it."""
        ...

    def unification(self, show: Callable[[Path], str]) -> Unification:
        """Over which builds cargo unifies features here (cargo/unification.py)."""
        ...
