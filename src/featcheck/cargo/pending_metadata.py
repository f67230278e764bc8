"""A `cargo metadata` answer on its way: what the audit does while cargo works, and the answer;
the sources it comes from, and over which packages cargo unifies features (below).

This module loads before cargo starts, so it knows the workspace model by its type only:
whoever takes the answer, after cargo has started, hands in the parser (pipeline.py). Importing
it here would bring `dataclasses` onto the path the user waits for before cargo starts.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple, Protocol

if TYPE_CHECKING:
    from featcheck.boundary import TrustContext
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


class MetadataSource(Protocol):
    """Where an audit's workspace comes from: the workspace model of one checkout and the cfg of
    the targets it is built for. Two exist: cargo itself (`cargo.runner.CargoRunner`: `cargo
    metadata`, `rustc --print cfg`), and the files alone (`noexec.source.FileSource`,
    `--no-exec`), which may return a workspace with gaps (`Workspace.unread`) that goes through
    the same pipeline. The pipeline speaks to this interface only; what needs cargo itself (a fix
    confirmed in a copy, the tests' cargo tree oracle) names `CargoRunner`, and a files source
    never stands in for it. A Protocol, not a base class: this module loads before cargo starts,
    and neither source inherits anything from the other."""

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

    def default_targets(self) -> list[str]:
        """What cargo builds for without `--target`: the configuration's `build.target`, else
        the host."""

    def host_cfg(self) -> TargetCfg:
        """The cfg of units built for the host (build scripts, proc-macros)."""

    def target_cfg(self, triple: str) -> TargetCfg:
        """The cfg of units built for `triple`, with the rustflags cargo gives it."""

    def unification(self, show: Callable[[Path], str]) -> Unification:
        """Over which builds cargo unifies features here (below)."""


# cargo's `resolver.feature-unification` (RFC 3692): over which packages features unify.
#
# `workspace` resolves every build as if all workspace members were selected, so one member gets
# the features another member asks of a shared dependency; `selected` (cargo's default) and
# `package` resolve `cargo build -p MEMBER` for that member alone, as cargo always has. Measured
# with cargo 1.97.0-nightly and 1.95.0: the key is honoured only by a nightly cargo (a `-nightly`
# or `-dev` release, or any cargo with RUSTC_BOOTSTRAP=1) that is also given the unstable flag
# (`[unstable] feature-unification = true`, CARGO_UNSTABLE_FEATURE_UNIFICATION=true or
# `-Zfeature-unification`); otherwise cargo warns "ignoring `resolver.feature-unification`
# without `-Zfeature-unification`" and resolves per member. A value other than the three names
# makes every cargo refuse to start, stable included.

MODE_KEY = ("resolver", "feature-unification")
UNSTABLE_KEY = ("unstable", "feature-unification")
MODES = ("selected", "workspace", "package")
MODE_VARIABLE = "CARGO_RESOLVER_FEATURE_UNIFICATION"
UNSTABLE_VARIABLE = "CARGO_UNSTABLE_FEATURE_UNIFICATION"


class UnificationSettings(NamedTuple):
    """What the configuration files say, each value with the file that set it last."""

    mode: tuple[str, Path] | None = None
    unstable: tuple[bool, Path] | None = None


class Unification(NamedTuple):
    workspace: bool = False
    """Every member's build gets the features of all members' builds (cargo's `workspace`)."""
    finding_note: str | None = None
    """Said in each finding when `workspace`."""
    result_note: str | None = None
    """Said once, when the checkout asks for a unification its cargo ignores."""


PER_MEMBER = Unification()


def nightly_release(release: str, environment: Mapping[str, str]) -> bool:
    """Whether cargo of this `rustc -vV` release allows unstable features (see above)."""
    channel = release.partition("-")[2].partition(".")[0]
    return channel in ("nightly", "dev") or environment.get("RUSTC_BOOTSTRAP") == "1"


def decide(
    settings: UnificationSettings,
    environment: Mapping[str, str],
    release: str | None,
    show: Callable[[Path], str],
) -> Unification:
    """The unification cargo applies, its toolchain's `rustc -vV` release being `release`
    (None: no process was run). `show` names a configuration file as the notes show it."""
    # Each value as the environment sets it, else as the files set it, and where.
    if MODE_VARIABLE in environment:
        mode, where = environment[MODE_VARIABLE], MODE_VARIABLE
    else:
        mode, where = (settings.mode[0], show(settings.mode[1])) if settings.mode else ("", "")
    if mode != "workspace":
        return PER_MEMBER
    asked = f'resolver.feature-unification = "workspace" in {where}'
    unstable: tuple[bool, str] | None = None  # the unstable flag, and where it is set
    if UNSTABLE_VARIABLE in environment:
        unstable = (environment[UNSTABLE_VARIABLE].strip() == "true", UNSTABLE_VARIABLE)
    elif settings.unstable is not None:
        unstable = (settings.unstable[0], show(settings.unstable[1]))
    if release is None:
        return Unification(
            result_note=f"{asked} is not applied: --no-exec runs no toolchain to learn whether "
            "its cargo is nightly and reads it; each member was resolved on its own"
        )
    if not nightly_release(release, environment):
        why = f"the toolchain is not nightly (rustc {release}), and only nightly cargo reads it"
    elif unstable is None or not unstable[0]:
        why = (
            "nightly cargo reads it only with `[unstable] feature-unification = true` "
            f"(or {UNSTABLE_VARIABLE}=true)"
            + (f", which {unstable[1]} sets to false" if unstable is not None else "")
        )
    else:
        return Unification(
            True, f"features unified over the whole workspace, as {asked} asks (nightly)"
        )
    note = f"{asked} is ignored: {why}; each member was resolved on its own, as cargo does"
    return Unification(result_note=note)
