"""From timings and per-thread CPU time to a verdict (probe/verdict.py)."""

from __future__ import annotations

from dataclasses import replace

import pytest
from probe_support import runs

from featcheck.probe.verdict import (
    PARALLEL_THRESHOLD,
    Decision,
    Load,
    ThreadEvidence,
    Verdict,
    decide,
)


@pytest.mark.parametrize(
    ("single_ms", "all_ms", "parallelism", "idle", "verdict", "words"),
    [
        # The published case: no rayon, one core whatever RAYON_NUM_THREADS says.
        (21.4, 21.6, 1.01, 0.95, Verdict.SINGLE, "gemm runs on one core"),
        # Unknown idle time (not Linux): the timings alone decide.
        (21.4, 21.6, 1.01, None, Verdict.SINGLE, "one core busy"),
        # rayon on two free cores.
        (21.6, 12.0, 1.85, 0.05, Verdict.MULTI, "several cores"),
        # Exactly at the thresholds counts as multi-threaded.
        (24.0, 20.0, 1.3, 0.0, Verdict.MULTI, "several cores"),
        # One core busy and no faster, but the other core was taken: cannot tell.
        (21.4, 21.5, 1.0, 0.1, Verdict.INCONCLUSIVE, "other cores were busy"),
        # Several cores busy but not faster: contention.
        (21.4, 20.0, 1.6, None, Verdict.INCONCLUSIVE, "not 1.2x faster"),
        # Faster on one core while the other was taken: the busy cores are the reason.
        (30.0, 21.4, 1.02, 0.2, Verdict.INCONCLUSIVE, "other cores were busy"),
        # Faster without more CPU: timing noise.
        (30.0, 21.4, 1.02, 0.9, Verdict.INCONCLUSIVE, "without using more CPU"),
        # Between the two parallelism thresholds.
        (21.4, 21.0, 1.2, 0.9, Verdict.INCONCLUSIVE, "between 1.15"),
        # Just at the single-threaded limits: not single.
        (22.0, 20.0, 1.15, 0.9, Verdict.INCONCLUSIVE, "do not settle it"),
    ],
)
def test_verdict_thresholds(
    single_ms: float,
    all_ms: float,
    parallelism: float,
    idle: float | None,
    verdict: Verdict,
    words: str,
) -> None:
    """Without per-thread evidence (threads not observable) the timings decide alone."""
    single, every = runs(single_ms, all_ms, parallelism)
    decision = decide(single, every, cores=2, load=Load(idle))
    assert decision.verdict is verdict, decision.reason
    assert words in decision.reason
    assert "threads were not observed on this platform" in decision.reason
    assert decision.basis == ("none" if verdict is Verdict.INCONCLUSIVE else "timing")
    assert decision.speedup == pytest.approx(single_ms / all_ms)


def _evidence(main_ms: float, *others_ms: float, alive: int = 3) -> ThreadEvidence:
    return ThreadEvidence("linux-schedstat-1", main_ms, tuple(others_ms), alive)


@pytest.mark.parametrize(
    ("single_ms", "all_ms", "parallelism", "other_cores", "evidence", "verdict", "words"),
    [
        # No rayon on a busy machine: the timings alone would say "inconclusive".
        (42.0, 42.5, 1.0, 1.9, _evidence(880.0, alive=1), Verdict.SINGLE, "main thread: 100%"),
        # An idle pool exists but the main thread does the matmul.
        (42.0, 41.0, 1.0, 0.0, _evidence(880.0, 0.4, alive=3), Verdict.SINGLE, "one thread"),
        # rayon on a busy machine: no speedup, but two workers shared the work.
        (
            42.0,
            41.5,
            0.98,
            1.0,
            _evidence(3.0, 450.0, 420.0),
            Verdict.MULTI,
            "2 threads did the work (52%, 48%",
        ),
        # rayon on a quiet machine: the timing agrees.
        (42.0, 22.0, 1.9, 0.0, _evidence(2.0, 420.0, 410.0), Verdict.MULTI, "1.91x"),
        # One pool worker did it all (RAYON_NUM_THREADS=1 in effect): one thread.
        (42.0, 42.0, 1.0, 0.0, _evidence(1.0, 870.0), Verdict.SINGLE, "one pool thread"),
    ],
)
def test_verdict_rests_on_the_threads_whatever_the_load(
    single_ms: float,
    all_ms: float,
    parallelism: float,
    other_cores: float,
    evidence: ThreadEvidence,
    verdict: Verdict,
    words: str,
) -> None:
    single, every = runs(single_ms, all_ms, parallelism)
    every = replace(every, thread_evidence=evidence)
    decision = decide(single, every, cores=2, load=Load(0.0, other_cores))
    assert decision.verdict is verdict, decision.reason
    assert decision.basis == "threads"
    assert words in decision.reason
    loaded = other_cores >= 0.5
    assert decision.load.loaded is loaded
    assert ("measured under load" in decision.reason) is loaded


def test_thread_evidence_from_the_probe() -> None:
    raw = {"method": "linux-schedstat-1", "main_ms": 2.0, "others_ms": [40.0, 60.0], "alive": 3}
    first = ThreadEvidence.from_probe(raw)
    assert first == _evidence(2.0, 60.0, 40.0)
    assert first.threads_used == 2 and first.shares == pytest.approx((60 / 102, 40 / 102))
    assert first.main_share == pytest.approx(2 / 102)
    for bad in (
        None,
        {},
        {**raw, "method": "guess"},
        {**raw, "main_ms": "x"},
        {**raw, "main_ms": -1},
    ):
        assert ThreadEvidence.from_probe(bad) is None
    assert _evidence(10.0).observed is False  # under MIN_OBSERVED_MS: too little to judge


def test_too_little_observed_cpu_time_falls_back_to_the_timings() -> None:
    single, every = runs(21.4, 21.5, 1.0)
    every = replace(every, thread_evidence=_evidence(10.0))
    decision = decide(single, every, cores=2, load=Load(0.0))
    assert decision.verdict is Verdict.INCONCLUSIVE
    assert "too little CPU time was observed per thread (10 ms)" in decision.reason


def test_one_core_is_inconclusive_and_says_so() -> None:
    single, every = runs(21.4, 21.4, 1.0, cores=1)
    decision = decide(single, every, cores=1, load=Load(0.0))
    assert decision.verdict is Verdict.INCONCLUSIVE
    assert "only one core" in decision.reason


def test_no_cpu_clock_is_inconclusive() -> None:
    single, every = runs(21.4, 10.0, None)
    decision = decide(single, every, cores=8)
    assert decision.verdict is Verdict.INCONCLUSIVE
    assert "CPU clock" in decision.reason


def test_n_below_the_parallel_threshold_is_inconclusive() -> None:
    assert PARALLEL_THRESHOLD == 192**3
    single, every = runs(0.3, 0.3, 1.0)
    every = replace(every, thread_evidence=_evidence(300.0))
    decision = decide(single, every, cores=2, n=191)
    assert decision.verdict is Verdict.INCONCLUSIVE
    assert "below burn-flex's parallel threshold" in decision.reason
    assert decide(single, every, cores=2, n=192).verdict is Verdict.SINGLE


def test_decision_is_a_plain_record() -> None:
    single, every = runs(20.0, 11.0, 1.9)
    decision = Decision(Verdict.MULTI, "why", 1.8, single, every, Load())
    assert decision.verdict.value == "multi-threaded"
