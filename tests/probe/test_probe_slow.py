"""The probe for real: build it against crates/pitb-exec-cpu's lockfile and time it.

The first build compiles ~125 crates (minutes; more on a small machine), so this runs only with
FEATCHECK_SLOW=1. It uses the user's cache directory like any probe: a second run of the suite
starts timing within seconds. It needs the crates in the registry cache or the network.
"""

from __future__ import annotations

import json
import os

import pytest
from support import CRATES, run_featcheck

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        os.environ.get("FEATCHECK_SLOW") != "1",
        reason="builds and runs the probe for real (minutes): set FEATCHECK_SLOW=1",
    ),
]


def test_probe_of_the_template_finds_one_thread_and_caches_the_build() -> None:
    first = run_featcheck("probe", str(CRATES / "pitb-exec-cpu"), "--format", "json", "--yes")
    assert first.returncode == 1, first.stderr
    data = json.loads(first.stdout)
    assert (data["member"], data["crate"], data["crate_version"]) == (
        "pitb-exec-cpu",
        "burn-flex",
        "0.22.1",
    )
    assert data["features"] == ["std"]
    assert data["n"] == 1024 and [run["threads"] for run in data["runs"]] == [1, data["cores"]]
    # Built without rayon, gemm does all of the matmul on the main thread, whatever the load.
    assert data["verdict"] == "single-threaded", data["reason"]
    assert data["basis"] == "threads" and data["threads_used"] == 1
    assert data["main_thread_share"] > 0.95
    assert "mlp" not in data["runs"][1]  # burn-flex alone: no MLP step (schema 2)
    assert [p["name"] for p in data["pins"]][-1] == "burn-backend"

    second = run_featcheck("probe", str(CRATES / "pitb-exec-cpu"), "--format", "json")
    assert second.returncode == 1, second.stderr  # cached: no --yes needed, nothing compiled
    again = json.loads(second.stdout)
    assert again["build"]["cached"] is True
    assert again["build"]["key"] == data["build"]["key"]
    assert again["build"]["seconds"] < 10


def test_probe_of_the_rayon_crate_finds_several_threads() -> None:
    result = run_featcheck("probe", str(CRATES / "pitb-exec-cpu-simd"), "--format", "json", "--yes")
    data = json.loads(result.stdout)
    if data["cores"] < 2:
        pytest.skip("one core: inconclusive by design")
    assert result.returncode == 0, result.stderr
    assert "rayon" in data["features"]
    assert data["verdict"] == "multi-threaded", data["reason"]
    # The pool's workers do the bulk; the calling thread keeps ~11% (measured on 2 cores).
    assert data["threads_used"] >= 2 and data["main_thread_share"] < 0.5
