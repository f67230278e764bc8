"""The probe's structural evidence for real, under load: the probe crate's threads.rs around a
tiny Rust program (tests/probe/probe_threads/workload.rs) that does its work either on the calling
thread, next to an idle pool, or on a pool of workers while the caller waits, as rayon does.
Every core is kept busy by a busy loop the test starts (each ends by itself after a minute).

It needs rustc (std only, no crates, no network) and Linux, where threads.rs can read
/proc/self/task; elsewhere the probe reports "not measured", which test_verdict.py covers.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from support import REPO

from featcheck.probe.measure import _read_cpu_times, run_load, usable_cores
from featcheck.probe.programs import PROGRAMS_DIR
from featcheck.probe.verdict import Load, RunStats, ThreadEvidence, Verdict, decide

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="threads are observed on Linux only"
)

BUSY_SECONDS = 60
BUSY_LOOP = (
    "import time\n"
    f"end = time.monotonic() + {BUSY_SECONDS}\n"
    "while time.monotonic() < end:\n"
    "    pass\n"
)


@pytest.fixture(scope="module")
def workload(tmp_path_factory: pytest.TempPathFactory) -> Path:
    rustc = shutil.which("rustc")
    if rustc is None:
        pytest.skip("rustc is not installed")
    directory = tmp_path_factory.mktemp("workload")
    shutil.copy(REPO / "tests" / "probe" / "probe_threads" / "workload.rs", directory / "main.rs")
    shutil.copy(PROGRAMS_DIR / "threads.rs", directory / "threads.rs")
    binary = directory / "workload"
    subprocess.run(
        [rustc, "-O", "--edition", "2021", "-o", str(binary), "main.rs"],
        cwd=directory,
        check=True,
        timeout=600,
        capture_output=True,
    )
    return binary


@contextmanager
def every_core_busy(count: int) -> Iterator[None]:
    """One busy loop per core, each ending after BUSY_SECONDS even if the test dies."""
    loops = [subprocess.Popen([sys.executable, "-c", BUSY_LOOP]) for _ in range(count)]
    try:
        time.sleep(0.3)
        yield
    finally:
        for loop in loops:
            loop.kill()
        for loop in loops:
            loop.wait()


def _run(binary: Path, mode: str, workers: int) -> tuple[ThreadEvidence, dict[str, Any]]:
    output = subprocess.run(
        [str(binary), mode, str(workers)], capture_output=True, text=True, check=True, timeout=300
    )
    data = json.loads(output.stdout)
    evidence = ThreadEvidence.from_probe(data["threads"])
    assert evidence is not None, data
    return evidence, data


def _verdict(evidence: ThreadEvidence, cores: int, idle: float | None) -> Verdict:
    # The timings say nothing here (same minimum, one core busy): only the threads can decide.
    single = RunStats(1, 100.0, 100.0, 1.0, "1")
    every = RunStats(cores, 100.0, 100.0, 1.0, None, evidence)
    decision = decide(single, every, cores, Load(idle, float(cores)))
    assert decision.basis == "threads" and decision.load.loaded
    return decision.verdict


def test_one_thread_and_a_pool_are_told_apart_with_every_core_busy(workload: Path) -> None:
    cores = usable_cores()
    if cores < 2:
        pytest.skip("one core: one thread and a pool cannot be told apart")
    with every_core_busy(cores):
        before = _read_cpu_times()
        one, one_data = _run(workload, "one", cores)
        pool, pool_data = _run(workload, "pool", cores)
        after = _read_cpu_times()
    idle = run_load(before, after, None, 1.0, cores).idle_cores
    print(f"idle cores during the runs: {idle}; one: {one_data}; pool: {pool_data}")
    assert idle is not None and idle < 0.5  # the machine really was busy

    assert one.method in ("linux-schedstat-1", "linux-stat-1")
    assert one.alive == cores + 1  # the idle pool exists and is counted
    assert (one.threads_used, one.main_share) == (1, pytest.approx(1.0, abs=0.02))
    assert _verdict(one, cores, idle) is Verdict.SINGLE

    assert pool.threads_used >= 2
    assert pool.main_share < 0.1  # the caller waits while the workers compute
    assert _verdict(pool, cores, idle) is Verdict.MULTI
