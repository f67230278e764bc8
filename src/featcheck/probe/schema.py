"""`featcheck probe --format json`: one object, in one of two versioned schemas.

Both are versioned like the audit's: adding a field keeps `version`; renaming, removing or
changing the meaning of one bumps it. Where the member builds burn-flex the object is the
matmul's (`kind: "matmul"`) with the rule probes' object under `rules` (null when none ran); for
a member without burn-flex it is the rule probes' object (`kind: "rules"`), as `--rule all`
prints it. Both fields were added to version 1 of the matmul's schema.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from featcheck import __version__
from featcheck.probe.measure import RULE_RUNS, TIMED_RUNS, TORCH_NOTE, WARMUP
from featcheck.probe.verdict import RunStats, ThreadEvidence
from featcheck.render.safe_text import json_document

if TYPE_CHECKING:
    from featcheck.probe.build import BuildPlan
    from featcheck.probe.command import MatmulReport, VariantResult
    from featcheck.probe.member import ProbeReport, RuleProbeResult

SCHEMA_VERSION = 2
"""2: the matmul is built on burn-flex alone, so no MLP step is timed: `runs[].mlp` is gone,
and `pins` lists burn-backend (whose traits the program calls) after the gemm crates.
Version 1 added, without a bump: per-thread evidence (`threads_used`, `main_thread_share`,
`thread_shares`, `thread_method`, `basis`, `timing_under_load`, `other_cores`, `thread_cpu`),
`build.waited_seconds`, `kind` and `rules`."""
RULES_SCHEMA_VERSION = 1


def _round(value: float | None, digits: int = 4) -> float | None:
    return None if value is None else round(value, digits)


def _evidence_json(evidence: ThreadEvidence | None) -> dict[str, Any]:
    if evidence is None:
        return {"threads_used": None, "main_thread_share": None, "thread_shares": None}
    return {
        "threads_used": evidence.threads_used,
        "main_thread_share": _round(evidence.main_share, 3),
        "thread_shares": [_round(share, 3) for share in evidence.shares],
    }


def _run_json(stats: RunStats) -> dict[str, Any]:
    evidence = stats.thread_evidence
    return {
        "threads": stats.threads,
        "rayon_num_threads": stats.rayon_num_threads,
        "min_ms": _round(stats.min_ms),
        "median_ms": _round(stats.median_ms),
        "parallelism": _round(stats.parallelism, 3),
        **_evidence_json(evidence),
        "thread_cpu": None
        if evidence is None
        else {
            "method": evidence.method,
            "main_ms": _round(evidence.main_ms, 3),
            "others_ms": [_round(ms, 3) for ms in evidence.others_ms],
            "alive": evidence.alive,
        },
    }


def _variant_json(variant: VariantResult) -> dict[str, Any]:
    d, config = variant.decision, variant.build.config
    evidence = d.every.thread_evidence
    return {
        "crate": config.backend.name,
        "crate_version": config.backend.version,
        "features": list(config.backend.features),
        "burn_version": config.burn_version,
        "pins": [
            {"name": p.name, "version": p.version, "features": list(p.features)}
            for p in config.pins
        ],
        "verdict": d.verdict.value,
        "reason": d.reason,
        "basis": d.basis,
        **_evidence_json(evidence),
        "thread_method": None if evidence is None else evidence.method,
        "speedup": _round(d.speedup, 3),
        "parallelism": _round(d.every.parallelism, 3),
        "idle_cores": _round(d.load.idle_cores, 2),
        "other_cores": _round(d.load.other_cores, 2),
        "timing_under_load": d.load.loaded,
        "runs": [_run_json(d.single), _run_json(d.every)],
        "build": _build_json(variant.build),
    }


def _build_json(build: BuildPlan) -> dict[str, Any]:
    return {
        "key": build.key,
        "cached": build.cached,
        "seconds": round(build.seconds, 1),
        "waited_seconds": round(build.waited, 1),
    }


def _head(version: int, kind: str, member: str, target: str) -> dict[str, Any]:
    tool = {"name": "featcheck", "version": __version__}
    return {"version": version, "kind": kind, "tool": tool, "member": member, "target": target}


def report_json(report: MatmulReport) -> dict[str, Any]:
    current = _variant_json(report.current)
    config = report.current.build.config
    data: dict[str, Any] = {
        **_head(SCHEMA_VERSION, "matmul", config.member, config.target),
        "n": report.n,
        "cores": report.cores,
        "rounds": 1,  # one round of runs since version 1
        "warmup": WARMUP,
        "timed_runs": TIMED_RUNS,
        **current,
        "seconds_to_timing": round(report.seconds_to_timing, 1),
        "notes": list(report.notes),
    }
    if report.compare:
        base = report.current.decision.every.min_ms
        variants = [{"label": "current", **current, "vs_current": 1.0}]
        if report.fixed is not None:
            variants.append(
                {
                    "label": "with featcheck's fix",
                    "fix": report.fix_description,
                    **_variant_json(report.fixed),
                    "vs_current": _round(base / report.fixed.decision.every.min_ms, 3),
                }
            )
        if report.torch is not None:
            t = report.torch
            variants.append(
                {
                    "label": f"PyTorch {t.version}",
                    "crate": "torch",
                    "crate_version": t.version,
                    "threads": t.stats.threads,
                    "min_ms": _round(t.stats.min_ms),
                    "median_ms": _round(t.stats.median_ms),
                    "parallelism": _round(t.stats.parallelism, 3),
                    "vs_current": _round(base / t.stats.min_ms, 3),
                    "note": TORCH_NOTE,
                }
            )
        data["variants"] = variants
    return data


def _result_json(result: RuleProbeResult) -> dict[str, Any]:
    finding = result.finding
    return {
        "code": finding.code,
        "rule": finding.rule,
        "crate": finding.crate,
        "crate_version": finding.crate_version,
        "feature": finding.feature,
        "current_features": list(result.current.config.backend.features),
        "fixed_features": list(result.fixed.config.backend.features),
        "fix": result.fix,
        "work": result.program.work,
        "clock": "wall" if result.program.wall else "thread-cpu",
        "same_results": result.agree,
        "ratio": round(result.headline.ratio, 3),
        "workloads": [
            {
                "name": w.name,
                "current_ms": round(w.current_ms, 4),
                "fixed_ms": round(w.fixed_ms, 4),
                "ratio": round(w.ratio, 3),
            }
            for w in result.workloads
        ],
        "builds": [_build_json(build) for build in (result.current, result.fixed)],
    }


def render_json(report: ProbeReport) -> str:
    """One JSON object and a newline (see the module's text), printable and free of workflow
    commands."""
    rules: dict[str, Any] | None = None
    if report.rules is not None:
        rules = {
            **_head(RULES_SCHEMA_VERSION, "rules", report.member, report.target),
            "runs": RULE_RUNS,
            "probes": [_result_json(result) for result in report.rules],
            "costs_here": report.costs_here,
            "notes": [],  # the rule probes have none (the matmul's notes are its own)
        }
    if report.matmul is None:
        assert rules is not None  # run_member_probe refuses a member with nothing to probe
        return json_document(rules) + "\n"
    return json_document({**report_json(report.matmul), "rules": rules}) + "\n"
