"""Reading the probe's output and timing PyTorch (probe/measure.py)."""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest

from featcheck.errors import FeatcheckError
from featcheck.probe.measure import (
    TIMED_RUNS,
    WARMUP,
    TorchStats,
    cpu_times,
    measure_torch,
    parse_probe_output,
)

PROBE_LINE = {
    "probe": 1,
    "n": 1024,
    "warmup": 3,
    "runs": 20,
    "rayon_num_threads": None,
    "available_parallelism": 2,
    "matmul": {
        "min_ms": 21.4,
        "median_ms": 22.0,
        "wall_ms": 440.0,
        "cpu_ms": 444.0,
        "parallelism": 1.01,
    },
    "mlp": None,
}


def test_parse_probe_output() -> None:
    assert parse_probe_output("noise\n" + json.dumps(PROBE_LINE) + "\n") == PROBE_LINE
    with pytest.raises(FeatcheckError, match="unexpected"):
        parse_probe_output("segfault\n")
    with pytest.raises(FeatcheckError, match="unexpected"):
        parse_probe_output('{"other": 1}')


def test_cpu_times_reads_proc_stat() -> None:
    text = (
        "cpu  100 0 100 800 0 0 0 0 0 0\n"
        "cpu0 50 0 50 400 0 0 0 0 0 0\n"
        "cpu1 50 0 50 300 100 0 0 0 0 0\n"
        "intr 1 2 3\n"
    )
    assert cpu_times(text, None) == (800.0, 1000.0)
    assert cpu_times(text, {1}) == (400.0, 500.0)
    assert cpu_times(text, {7}) is None


def test_measure_torch_the_same_way() -> None:
    calls: list[int] = []

    class Tensor:
        def __matmul__(self, other: Tensor) -> Tensor:
            calls.append(1)
            return self

    fake = SimpleNamespace(
        float32="float32",
        __version__="9.9.9",
        rand=lambda *shape, dtype: Tensor(),
        get_num_threads=lambda: 4,
    )
    result = measure_torch(fake, 1024)  # type: ignore[arg-type]
    assert isinstance(result, TorchStats)
    assert (result.version, result.stats.threads) == ("9.9.9", 4)
    assert len(calls) == WARMUP + TIMED_RUNS
    assert 0 <= result.stats.min_ms <= result.stats.median_ms
