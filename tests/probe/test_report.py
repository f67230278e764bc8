"""The probe's report: its JSON schema (probe/schema.py) and its text (probe/report.py)."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

from probe_support import CONFIG, runs

from featcheck.probe.build import BuildPlan
from featcheck.probe.command import MatmulReport, VariantResult
from featcheck.probe.measure import TorchStats
from featcheck.probe.member import ProbeReport
from featcheck.probe.report import text_lines
from featcheck.probe.resolve import BackendConfig, Pin
from featcheck.probe.schema import render_json, report_json
from featcheck.probe.verdict import Load, RunStats, Verdict, decide


def _variant(config: BackendConfig, single_ms: float, all_ms: float, par: float) -> VariantResult:
    single, every = runs(single_ms, all_ms, par)
    return VariantResult(
        BuildPlan(config, Path("probe"), "0123456789abcdef", cached=False, seconds=301.0),
        decide(single, every, 2, Load(0.9)),
    )


def _report(compare: bool) -> MatmulReport:
    fixed_config = replace(
        CONFIG, pins=(Pin("burn-flex", "0.22.1", ("rayon", "std")),), label="with featcheck's fix"
    )
    return MatmulReport(
        n=1024,
        cores=2,
        current=_variant(CONFIG, 21.4, 21.6, 1.01),
        fixed=_variant(fixed_config, 21.6, 11.8, 1.9) if compare else None,
        compare=compare,
        torch=TorchStats("2.5.0", RunStats(2, 0.8, 0.9, 1.9)) if compare else None,
        fix_description='FC001: add "rayon" to the features of burn' if compare else None,
    )


def test_json_schema() -> None:
    data = json.loads(render_json(ProbeReport("app", "x86_64", _report(False), None)))
    # 2: no MLP step (the matmul builds on burn-flex alone), burn-backend among the pins.
    assert data["version"] == 2 and data["tool"]["name"] == "featcheck"
    assert (data["kind"], data["rules"]) == ("matmul", None)
    for key, kind in {
        "verdict": str,
        "reason": str,
        "parallelism": float,
        "speedup": float,
        "cores": int,
        "n": int,
        "runs": list,
        "crate": str,
        "crate_version": str,
        "features": list,
        "member": str,
        "target": str,
        "pins": list,
        "build": dict,
    }.items():
        assert isinstance(data[key], kind), key
    assert data["verdict"] in {v.value for v in Verdict}
    for run in data["runs"]:
        assert set(run) >= {"threads", "min_ms", "median_ms", "parallelism"}
        assert "mlp" not in run
    assert "variants" not in data

    compared = report_json(_report(compare=True))
    rows = compared["variants"]
    assert [row["label"] for row in rows] == ["current", "with featcheck's fix", "PyTorch 2.5.0"]
    assert rows[0]["vs_current"] == 1.0
    assert rows[1]["verdict"] == "multi-threaded" and rows[1]["fix"].startswith("FC001")
    assert rows[2]["min_ms"] == 0.8 and "Accelerate" in rows[2]["note"]


def test_text_report_plain_and_fancy() -> None:
    plain = "\n".join(text for text, _ in text_lines(_report(compare=True), fancy=False))
    assert "single-threaded: " in plain
    assert "RAYON_NUM_THREADS=1" in plain and "all cores (2)" in plain
    assert "#" in plain and "█" not in plain
    assert "featcheck's fix: burn-flex 0.22.1 [rayon,std]" in plain
    assert "1.83x faster" in plain
    assert "PyTorch 2.5.0 (2 threads)" in plain
    assert "built in 301 s" in plain
    fancy = "\n".join(text for text, _ in text_lines(_report(compare=False), fancy=True))
    assert "█" in fancy and "--compare-fix" in fancy


def test_a_wait_for_another_build_is_said_apart_from_the_build_time() -> None:
    report = _report(compare=False)
    waited = replace(report.current.build, waited=960)
    report.current = replace(report.current, build=waited)
    plain = "\n".join(text for text, _ in text_lines(report, fancy=False))
    assert "current: built in 301 s (waited 960 s for another build before)" in plain
    build = report_json(report)["build"]
    assert (build["seconds"], build["waited_seconds"]) == (301.0, 960)
