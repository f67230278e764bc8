"""From two timed runs of the probe to a verdict: does the matmul run on one core or on many?

The probe runs the same binary twice (twice each, alternating, to spread interference):

- with `RAYON_NUM_THREADS=1`, the single-thread baseline;
- with `RAYON_NUM_THREADS` unset, so that rayon's pool (if gemm uses it) gets every core.

Two measurements decide, and both must agree:

- **parallelism** of the all-core run: process CPU time (all threads) over wall time across the
  timed loop. A program that computes on one thread cannot exceed ~1.0, whatever the load on the
  machine, so a value well above 1 proves threads; a value near 1 alone proves nothing on a busy
  machine (the other cores may simply have been taken).
- **speedup**: the 1-thread run's minimum over the all-core run's minimum. The minimum is the
  run least disturbed by other processes.

Thresholds (chosen for a small, shared, noisy machine; tested on 2 cores with a load average
around 4):

- `multi-threaded`: parallelism >= 1.3 and speedup >= 1.2. On 2 cores a parallel gemm reaches
  1.6-2.0 and 1.5-1.9x when the cores are free; 1.3 leaves room for a busy machine, and is far
  above what one computing thread plus an idle pool can show (<= 1.05).
- `single-threaded`: parallelism < 1.15 and speedup < 1.1, **and** the other cores had room: on
  Linux the probe reads /proc/stat while the all-core run runs, and at least 0.5 of a core (of
  those this process may use) must have stayed idle. Without that room a parallel build would
  look single-threaded too, so the verdict is then `inconclusive`, saying so.
- `inconclusive` otherwise, with the reason: only one core available, no CPU clock on this
  platform, the other cores busy, or the two measurements disagreeing (timing noise).

The 10% speedup margin is the run-to-run spread of the minimum on a busy machine; gemm on one
core against the same on one core never differs by more when the machine is quiet.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

MULTI_PARALLELISM = 1.3
"""All-core parallelism at or above which the matmul certainly ran on several threads."""
MULTI_SPEEDUP = 1.2
"""...together with at least this speedup over the 1-thread run."""
SINGLE_PARALLELISM = 1.15
"""All-core parallelism below which the matmul ran on (about) one core."""
SINGLE_SPEEDUP = 1.1
"""...together with less than this speedup over the 1-thread run."""
MIN_IDLE_CORES = 0.5
"""Idle cores (on average) the all-core run must have left for `single-threaded` to count."""
PARALLEL_THRESHOLD = 192**3
"""burn-flex hands gemm `Parallelism::Rayon` only from m*n*k >= 192^3 (src/ops/matmul.rs)."""
MIN_WORK = 10 * PARALLEL_THRESHOLD
"""The probe refuses a smaller n^3: too little of the work would be parallel to tell."""


class Verdict(str, enum.Enum):
    """What the probe concluded."""

    SINGLE = "single-threaded"
    MULTI = "multi-threaded"
    INCONCLUSIVE = "inconclusive"


@dataclass(frozen=True)
class RunStats:
    """One configuration's timings (best over rounds) and its effective parallelism."""

    threads: int
    """The rayon pool size: 1, or the number of cores available for the all-core run."""
    min_ms: float
    median_ms: float
    parallelism: float | None
    """CPU time / wall time over the timed loops; None where the CPU clock is unavailable."""
    rayon_num_threads: str | None = None
    """RAYON_NUM_THREADS as the run saw it (None: unset)."""


@dataclass(frozen=True)
class Decision:
    """The verdict, the numbers it rests on, and a sentence saying why."""

    verdict: Verdict
    reason: str
    speedup: float
    parallelism: float | None
    idle_cores: float | None


def check_n(n: int) -> None:
    """Raise ValueError when n x n is too small a matmul to tell one core from many."""
    if n < 1:
        raise ValueError(f"--n {n}: expected a positive integer")
    if n**3 < MIN_WORK:
        raise ValueError(
            f"--n {n} is too small: n^3 = {n**3:,} is below 10 x 192^3 = {MIN_WORK:,}; burn-flex "
            "parallelises a matmul only from m*n*k >= 192^3, and the probe needs well above that "
            "to tell one core from many (use n >= 414)"
        )


def decide(
    single: RunStats, every: RunStats, cores: int, idle_cores: float | None = None
) -> Decision:
    """The verdict for a 1-thread run and an all-core run on `cores` usable cores.

    `idle_cores`: average idle cores (of those usable) during the all-core run, None when the
    platform cannot tell (then a single-threaded verdict rests on the timings alone).
    """
    speedup = single.min_ms / every.min_ms if every.min_ms > 0 else 0.0
    parallelism = every.parallelism

    def decision(verdict: Verdict, reason: str) -> Decision:
        return Decision(verdict, reason, speedup, parallelism, idle_cores)

    if cores < 2:
        return decision(
            Verdict.INCONCLUSIVE,
            "only one core is available to this process, so one thread and all threads are the "
            "same; run the probe where it may use several cores",
        )
    if parallelism is None:
        return decision(
            Verdict.INCONCLUSIVE,
            "this platform gives the probe no process CPU clock, so its parallelism is unknown",
        )
    numbers = f"{parallelism:.2f} cores busy, {speedup:.2f}x the 1-thread run"
    if parallelism >= MULTI_PARALLELISM and speedup >= MULTI_SPEEDUP:
        return decision(Verdict.MULTI, f"the all-core run used several cores ({numbers})")
    busy = idle_cores is not None and idle_cores < MIN_IDLE_CORES
    if parallelism < SINGLE_PARALLELISM and speedup < SINGLE_SPEEDUP and not busy:
        room = f", with {idle_cores:.2f} cores left idle" if idle_cores is not None else ""
        return decision(
            Verdict.SINGLE,
            f"the all-core run kept one core busy and was no faster ({numbers}{room}): "
            "gemm runs on one core",
        )
    if busy:
        why = (
            f"noise too high: the other cores were busy with other processes (only "
            f"{idle_cores:.2f} of {cores} cores idle during the all-core run), so a parallel "
            f"gemm could not show itself ({numbers}); run the probe again when the machine "
            "is quieter"
        )
    elif parallelism >= MULTI_PARALLELISM:
        why = (
            f"noise too high: the all-core run used several cores but was not {MULTI_SPEEDUP}x "
            f"faster ({numbers}); other processes compete for the cores"
        )
    elif parallelism < SINGLE_PARALLELISM:
        why = (
            f"noise too high: the all-core run was faster without using more CPU ({numbers}); "
            "the timings vary more than the difference"
        )
    else:
        why = (
            f"noise too high: {parallelism:.2f} cores busy lies between {SINGLE_PARALLELISM} "
            f"(one core) and {MULTI_PARALLELISM} (several), {speedup:.2f}x the 1-thread run"
        )
    return decision(Verdict.INCONCLUSIVE, why)
