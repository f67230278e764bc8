"""The probe for real: build it against crates/pitb-exec-cpu's lockfile and time it.

The first build compiles ~140 crates (minutes; more on a small machine), so this runs only with
FEATCHECK_SLOW=1. It uses the user's cache directory like any probe: a second run of the suite
starts timing within seconds. It needs the crates in the registry cache or the network.
"""

from __future__ import annotations

import json
import os

import pytest
from conftest import CRATES, run_featcheck

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        os.environ.get("FEATCHECK_SLOW") != "1",
        reason="builds and runs the probe for real (minutes): set FEATCHECK_SLOW=1",
    ),
]


def test_probe_of_the_template_finds_one_core_and_caches_the_build() -> None:
    first = run_featcheck("probe", str(CRATES / "pitb-exec-cpu"), "--format", "json")
    assert first.returncode in (0, 1), first.stderr
    data = json.loads(first.stdout)
    assert (data["member"], data["crate"], data["crate_version"]) == (
        "pitb-exec-cpu",
        "burn-flex",
        "0.22.1",
    )
    assert data["features"] == ["std"]
    assert data["n"] == 1024 and [run["threads"] for run in data["runs"]] == [1, data["cores"]]
    # Built without rayon, gemm cannot keep more than one core busy, however noisy the machine.
    assert data["parallelism"] < 1.15
    assert data["verdict"] in ("single-threaded", "inconclusive"), data["reason"]
    assert first.returncode == (1 if data["verdict"] == "single-threaded" else 0)

    second = run_featcheck("probe", str(CRATES / "pitb-exec-cpu"), "--format", "json")
    again = json.loads(second.stdout)
    assert again["build"]["cached"] is True
    assert again["build"]["key"] == data["build"]["key"]
    assert again["build"]["seconds"] < 10
