"""Run probe binaries and combine their JSON lines into per-configuration statistics.

Every configuration runs `ROUNDS` times with `RAYON_NUM_THREADS=1` and with it unset, the rounds
of all configurations interleaved (1, all, 1, all, ...) so that a burst of load elsewhere hits
them alike. Per configuration the best minimum and the best median over rounds are kept (as in
the published measurement), and the parallelism is total CPU time over total wall time of the
timed loops; the per-thread CPU times of the rounds are merged (verdict.ThreadEvidence). While an
all-core round runs, /proc/stat tells how many of this process's cores stayed idle and, less the
probe's own CPU time (getrusage of the child), how many other processes kept busy (Linux only):
the timings are marked as measured under load from that.
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

from featcheck.boundary import TrustContext
from featcheck.cargo.argv_gate import Argument
from featcheck.cargo.process import neutral_directory, run_process
from featcheck.errors import FeatcheckError
from featcheck.probe.verdict import Load, RunStats, ThreadEvidence

if sys.platform != "win32":
    import resource

ROUNDS = 1
"""One round: the verdict rests on which threads did the work, which one round shows under any
load; repeating rounds only refined the timings and doubled the time to a verdict."""
WARMUP = 2
TIMED_RUNS = 10
"""The published measurement took 3 warm-up and 20 timed runs; 2 + 10 keep a cached probe's
verdict within about 10 s on a loaded 2-core machine (the minimum is what is compared)."""


def usable_cores() -> int:
    """Cores this process may run on (its affinity mask where the platform has one)."""
    affinity = getattr(os, "sched_getaffinity", None)
    if affinity is not None:
        try:
            return len(affinity(0))
        except OSError:
            pass
    return os.cpu_count() or 1


def _usable_cpu_ids() -> set[int] | None:
    affinity = getattr(os, "sched_getaffinity", None)
    if affinity is None:
        return None
    try:
        return set(affinity(0))
    except OSError:
        return None


def cpu_times(stat_text: str, cpus: set[int] | None) -> tuple[float, float] | None:
    """(idle, total) jiffies summed over `cpus` from /proc/stat text (None: every cpuN line)."""
    idle = total = 0.0
    found = False
    for line in stat_text.splitlines():
        name, _, rest = line.partition(" ")
        if not name.startswith("cpu") or name == "cpu":
            continue
        try:
            number = int(name[3:])
            values = [float(v) for v in rest.split()]
        except ValueError:
            continue
        if cpus is not None and number not in cpus:
            continue
        if len(values) < 4:
            continue
        found = True
        # user nice system idle iowait irq softirq steal (guest time is inside user)
        idle += values[3] + (values[4] if len(values) > 4 else 0.0)
        total += sum(values[:8])
    return (idle, total) if found else None


def _read_cpu_times() -> tuple[float, float] | None:
    try:
        with open("/proc/stat", encoding="ascii") as stat:
            return cpu_times(stat.read(), _usable_cpu_ids())
    except OSError:
        return None


@dataclass
class _Accumulator:
    """The rounds of one workload of one configuration with one thread setting."""

    mins: list[float] = field(default_factory=list)
    medians: list[float] = field(default_factory=list)
    cpu_ms: float = 0.0
    wall_ms: float = 0.0
    cpu_known: bool = True
    evidence: ThreadEvidence | None = None
    evidence_known: bool = True

    def add(self, workload: dict[str, Any]) -> None:
        self.mins.append(float(workload["min_ms"]))
        self.medians.append(float(workload["median_ms"]))
        self.wall_ms += float(workload["wall_ms"])
        if workload.get("cpu_ms") is None:
            self.cpu_known = False
        else:
            self.cpu_ms += float(workload["cpu_ms"])
        evidence = ThreadEvidence.from_probe(workload.get("threads"))
        if evidence is None or (
            self.evidence is not None and self.evidence.method != evidence.method
        ):
            self.evidence_known = False
        elif self.evidence is None:
            self.evidence = evidence
        else:
            self.evidence = self.evidence.merged(evidence)

    def stats(self, threads: int, rayon: str | None) -> RunStats | None:
        if not self.mins:
            return None
        parallelism = self.cpu_ms / self.wall_ms if self.cpu_known and self.wall_ms > 0 else None
        evidence = self.evidence if self.evidence_known else None
        return RunStats(threads, min(self.mins), min(self.medians), parallelism, rayon, evidence)


@dataclass
class Measurement:
    """One configuration's two thread settings, measured."""

    single: RunStats
    every: RunStats
    idle_cores: float | None
    other_cores: float | None = None
    """Cores kept busy by other processes during the all-core runs, on average."""


def parse_probe_output(stdout: str) -> dict[str, Any]:
    """The probe's JSON line (the last line of its stdout)."""
    lines = [line for line in stdout.splitlines() if line.strip()]
    try:
        data = json.loads(lines[-1]) if lines else None
    except ValueError:
        data = None
    if not isinstance(data, dict) or data.get("probe") != 1 or "matmul" not in data:
        raise FeatcheckError(f"the probe printed something unexpected: {stdout.strip()[:200]!r}")
    return data


def _children_cpu_seconds() -> float | None:
    """CPU time of the waited-for children of this process so far (Unix)."""
    if sys.platform == "win32":
        return None
    else:
        usage = resource.getrusage(resource.RUSAGE_CHILDREN)
        return usage.ru_utime + usage.ru_stime


def run_load(
    before: tuple[float, float] | None,
    after: tuple[float, float] | None,
    probe_cpu_seconds: float | None,
    elapsed: float,
    cores: int,
) -> Load:
    """Idle cores and cores busy with other processes over one run, from /proc/stat samples
    (idle, total jiffies) and the probe's own CPU time."""
    if before is None or after is None or after[1] <= before[1] or elapsed <= 0:
        return Load(None, None)
    idle_fraction = (after[0] - before[0]) / (after[1] - before[1])
    idle = cores * idle_fraction
    if probe_cpu_seconds is None:
        return Load(idle, None)
    busy = cores * (1.0 - idle_fraction)
    return Load(idle, max(0.0, busy - probe_cpu_seconds / elapsed))


def run_once(
    binary: Path, n: int, *, threads: int | None, timeout: float, trust: TrustContext
) -> tuple[dict[str, Any], Load]:
    """Run the probe once; returns its JSON and how busy the cores were meanwhile."""
    environment = dict(os.environ)
    environment.pop("RAYON_NUM_THREADS", None)
    if threads is not None:
        environment["RAYON_NUM_THREADS"] = str(threads)
    arguments = ["--n", str(n), "--warmup", str(WARMUP), "--runs", str(TIMED_RUNS)]
    before = _read_cpu_times()
    children_before = _children_cpu_seconds()
    started = time.monotonic()
    stdout = run_program(binary, arguments, timeout, trust, environment)
    elapsed = time.monotonic() - started
    after = _read_cpu_times()
    children_after = _children_cpu_seconds()
    probe_cpu = (
        children_after - children_before
        if children_before is not None and children_after is not None
        else None
    )
    load = run_load(before, after, probe_cpu, elapsed, usable_cores())
    return parse_probe_output(stdout), load


def run_program(
    binary: Path,
    arguments: list[str],
    timeout: float,
    trust: TrustContext,
    environment: dict[str, str] | None = None,
) -> str:
    """Run a probe binary (ours, built in the cache) and return what it printed; one line
    saying why where it does not finish or fails."""
    output = run_process(
        binary,
        [Argument(argument) for argument in arguments],  # featcheck's own numbers and flags
        trust=trust,
        cwd=neutral_directory(),
        env=dict(os.environ) if environment is None else environment,
        timeout=timeout,
        what="the probe",
    )
    if output.returncode != 0:
        message = (output.stderr.strip().splitlines() or ["no message"])[-1]
        raise FeatcheckError(f"the probe failed (exit {output.returncode}): {message}")
    return output.stdout


def _average(values: list[float]) -> float | None:
    return sum(values) / len(values) if values else None


def measure(
    binaries: Sequence[Path],
    n: int,
    *,
    cores: int,
    timeout: float,
    say: Callable[[str], None],
    trust: TrustContext,
) -> list[Measurement]:
    """Measure every binary with 1 thread and all threads, rounds interleaved."""
    singles = [_Accumulator() for _ in binaries]
    alls = [_Accumulator() for _ in binaries]
    idles: list[list[float]] = [[] for _ in binaries]
    others: list[list[float]] = [[] for _ in binaries]
    say(
        f"timing {len(binaries) * 2 * ROUNDS} probe runs ({WARMUP} warm-up + {TIMED_RUNS} timed "
        f"matmuls each): RAYON_NUM_THREADS=1, then all {cores} cores"
        + ("" if ROUNDS == 1 else f", {ROUNDS} rounds")
    )
    for _ in range(ROUNDS):
        for index, binary in enumerate(binaries):
            for threads, into in ((1, singles[index]), (None, alls[index])):
                data, load = run_once(binary, n, threads=threads, timeout=timeout, trust=trust)
                into.add(data["matmul"])
                if threads is None:
                    if load.idle_cores is not None:
                        idles[index].append(load.idle_cores)
                    if load.other_cores is not None:
                        others[index].append(load.other_cores)
    results = []
    for single, every, idle, other in zip(singles, alls, idles, others, strict=True):
        single_stats, every_stats = single.stats(1, "1"), every.stats(cores, None)
        assert single_stats is not None and every_stats is not None  # ROUNDS >= 1
        results.append(
            Measurement(
                single_stats,
                every_stats,
                _average(idle),
                _average(other),
            )
        )
    return results


@dataclass(frozen=True)
class TorchStats:
    """PyTorch's matmul, timed the same way in this process."""

    version: str
    threads: int
    stats: RunStats


def measure_torch(torch: ModuleType, n: int) -> TorchStats:
    """Time `a @ b` for n x n float32 tensors: warm-up, then timed runs, min and median."""
    a = torch.rand(n, n, dtype=torch.float32)
    b = torch.rand(n, n, dtype=torch.float32)
    mins: list[float] = []
    medians: list[float] = []
    cpu = wall = 0.0
    for _ in range(ROUNDS):
        for _ in range(WARMUP):
            a @ b
        samples: list[float] = []
        cpu_start, wall_start = time.process_time(), time.perf_counter()
        for _ in range(TIMED_RUNS):
            start = time.perf_counter()
            a @ b
            samples.append((time.perf_counter() - start) * 1e3)
        cpu += time.process_time() - cpu_start
        wall += time.perf_counter() - wall_start
        samples.sort()
        middle = len(samples) // 2
        mins.append(samples[0])
        medians.append(
            samples[middle] if len(samples) % 2 else (samples[middle - 1] + samples[middle]) / 2
        )
    threads = int(torch.get_num_threads())
    return TorchStats(
        str(torch.__version__),
        threads,
        RunStats(threads, min(mins), min(medians), cpu / wall if wall > 0 else None),
    )
