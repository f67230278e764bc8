"""Shared by the probe's tests: a backend configuration, timings, fixture copies."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

from support import WORKSPACES

from featcheck.probe.resolve import BackendConfig, Pin
from featcheck.probe.verdict import RunStats

CONFIG = BackendConfig(
    member="app",
    target="x86_64-unknown-linux-gnu",
    burn_version="0.22.1",
    pins=(
        Pin("burn-flex", "0.22.1", ("std",)),
        Pin("gemm", "0.19.0", ("f16", "gemm-f16", "std")),
        Pin("gemm-common", "0.19.0", ("f16", "half", "std", "sysctl")),
    ),
    lockfile=b"# lock\n",
    profile={"lto": "fat", "codegen-units": 1, "opt-level": 3},
)


def runs(
    single_ms: float, all_ms: float, parallelism: float | None, cores: int = 2
) -> tuple[RunStats, RunStats]:
    """A 1-thread run and an all-core run with these timings, threads not observed."""
    return (
        RunStats(1, single_ms, single_ms * 1.05, 1.0, "1"),
        RunStats(cores, all_ms, all_ms * 1.05, parallelism),
    )


def copy_project(
    tmp_path: Path, name: str, offline_cargo_for: Callable[..., Path] | None = None
) -> Path:
    """A copy of the fixture workspace `name`; cargo pointed at its view of the registry."""
    project = tmp_path / name
    shutil.copytree(WORKSPACES / name, project)
    if offline_cargo_for is not None:
        offline_cargo_for(project)
    return project
