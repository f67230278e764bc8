"""What a probe build compiles and runs, said before it happens, and what it produced."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from featcheck.probe.resolve import BackendConfig

_PLAIN = re.compile(r"[A-Za-z0-9_.+-]{1,200}")


@dataclass(frozen=True)
class BuildPlan:
    """One configuration, prepared in the cache: what its build would compile and run."""

    config: BackendConfig
    directory: Path
    key: str
    mlp: bool
    cached: bool
    """Its binary exists: nothing is compiled."""
    crates: tuple[str, ...] = ()
    """Every crate the build compiles, "name version", except the probe crate itself."""
    build_scripts: tuple[str, ...] | None = ()
    """Those of them whose build script cargo compiles and runs (None: cargo could not say)."""
    proc_macros: tuple[str, ...] = ()
    """Those of them that are proc-macros (loaded into rustc while compiling)."""
    preparing: float = 0.0
    """Seconds spent preparing it (writing, verifying, listing what it compiles); a build's
    time adds only its own compile to this, not the time between planning and building (the
    consent, the other configuration's build)."""


@dataclass(frozen=True)
class BuiltProbe:
    """A probe binary and how it came to be."""

    binary: Path
    key: str
    cached: bool
    seconds: float
    """Seconds spent preparing it (resolving, verifying, compiling; ~0 when cached), less
    `waited`."""
    waited: float = 0.0
    """Seconds its build waited for another build's lock in the shared cache."""


def _shown(text: str) -> str:
    """A crate name or version as cargo allows them, else quoted (never raw control bytes)."""
    return text if _PLAIN.fullmatch(text) else ascii(text)


def crate_label(name: object, version: object) -> str:
    """ "name version", as the build statement lists crates."""
    return f"{_shown(str(name))} {_shown(str(version))}"


def build_scripts(metadata: dict[str, Any], crates: set[str]) -> list[str]:
    """Those of `crates` ("name version") with a build script, from `cargo metadata` output."""
    found = set()
    for package in metadata.get("packages", []):
        if not isinstance(package, dict):
            continue
        label = crate_label(package.get("name"), package.get("version"))
        kinds = {k for t in package.get("targets", []) for k in t.get("kind", [])}
        if label in crates and "custom-build" in kinds:
            found.add(label)
    return sorted(found)
