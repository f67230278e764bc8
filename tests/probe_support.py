"""Shared by the probe's tests: a backend configuration, timings, fixture copies, and probes
"built before" (scripts in the cache where a build's binary would be)."""

from __future__ import annotations

import shutil
import stat
import sys
from collections.abc import Callable
from pathlib import Path

from support import WORKSPACES, trust_of

from featcheck.boundary import TrustContext
from featcheck.cargo.runner import CargoRunner
from featcheck.pipeline import audit_project
from featcheck.probe.build import ProbeBuilder
from featcheck.probe.cache import binary_name, executable
from featcheck.probe.command import fix_changes, graph_with_changes
from featcheck.probe.member import member_findings, rule_configurations, timed_findings
from featcheck.probe.programs import MATMUL, program_timing
from featcheck.probe.resolve import (
    BackendConfig,
    MemberGraph,
    Pin,
    matmul_config,
    member_graph,
)
from featcheck.probe.verdict import RunStats

CONFIG = BackendConfig(
    member="app",
    target="x86_64-unknown-linux-gnu",
    burn_version="0.22.1",
    pins=(
        Pin("burn-flex", "0.22.1", ("std",)),
        Pin("gemm", "0.19.0", ("f16", "gemm-f16", "std")),
        Pin("gemm-common", "0.19.0", ("f16", "half", "std", "sysctl")),
        Pin("burn-backend", "0.22.1", ("std",)),
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


def probe_runner(project: Path, trust: TrustContext | None = None) -> CargoRunner:
    """The runner `featcheck probe --offline` makes for `project` (its trust context unless
    `trust` is given)."""
    return CargoRunner(
        project, trust=trust if trust is not None else trust_of(project), offline=True, timeout=120
    )


def resolve_member(runner: CargoRunner) -> MemberGraph:
    """The member of the workspace `runner` runs in, resolved as the probe resolves it."""
    return member_graph(runner, runner.workdir / "Cargo.toml", None)


def probe_builder(
    project: Path, root: Path | None = None, trust: TrustContext | None = None
) -> ProbeBuilder:
    """The builder `featcheck probe --offline` makes for `project` (its trust context unless
    `trust` is given), its cache in `root` (else the user's cache)."""
    trust = trust if trust is not None else trust_of(project)
    runner = CargoRunner(project, trust=trust, timeout=120)
    return ProbeBuilder(runner, offline=True, timeout=120, say=print, root=root)


# --- probes "built before": scripts where the cache keeps a build's binary ---------------------

FAKE_PROBE = """\
#!{python}
import json, os, sys
single = os.environ.get("RAYON_NUM_THREADS") == "1"
multi = {multi}
ms = 21.4 if single or not multi else 11.5
parallelism = 1.0 if single or not multi else 1.9
cpu = ms * 20 * parallelism
threads = {{"method": "linux-schedstat-1", "alive": 3,
           "main_ms": 1.0 if multi else cpu, "others_ms": [cpu / 2, cpu / 2] if multi else []}}
print(json.dumps({{
    "probe": 1, "n": int(sys.argv[2]), "warmup": 3, "runs": 20,
    "rayon_num_threads": 1 if single else None, "available_parallelism": 2,
    "matmul": {{"min_ms": ms, "median_ms": ms * 1.1, "wall_ms": ms * 20,
                "cpu_ms": cpu, "parallelism": parallelism, "threads": threads}},
    "mlp": None,
}}))
"""

FAKE_RULE_PROGRAM = """\
#!{python}
print("search\\t{ms}\\t{result}")
"""
"""A rule probe's program: one workload, its median time in ms and what it computed."""


def _executable_script(path: Path, text: str) -> None:
    path.write_text(text)
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    (path.parent / "built.json").write_text("{}\n")


def matmul_configs(project: Path) -> tuple[BackendConfig, BackendConfig]:
    """The member's burn-flex configuration, and the one featcheck's fix gives it."""
    resolved = resolve_member(probe_runner(project))
    findings = member_findings(audit_project, resolved)
    changes, _ = fix_changes(findings)
    after = graph_with_changes(resolved, changes)
    return matmul_config(resolved), matmul_config(after, label="with featcheck's fix")


def place_in_cache(builder: ProbeBuilder, config: BackendConfig, multi: bool) -> None:
    """Put a script that answers like the probe where the cache keeps `config`'s binary."""
    directory, key = builder.prepare(config, MATMUL)
    _executable_script(
        directory / f"featcheck-probe-{key}", FAKE_PROBE.format(python=sys.executable, multi=multi)
    )


def place_probes(
    project: Path,
    *,
    matmul: bool | None = None,
    timings: dict[str, tuple[float, float]] | None = None,
) -> list[str]:
    """Scripts where the cache keeps the builds the probe of `project` times, the member
    resolved once: the matmul's (`matmul`: whether it answers as a parallel gemm; None: not
    placed), and both builds of each finding a rule program times, timed as `timings[code]`
    says (member's build, fixed build; a negative fixed time: the fixed build computes
    something else). Returns the codes of those findings."""
    resolved = resolve_member(probe_runner(project))
    builder = probe_builder(project)
    if matmul is not None:
        place_in_cache(builder, matmul_config(resolved), matmul)
    if timings is None:
        return []
    findings = timed_findings(member_findings(audit_project, resolved), {"ALL"})
    for finding in findings:
        program = program_timing(finding.crate, finding.crate_version, finding.feature)
        assert program is not None
        current, fixed, _ = rule_configurations(resolved, finding)
        for ms, config in zip(timings[finding.code], (current, fixed), strict=True):
            directory, key = builder.prepare(config, program)
            _executable_script(
                directory / executable(binary_name(key)),
                FAKE_RULE_PROGRAM.format(
                    python=sys.executable, ms=abs(ms), result="42" if ms > 0 else "41"
                ),
            )
    return [finding.code for finding in findings]
