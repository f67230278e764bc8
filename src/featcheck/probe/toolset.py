"""The cargo, rustc and environment every probe command runs with."""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass
from pathlib import Path

from featcheck.boundary import TrustContext
from featcheck.cargo.argv_gate import word
from featcheck.cargo.process import neutral_directory, run_process
from featcheck.cargo.runner import CargoRunner
from featcheck.errors import FeatcheckError


@dataclass(frozen=True)
class Toolset:
    """The cargo binary and environment every probe command runs with."""

    cargo: str
    environment: dict[str, str]
    rustc_version: str
    """`rustc -vV`, part of the cache key."""
    trust: TrustContext
    """The run's trust context: every build and timing run starts in the launcher with it."""


def find_toolset(
    workdir: Path, target_dir: Path, trust: TrustContext, timeout: float = 300.0
) -> Toolset:
    """cargo and rustc as featcheck's runner picks them (the user's toolchain, not one the
    checkout names), plus a C linker; a clear one-line error when one is missing."""
    if shutil.which("cargo") is None:
        raise FeatcheckError(
            "cargo not found on PATH: the probe compiles with cargo; install Rust "
            "(https://rustup.rs) or add it to PATH"
        )
    runner = CargoRunner(workdir, trust=trust, timeout=timeout)
    # The runner's environment: rustflags through the allow-list, and featcheck's own
    # CARGO_HOME where the user's lies inside the checkout (its registry sources are the
    # checkout's files, and the probe would compile them).
    environment = runner.environment()
    cargo, rustc = "cargo", "rustc"
    toolchain = runner.toolchain
    if toolchain is not None:
        cargo, rustc = str(toolchain.cargo), str(toolchain.rustc)
    _require_linker(environment)
    environment.update(
        {
            "CARGO_TARGET_DIR": str(target_dir),
            "CARGO_TERM_COLOR": "never",
            "CARGO_TERM_PROGRESS_WHEN": "never",
        }
    )
    environment.pop("CARGO_BUILD_TARGET", None)  # the probe runs here: build for the host
    environment.pop("CARGO_BUILD_BUILD_DIR", None)  # the audit's: the probe builds in its own
    output = run_process(
        rustc,
        [word("-vV")],
        trust=trust,
        cwd=neutral_directory(),
        env=environment,
        timeout=min(timeout, 60.0),
        what="`rustc -vV`",
    )
    if output.returncode != 0:
        raise FeatcheckError(f"could not run `rustc -vV`: {output.stderr.strip()[:200]}")
    return Toolset(cargo, environment, output.stdout, trust)


def _require_linker(environment: dict[str, str]) -> None:
    """A C linker on PATH (`$CC`, else `cc`), which Rust links programs with (not on Windows)."""
    if os.name == "nt":
        return
    linker = environment.get("CC") or "cc"
    if shutil.which(linker.split()[0] if linker.split() else "cc") is None:
        raise FeatcheckError(
            f"no C toolchain: `{linker}` is not on PATH, and Rust links programs with it; "
            "install one (Debian/Ubuntu: build-essential; macOS: xcode-select --install)"
        )
