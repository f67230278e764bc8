"""Preparing, verifying and planning a probe build against real cargo, without compiling
(probe/build.py).

The real build-and-time test is tests/probe/test_probe_slow.py (FEATCHECK_SLOW=1).
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import pytest
from probe_support import CONFIG, copy_project, probe_builder, probe_runner, resolve_member
from support import elsewhere

from featcheck.errors import FeatcheckError
from featcheck.probe.build import BuildPlan
from featcheck.probe.cache import binary_name, executable
from featcheck.probe.programs import MATMUL
from featcheck.probe.resolve import Pin, matmul_config


def test_resolve_and_verify_on_the_stub_registry(
    tmp_path: Path, offline_cargo_for: Callable[..., Path]
) -> None:
    project = copy_project(tmp_path, "crate-feature", offline_cargo_for)
    lock_before = (project / "Cargo.lock").read_bytes()
    config = matmul_config(resolve_member(probe_runner(project)))
    assert (project / "Cargo.lock").read_bytes() == lock_before
    assert config.member == "app"
    assert config.backend == Pin("burn-flex", "0.22.1", ("std",))
    assert {p.name for p in config.pins} >= {"burn-flex", "gemm", "gemm-common", "gemm-f32"}
    assert config.lockfile == lock_before

    builder = probe_builder(project, tmp_path / "cache")
    directory, key = builder.prepare(config, MATMUL)
    assert directory == tmp_path / "cache" / key
    assert (directory / "src" / "main.rs").read_bytes() == MATMUL.sources()["src/main.rs"]
    assert (directory / "Cargo.lock").read_bytes() == lock_before
    builder.verify(directory, config)  # cargo resolves exactly the member's features

    # A feature set the probe cannot reproduce (burn-flex's `std` turns on gemm's) is refused.
    gemm_without_std = [
        Pin(p.name, p.version, tuple(f for f in p.features if f != "std"))
        if p.name == "gemm"
        else p
        for p in config.pins
    ]
    impossible = replace(config, pins=tuple(gemm_without_std))
    directory, _ = builder.prepare(impossible, MATMUL)
    with pytest.raises(FeatcheckError, match="cannot reproduce app's build"):
        builder.verify(directory, impossible)


def test_the_probe_states_what_it_compiles_and_runs(
    tmp_path: Path, offline_cargo_for: Callable[..., Path]
) -> None:
    """Before a build: the crates, their build scripts and proc-macros at the locked versions,
    from cargo's own metadata of the probe crate; nothing of the member."""
    from featcheck.probe.build import build_statement

    project = copy_project(tmp_path, "crate-feature", offline_cargo_for)
    config = matmul_config(resolve_member(probe_runner(project)))
    builder = probe_builder(project, tmp_path / "cache")
    plan = builder.plan(config, MATMUL)
    assert plan.cached is False
    assert "burn-flex 0.22.1" in plan.crates and "burn-backend 0.22.1" in plan.crates
    # burn-flex alone: nothing of burn's facade, its nn or its derive macros is compiled.
    assert not any(c.startswith(("burn ", "burn-nn ", "burn-derive ")) for c in plan.crates)
    assert set(plan.build_scripts) <= set(plan.crates) and set(plan.proc_macros) <= set(plan.crates)
    assert not any(c.startswith(("app ", "featcheck-probe")) for c in plan.crates)
    statement = build_statement([plan], "app", "the checkout's Cargo.lock pins")
    assert f"compiles {len(plan.crates)} crates from the registry" in statement
    assert plan.proc_macros and f"\n    {plan.proc_macros[0]}\n" in statement
    assert "nothing of app's own code" in statement
    # The estimate: about 1.4 CPU-seconds a crate (and the probe crate), the cores shared with
    # the load already there; in seconds under a minute and a half, else in minutes.
    crates = len(plan.crates) + 1
    assert 100 < crates < 128  # under a minute and a half when quiet
    quiet = build_statement([plan], "app", "Cargo.lock", cores=2, load=None)
    assert f"about {round(crates * 1.4 / 2, -1):.0f} s here, an estimate" in quiet
    assert f"({crates} crates, 2 cores, no load average);" in quiet
    loaded = build_statement([plan], "app", "Cargo.lock", cores=2, load=2.0)
    assert f"about {round(crates * 1.4 / 60)} minutes here, an estimate" in loaded
    assert f"({crates} crates, 2 cores, load 2.0 from other work);" in loaded
    scripts = build_statement([replace(plan, build_scripts=("a 1.0.0", "b 2.0.0"))], "app", "x")
    assert "  build scripts cargo runs while compiling (2):\n    a 1.0.0\n    b 2.0.0\n" in scripts
    # Every value on the probe's cargo command lines goes through the audit's gate.
    with pytest.raises(FeatcheckError, match=r"target: `@/tmp/evil\.args` is not a target"):
        builder.plan(replace(config, target="@/tmp/evil.args"), MATMUL)
    # Where cargo metadata cannot list build scripts (--offline, a sparse cache), it says so.
    unknown = build_statement([replace(plan, build_scripts=None)], "app", "Cargo.lock")
    assert "build scripts: cargo metadata could not list which run here" in unknown


class _Clock:
    """time.monotonic for build.py: the given instants, in order."""

    def __init__(self, *instants: float) -> None:
        self.instants = list(instants)

    def monotonic(self) -> float:
        return self.instants.pop(0)


def test_a_builds_seconds_leave_out_the_wait_before_it(
    tmp_path: Path, offline_cargo_for: Callable[..., Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Both configurations are planned before either is built: the second one's time must not
    count the first one's build (nor the wait for consent) that ran in between."""
    from featcheck.probe import build as build_module

    project = copy_project(tmp_path, "crate-feature", offline_cargo_for)
    config = matmul_config(resolve_member(probe_runner(project)))
    builder = probe_builder(project, tmp_path / "cache")
    directory, key = builder.prepare(config, MATMUL)
    (directory / executable(binary_name(key))).write_bytes(b"")  # built before: a cached plan
    (directory / "built.json").write_text("{}\n")
    # Planned at 0-0.25 s; 600 s of another build pass; this one is taken at 600-600.25 s.
    monkeypatch.setattr(build_module, "time", _Clock(0.0, 0.25, 600.0, 600.25))
    plan = builder.plan(config, MATMUL)
    assert plan.cached and plan.seconds == 0.25
    built = builder.build(plan)
    assert built.cached and built.seconds == 0.5


FAKE_CARGO = """\
#!{python}
import os, pathlib, sys, time
for _ in range(20):  # as cargo repeats it, once per lock and attempt
    print("    Blocking waiting for file lock on build directory", file=sys.stderr, flush=True)
time.sleep(3)  # another probe builds meanwhile
print("   Compiling burn-flex v0.22.1", file=sys.stderr, flush=True)
name = next(a.split("=", 1)[1] for a in sys.argv if a.startswith("--bin="))
built = pathlib.Path(os.environ["CARGO_TARGET_DIR"]) / "release" / name
built.parent.mkdir(parents=True, exist_ok=True)
built.write_text("")
"""


@pytest.mark.cargo
@pytest.mark.skipif(os.name != "posix", reason="the fake cargo is a script with a #! line")
def test_a_builds_time_starts_when_another_builds_lock_is_released(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """cargo waits for the lock another probe's build holds on the shared cache: said once,
    and its seconds are the wait's, not this build's."""
    fake = tmp_path / "cargo"
    fake.write_text(FAKE_CARGO.format(python=sys.executable))
    fake.chmod(0o755)
    # The checkout lies beside the fake cargo: the launcher runs no program of the checkout.
    trust = elsewhere(tmp_path)
    builder = probe_builder(trust.root, tmp_path / "cache", trust)
    builder.toolset = replace(builder.toolset, cargo=str(fake))
    directory, key = builder.prepare(CONFIG, MATMUL)
    plan = BuildPlan(CONFIG, directory, key, False, crates=("burn-flex 0.22.1",))
    started = time.monotonic()
    built = builder.build(plan)
    elapsed = time.monotonic() - started
    assert built.waited >= 2.9 and built.seconds + built.waited <= elapsed
    stderr = capsys.readouterr().err
    assert stderr.count("Blocking waiting for file lock") == 1
    assert f"waited {built.waited:.0f} s for another build\n" in stderr
    assert f"built the probe in {built.seconds:.0f} s (1 crate compiled" in stderr
    assert json.loads((directory / "built.json").read_text())["waited"] == round(built.waited, 1)
