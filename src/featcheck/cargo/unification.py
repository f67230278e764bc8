"""cargo's `resolver.feature-unification` (RFC 3692): over which packages features unify.

`workspace` resolves every build as if all workspace members were selected, so one member gets
the features another member asks of a shared dependency; `selected` (cargo's default) and
`package` resolve `cargo build -p MEMBER` for that member alone, as cargo always has. Measured
with cargo 1.97.0-nightly and 1.95.0: the key is honoured only by a nightly cargo (a `-nightly`
or `-dev` release, or any cargo with RUSTC_BOOTSTRAP=1) that is also given the unstable flag
(`[unstable] feature-unification = true`, CARGO_UNSTABLE_FEATURE_UNIFICATION=true or
`-Zfeature-unification`); otherwise cargo warns "ignoring `resolver.feature-unification`
without `-Zfeature-unification`" and resolves per member. A value other than the three names
makes every cargo refuse to start, stable included.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import NamedTuple, TypeVar

T = TypeVar("T")

MODE_KEY = ("resolver", "feature-unification")
UNSTABLE_KEY = ("unstable", "feature-unification")
MODES = ("selected", "workspace", "package")
"""The values cargo accepts; any other makes it refuse to start."""
MODE_VARIABLE = "CARGO_RESOLVER_FEATURE_UNIFICATION"
UNSTABLE_VARIABLE = "CARGO_UNSTABLE_FEATURE_UNIFICATION"


class UnificationSettings(NamedTuple):
    """What the configuration files say, each value with the file that set it last."""

    mode: tuple[str, Path] | None = None
    unstable: tuple[bool, Path] | None = None

    def taking(self, key: tuple[str, ...], value: object, file: Path) -> UnificationSettings:
        """These settings after a later file sets `key`."""
        if key == MODE_KEY and isinstance(value, str):
            return self._replace(mode=(value, file))
        if key == UNSTABLE_KEY and isinstance(value, bool):
            return self._replace(unstable=(value, file))
        return self


class Unification(NamedTuple):
    workspace: bool = False
    """Every member's build gets the features of all members' builds (cargo's `workspace`)."""
    finding_note: str | None = None
    """Said in each finding when `workspace`."""
    result_note: str | None = None
    """Said once, when the checkout asks for a unification its cargo ignores."""


PER_MEMBER = Unification()


def nightly_release(release: str, environment: Mapping[str, str]) -> bool:
    """Whether cargo of this `rustc -vV` release allows unstable features, as cargo decides:
    a `-nightly` or `-dev` release, or RUSTC_BOOTSTRAP=1 in its environment."""
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
    mode, where = _setting(MODE_VARIABLE, str, settings.mode, environment, show)
    if mode != "workspace":
        return PER_MEMBER
    asked = f'resolver.feature-unification = "workspace" in {where}'
    unstable, unstable_where = _setting(
        UNSTABLE_VARIABLE,
        lambda value: value.strip() == "true",
        settings.unstable,
        environment,
        show,
    )
    if release is None:
        return Unification(
            result_note=f"{asked} is not applied: --no-exec runs no toolchain to learn whether "
            "its cargo is nightly and reads it; each member was resolved on its own"
        )
    if not nightly_release(release, environment):
        why = f"the toolchain is not nightly (rustc {release}), and only nightly cargo reads it"
    elif not unstable:
        why = (
            "nightly cargo reads it only with `[unstable] feature-unification = true` "
            f"(or {UNSTABLE_VARIABLE}=true)"
            + (f", which {unstable_where} sets to false" if unstable is False else "")
        )
    else:
        return Unification(
            True, f"features unified over the whole workspace, as {asked} asks (nightly)"
        )
    note = f"{asked} is ignored: {why}; each member was resolved on its own, as cargo does"
    return Unification(result_note=note)


def _setting(
    variable: str,
    read: Callable[[str], T],
    kept: tuple[T, Path] | None,
    environment: Mapping[str, str],
    show: Callable[[Path], str],
) -> tuple[T | None, str]:
    """The value `variable` sets (as `read` reads it), else the files' `kept` one, and where."""
    if variable in environment:
        return read(environment[variable]), variable
    if kept is None:
        return None, ""
    return kept[0], show(kept[1])
