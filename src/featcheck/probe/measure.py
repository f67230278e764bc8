"""Running the probe's programs: the one timing loop every probe goes through.

The binaries run in turn, so that a burst of load elsewhere hits them alike: each matmul build
once with `RAYON_NUM_THREADS=1` and once with it unset (1, all, 1, all), a rule's two builds
`runs` times each (current, fixed, current, ...). While a program runs, /proc/stat tells how
many of this process's cores stayed idle and, less the program's own CPU time (getrusage of the
child), how many other processes kept busy (Linux only): the matmul's timings are marked as
measured under load from that. The matmul's per-thread CPU times come back in its JSON line
(verdict.ThreadEvidence); a rule program prints `name<TAB>median ms<TAB>result` per workload.
"""

from __future__ import annotations

import json
import os
import statistics
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

from featcheck.boundary import TrustContext
from featcheck.cargo.argv_gate import Argument
from featcheck.cargo.process import NEUTRAL_DIRECTORY, start_process
from featcheck.errors import FeatcheckError
from featcheck.probe.verdict import Decision, Load, RunStats, ThreadEvidence, decide

if sys.platform != "win32":
    import resource

WARMUP = 2
TIMED_RUNS = 10
"""2 + 10 in one round, not the published 3 + 20 best of two: a cached probe's verdict within
about 10 s on a loaded 2-core machine, and one round shows which threads did the work."""

RULE_RUNS = 5
"""Runs of each rule probe's two builds, in turn; each run prints its workloads' medians."""

Setting = Mapping[str, str | None]
"""Environment variables set (a value) or unset (None) for a run; the rest is this process's."""


def _usable_cpu_ids() -> set[int] | None:
    try:
        return set(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # a platform without affinity masks
        return None


def usable_cores() -> int:
    """Cores this process may run on (its affinity mask where the platform has one)."""
    cpus = _usable_cpu_ids()
    return len(cpus) if cpus is not None else os.cpu_count() or 1


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
        if (cpus is not None and number not in cpus) or len(values) < 4:
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


def _children_cpu_seconds() -> float:
    """CPU time of the waited-for children of this process so far; 0 on Windows, which has no
    /proc/stat either, so that no run's load is measured there."""
    if sys.platform == "win32":
        return 0.0
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


def _run_once(
    binary: Path, arguments: list[str], setting: Setting, timeout: float, trust: TrustContext
) -> tuple[str, Load]:
    """Run a probe binary (ours, built in the cache) once: what it printed, and how busy the
    cores were meanwhile; one line saying why where it does not finish or fails."""
    environment = {name: value for name, value in os.environ.items() if name not in setting}
    environment |= {name: value for name, value in setting.items() if value is not None}
    before, children_before = _read_cpu_times(), _children_cpu_seconds()
    started = time.monotonic()
    output = start_process(
        binary,
        [Argument(argument) for argument in arguments],  # featcheck's own numbers and flags
        trust=trust,
        cwd=NEUTRAL_DIRECTORY,
        env=environment,
        timeout=timeout,
        what="the probe",
    ).wait()
    elapsed = time.monotonic() - started
    after, children_after = _read_cpu_times(), _children_cpu_seconds()
    if output.returncode != 0:
        message = (output.stderr.strip().splitlines() or ["no message"])[-1]
        raise FeatcheckError(f"the probe failed (exit {output.returncode}): {message}")
    probe_cpu = children_after - children_before
    return output.stdout, run_load(before, after, probe_cpu, elapsed, usable_cores())


def run_in_turn(
    binaries: Sequence[Path],
    arguments: list[str],
    settings: Sequence[Setting],
    *,
    runs: int,
    timeout: float,
    trust: TrustContext,
) -> list[list[tuple[str, Load]]]:
    """Per binary, what each of its runs printed and how busy the cores were meanwhile."""
    outputs: list[list[tuple[str, Load]]] = [[] for _ in binaries]
    for _ in range(runs):
        for binary, into in zip(binaries, outputs, strict=True):
            for setting in settings:
                into.append(_run_once(binary, arguments, setting, timeout, trust))
    return outputs


# --- the matmul: one verdict per build --------------------------------------------------------


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


def _run_stats(stdout: str, threads: int, rayon: str | None) -> RunStats:
    workload = parse_probe_output(stdout)["matmul"]
    wall_ms, cpu_ms = float(workload["wall_ms"]), workload.get("cpu_ms")
    return RunStats(
        threads,
        float(workload["min_ms"]),
        float(workload["median_ms"]),
        float(cpu_ms) / wall_ms if cpu_ms is not None and wall_ms > 0 else None,
        rayon,
        ThreadEvidence.from_probe(workload.get("threads")),
    )


def measure(
    binaries: Sequence[Path],
    n: int,
    *,
    cores: int,
    timeout: float,
    say: Callable[[str], None],
    trust: TrustContext,
) -> list[Decision]:
    say(
        f"timing {len(binaries) * 2} probe runs ({WARMUP} warm-up + {TIMED_RUNS} timed "
        f"matmuls each): RAYON_NUM_THREADS=1, then all {cores} cores"
    )
    arguments = ["--n", str(n), "--warmup", str(WARMUP), "--runs", str(TIMED_RUNS)]
    settings = ({"RAYON_NUM_THREADS": "1"}, {"RAYON_NUM_THREADS": None})
    outputs = run_in_turn(binaries, arguments, settings, runs=1, timeout=timeout, trust=trust)
    return [
        decide(_run_stats(single, 1, "1"), _run_stats(every, cores, None), cores, load, n=n)
        for (single, _), (every, load) in outputs
    ]


TORCH_NOTE = (
    "PyTorch runs with its default threads: torch.set_num_threads does not govern BLAS "
    "backends such as Accelerate, so its row is not limited like RAYON_NUM_THREADS=1"
)


@dataclass(frozen=True)
class TorchStats:
    """PyTorch's matmul, timed the same way in this process."""

    version: str
    stats: RunStats


def measure_torch(torch: ModuleType, n: int) -> TorchStats:
    a = torch.rand(n, n, dtype=torch.float32)
    b = torch.rand(n, n, dtype=torch.float32)
    for _ in range(WARMUP):
        a @ b
    samples: list[float] = []
    cpu_start, wall_start = time.process_time(), time.perf_counter()
    for _ in range(TIMED_RUNS):
        start = time.perf_counter()
        a @ b
        samples.append((time.perf_counter() - start) * 1e3)
    cpu, wall = time.process_time() - cpu_start, time.perf_counter() - wall_start
    threads = int(torch.get_num_threads())
    return TorchStats(
        str(torch.__version__),
        RunStats(threads, min(samples), statistics.median(samples), cpu / wall if wall else None),
    )


# --- a rule's two builds: one ratio per workload ----------------------------------------------


@dataclass(frozen=True)
class Workload:
    """One hot path of a rule's program, in both builds: medians over the runs, in ms."""

    name: str
    current_ms: float
    fixed_ms: float

    @property
    def ratio(self) -> float:
        """How many times slower the member's build is (below 1: faster)."""
        return self.current_ms / self.fixed_ms if self.fixed_ms > 0 else float("inf")


def compare_builds(
    binaries: Sequence[Path], *, timeout: float, trust: TrustContext
) -> tuple[tuple[Workload, ...], bool]:
    """Every workload's median of the runs' medians, and whether both builds computed the same."""
    samples: list[dict[str, list[float]]] = [{}, {}]
    results: list[dict[str, str]] = [{}, {}]
    outputs = run_in_turn(binaries, [], ({},), runs=RULE_RUNS, timeout=timeout, trust=trust)
    for index, build_outputs in enumerate(outputs):
        for stdout, _ in build_outputs:
            for line in stdout.splitlines():  # `name<TAB>median ms<TAB>result` per workload
                name, _, rest = line.partition("\t")
                text, _, result = rest.partition("\t")
                try:
                    samples[index].setdefault(name, []).append(float(text))
                except ValueError:
                    message = f"the probe printed an unexpected line: {line[:80]!r}"
                    raise FeatcheckError(message) from None
                results[index][name] = result
    workloads = tuple(
        Workload(name, statistics.median(times), statistics.median(samples[1].get(name, [0.0])))
        for name, times in samples[0].items()
    )
    return workloads, results[0] == results[1]
