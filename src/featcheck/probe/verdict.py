"""From the probe's runs to a verdict: does the member's matmul run on one thread or on many?
README ("Measuring it on this machine", Verdict) says how it decides.

The verdict rests on structure: where the all-core run's CPU time went, thread by thread
(threads.rs in the probe crate), which shows under any load. The timings (the 1-thread run's
minimum over the all-core run's, the speedup; CPU over wall time, the parallelism) are the
second evidence: a speedup needs idle cores to show, so they are marked as measured under load,
and load never turns a clear structural answer into `inconclusive`.

Where threads cannot be observed, the timing thresholds below apply (chosen for a small, shared,
noisy machine; tested on 2 cores with a load average around 4): one computing thread plus an
idle pool cannot exceed a parallelism of ~1.05; a parallel gemm on 2 free cores reaches 1.6-2.0
and a speedup of 1.5-1.9x. On a busy machine a parallel build would look single-threaded,
hence `MIN_IDLE_CORES`.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from featcheck.severity import plural

MULTI_PARALLELISM = 1.3
"""All-core parallelism at or above which the matmul certainly ran on several threads."""
MULTI_SPEEDUP = 1.2
"""...together with at least this speedup over the 1-thread run."""
SINGLE_PARALLELISM = 1.15
"""All-core parallelism below which the matmul ran on (about) one core."""
SINGLE_SPEEDUP = 1.1
"""...together with less than this speedup over the 1-thread run."""
MIN_IDLE_CORES = 0.5
"""Idle cores (on average) the all-core run must have left for a timing-only `single-threaded`."""
LOADED_CORES = 0.5
"""Cores kept busy by other processes from which the timings count as measured under load."""
PARALLEL_THRESHOLD = 192**3
"""burn-flex hands gemm `Parallelism::Rayon` only from m*n*k >= 192^3 (src/ops/matmul.rs)."""
USED_FRACTION = 0.1
"""A thread took part in the work when it ran at least this share of the busiest thread's time."""
MIN_OBSERVED_MS = 50.0
"""Per-thread evidence below this much CPU time in all is too little to judge."""
THREAD_METHODS = {
    "linux-schedstat-1": "/proc/self/task/<tid>/schedstat (time on CPU, nanoseconds)",
    "linux-stat-1": "/proc/self/task/<tid>/stat (utime + stime, clock ticks)",
}
"""The probe crate's per-thread methods (threads.rs); a new method gets a new name."""
COSTS_FROM = 1.10
"""The ratio from which a finding counts as costing speed here (exit code 1)."""


class Verdict(str, enum.Enum):
    SINGLE = "single-threaded"
    MULTI = "multi-threaded"
    INCONCLUSIVE = "inconclusive"


@dataclass(frozen=True)
class ThreadEvidence:
    """CPU time per thread of the probe process over a workload's timed loops."""

    method: str
    main_ms: float
    """The thread that called the workload (the probe's main thread)."""
    others_ms: tuple[float, ...]
    """Every other thread that ran, busiest first."""
    alive: int
    """Threads the process had (including idle ones)."""

    @classmethod
    def from_probe(cls, data: object) -> ThreadEvidence | None:
        """The `threads` object of the probe's JSON; None for `null` or anything malformed."""
        if not isinstance(data, dict) or data.get("method") not in THREAD_METHODS:
            return None
        try:
            main = float(data["main_ms"])
            others = tuple(sorted((float(v) for v in data["others_ms"]), reverse=True))
            alive = int(data["alive"])
        except (KeyError, TypeError, ValueError):
            return None
        if main < 0 or any(v < 0 for v in others):
            return None
        return cls(str(data["method"]), main, others, alive)

    @property
    def total_ms(self) -> float:
        return self.main_ms + sum(self.others_ms)

    def _share(self, ms: float) -> float:
        return ms / self.total_ms if self.total_ms > 0 else 0.0

    @property
    def main_share(self) -> float:
        """The main thread's share of the CPU time (1.0: it did all the work)."""
        return self._share(self.main_ms)

    @property
    def shares(self) -> tuple[float, ...]:
        """Shares of the threads that took part (see USED_FRACTION), busiest first."""
        times = sorted((self.main_ms, *self.others_ms), reverse=True)
        busiest = times[0]
        return tuple(
            self._share(ms) for ms in times if busiest > 0 and ms >= USED_FRACTION * busiest
        )

    @property
    def threads_used(self) -> int:
        return len(self.shares)

    @property
    def observed(self) -> bool:
        return self.total_ms >= MIN_OBSERVED_MS

    def describe(self) -> str:
        """'2 threads did the work (51%, 49% of the CPU time; main thread 0%)'."""
        shares = self.shares
        listed = ", ".join(f"{share:.0%}" for share in shares)
        if len(shares) == 1:
            who = "the main thread" if self.main_share >= shares[0] else "one pool thread"
            return f"one thread did the work ({who}: {listed} of the CPU time)"
        return (
            f"{len(shares)} threads did the work ({listed} of the CPU time; main thread "
            f"{self.main_share:.0%})"
        )


@dataclass(frozen=True)
class RunStats:
    """One configuration's timings and its effective parallelism."""

    threads: int
    """The rayon pool size: 1, or the number of cores available for the all-core run."""
    min_ms: float
    median_ms: float
    parallelism: float | None
    """CPU time / wall time over the timed loops; None where the CPU clock is unavailable."""
    rayon_num_threads: str | None = None
    """RAYON_NUM_THREADS as the run saw it (None: unset)."""
    thread_evidence: ThreadEvidence | None = None
    """CPU time per thread over the timed loops; None where threads cannot be observed."""


@dataclass(frozen=True)
class Load:
    """How busy the usable cores were while a run ran, or the all-core runs on average (None:
    not measurable)."""

    idle_cores: float | None = None
    """Cores that stayed idle, on average."""
    other_cores: float | None = None
    """Cores kept busy by processes other than the probe, on average."""

    @property
    def loaded(self) -> bool:
        return self.other_cores is not None and self.other_cores >= LOADED_CORES


@dataclass(frozen=True)
class Decision:
    """The verdict, the runs it rests on, and a sentence saying why."""

    verdict: Verdict
    reason: str
    speedup: float
    single: RunStats
    every: RunStats
    load: Load
    """How busy the cores were during the all-core run."""
    basis: str = "timing"
    """What the verdict rests on: "threads" (per-thread CPU time), "timing", or "none"."""


def decide(
    single: RunStats, every: RunStats, cores: int, load: Load = Load(), *, n: int = 1024
) -> Decision:
    speedup = single.min_ms / every.min_ms if every.min_ms > 0 else 0.0
    parallelism, evidence = every.parallelism, every.thread_evidence
    other_cores = load.other_cores
    busy = "" if parallelism is None else f"{parallelism:.2f} cores busy, "
    timing = f"{busy}{speedup:.2f}x the 1-thread run"
    if load.loaded and other_cores is not None:
        timing += (
            f", measured under load: other processes kept {other_cores:.1f} of {cores} cores busy"
        )
    # Inconclusive whatever the runs show: one core, or a matmul too small to split.
    verdict, basis = Verdict.INCONCLUSIVE, "none"
    if cores < 2:
        reason = (
            "only one core is available to this process, so one thread and all threads are the "
            "same; run the probe where it may use several cores"
        )
    elif n**3 < PARALLEL_THRESHOLD:
        reason = (
            f"a {n}x{n} matmul is below burn-flex's parallel threshold (m*n*k >= 192^3), so "
            "gemm runs it on one thread whatever the build; probe with --n 192 or more"
        )
    else:
        verdict, reason, basis = _by_threads(evidence, timing) or _by_timing(
            evidence, parallelism, speedup, cores, load, timing
        )
    return Decision(verdict, reason, speedup, single, every, load, basis)


_Outcome = tuple[Verdict, str, str]
"""A verdict, the sentence saying why, and what it rests on."""


def _by_threads(evidence: ThreadEvidence | None, timing: str) -> _Outcome | None:
    if evidence is None or not evidence.observed:
        return None
    many = evidence.threads_used >= 2
    how = (
        f"splits the matmul across threads: {evidence.describe()}"
        if many
        else f"runs the matmul on one thread: {evidence.describe()}, with "
        f"{plural(evidence.alive, 'thread')} in the process"
    )
    return Verdict.MULTI if many else Verdict.SINGLE, f"gemm {how}; timing: {timing}", "threads"


def _by_timing(
    evidence: ThreadEvidence | None,
    parallelism: float | None,
    speedup: float,
    cores: int,
    load: Load,
    timing: str,
) -> _Outcome:
    """The verdict where threads were not observed: the timings alone, with their thresholds."""
    unseen = (
        "threads were not observed on this platform"
        if evidence is None
        else f"too little CPU time was observed per thread ({evidence.total_ms:.0f} ms)"
    )
    if parallelism is None:
        return (
            Verdict.INCONCLUSIVE,
            f"{unseen}, and this platform gives the probe no process CPU clock, so its "
            "parallelism is unknown",
            "none",
        )
    idle = load.idle_cores
    if parallelism >= MULTI_PARALLELISM and speedup >= MULTI_SPEEDUP:
        return Verdict.MULTI, f"the all-core run used several cores ({timing}; {unseen})", "timing"
    busy = idle is not None and idle < MIN_IDLE_CORES
    if parallelism < SINGLE_PARALLELISM and speedup < SINGLE_SPEEDUP and not busy:
        room = f", with {idle:.2f} cores left idle" if idle is not None else ""
        return (
            Verdict.SINGLE,
            f"the all-core run kept one core busy and was no faster ({timing}{room}; {unseen}): "
            "gemm runs on one core",
            "timing",
        )
    if busy and idle is not None:
        why = (
            f"the other cores were busy with other processes (only {idle:.2f} of {cores} cores "
            f"idle during the all-core run), so a parallel gemm could not show itself in the "
            "timings"
        )
    elif parallelism >= MULTI_PARALLELISM:
        why = f"the all-core run used several cores but was not {MULTI_SPEEDUP}x faster"
    elif parallelism < SINGLE_PARALLELISM:
        why = "the all-core run was faster without using more CPU; the timings vary more"
    else:
        why = (
            f"{parallelism:.2f} cores busy lies between {SINGLE_PARALLELISM} (one core) and "
            f"{MULTI_PARALLELISM} (several)"
        )
    return (
        Verdict.INCONCLUSIVE,
        f"{unseen}, and the timings do not settle it: {why} ({timing})",
        "none",
    )
