"""The probe's output: text with a small bar chart, or one JSON object.

The JSON schema is versioned like the audit's: adding a field keeps `version`; renaming,
removing or changing the meaning of one bumps it.
"""

from __future__ import annotations

from typing import Any

from rich.console import Console

from featcheck import __version__
from featcheck.probe.command import ProbeReport, VariantResult
from featcheck.probe.measure import ROUNDS, TIMED_RUNS, WARMUP
from featcheck.probe.resolve import BackendConfig
from featcheck.probe.verdict import RunStats, ThreadEvidence, Verdict
from featcheck.wording import plural

SCHEMA_VERSION = 2
"""2: the matmul is built on burn-flex alone, so no MLP step is timed: `runs[].mlp` is gone,
and `pins` lists burn-backend (whose traits the program calls) after the gemm crates.
Version 1 added, without a bump: per-thread evidence (`threads_used`, `main_thread_share`,
`thread_shares`, `thread_method`, `basis`, `timing_under_load`, `other_cores`, `thread_cpu`),
`build.waited_seconds`, and from `featcheck probe` (not the renderer) `kind` and `rules`."""
TORCH_NOTE = (
    "PyTorch runs with its default threads: torch.set_num_threads does not govern BLAS "
    "backends such as Accelerate, so its row is not limited like RAYON_NUM_THREADS=1"
)


def _round(value: float | None, digits: int = 4) -> float | None:
    return None if value is None else round(value, digits)


def _evidence_json(evidence: ThreadEvidence | None) -> dict[str, Any]:
    """The per-thread summary fields (all null when threads were not observed)."""
    if evidence is None:
        return {"threads_used": None, "main_thread_share": None, "thread_shares": None}
    return {
        "threads_used": evidence.threads_used,
        "main_thread_share": _round(evidence.main_share, 3),
        "thread_shares": [_round(share, 3) for share in evidence.shares],
    }


def _thread_cpu_json(evidence: ThreadEvidence | None) -> dict[str, Any] | None:
    if evidence is None:
        return None
    return {
        "method": evidence.method,
        "main_ms": _round(evidence.main_ms, 3),
        "others_ms": [_round(ms, 3) for ms in evidence.others_ms],
        "alive": evidence.alive,
    }


def _stats_json(stats: RunStats) -> dict[str, Any]:
    return {
        "min_ms": _round(stats.min_ms),
        "median_ms": _round(stats.median_ms),
        "parallelism": _round(stats.parallelism, 3),
        **_evidence_json(stats.thread_evidence),
        "thread_cpu": _thread_cpu_json(stats.thread_evidence),
    }


def _run_json(stats: RunStats) -> dict[str, Any]:
    return {
        "threads": stats.threads,
        "rayon_num_threads": stats.rayon_num_threads,
        **_stats_json(stats),
    }


def _config_json(config: BackendConfig) -> dict[str, Any]:
    return {
        "crate": config.backend.name,
        "crate_version": config.backend.version,
        "features": list(config.backend.features),
        "burn_version": config.burn_version,
        "pins": [
            {"name": p.name, "version": p.version, "features": list(p.features)}
            for p in config.pins
        ],
    }


def _variant_json(variant: VariantResult) -> dict[str, Any]:
    m = variant.measurement
    d = variant.decision
    return {
        **_config_json(variant.config),
        "verdict": d.verdict.value,
        "reason": d.reason,
        "basis": d.basis,
        **_evidence_json(d.evidence),
        "thread_method": None if d.evidence is None else d.evidence.method,
        "speedup": _round(d.speedup, 3),
        "parallelism": _round(d.parallelism, 3),
        "idle_cores": _round(d.idle_cores, 2),
        "other_cores": _round(d.other_cores, 2),
        "timing_under_load": d.under_load,
        "runs": [_run_json(m.single), _run_json(m.every)],
        "build": {
            "key": variant.build.key,
            "cached": variant.build.cached,
            "seconds": round(variant.build.seconds, 1),
            "waited_seconds": round(variant.build.waited, 1),
        },
    }


def report_json(report: ProbeReport) -> dict[str, Any]:
    """The probe's result as a JSON-ready dict."""
    current = _variant_json(report.current)
    data: dict[str, Any] = {
        "version": SCHEMA_VERSION,
        "tool": {"name": "featcheck", "version": __version__},
        "member": report.member,
        "target": report.target,
        "n": report.n,
        "cores": report.cores,
        "rounds": ROUNDS,
        "warmup": WARMUP,
        "timed_runs": TIMED_RUNS,
        **current,
        "seconds_to_timing": round(report.seconds_to_timing, 1),
        "notes": list(report.notes),
    }
    if report.compare:
        base = report.current.measurement.every.min_ms
        variants = [{"label": "current", **current, "vs_current": 1.0}]
        if report.fixed is not None:
            fixed = _variant_json(report.fixed)
            variants.append(
                {
                    "label": "with featcheck's fix",
                    "fix": report.fix_description,
                    **fixed,
                    "vs_current": _round(base / report.fixed.measurement.every.min_ms, 3),
                }
            )
        if report.torch is not None:
            t = report.torch
            variants.append(
                {
                    "label": f"PyTorch {t.version}",
                    "crate": "torch",
                    "crate_version": t.version,
                    "threads": t.threads,
                    "min_ms": _round(t.stats.min_ms),
                    "median_ms": _round(t.stats.median_ms),
                    "parallelism": _round(t.stats.parallelism, 3),
                    "vs_current": _round(base / t.stats.min_ms, 3),
                    "note": TORCH_NOTE,
                }
            )
        data["variants"] = variants
    return data


# --- text ------------------------------------------------------------------------------------


def _bar(value: float, largest: float, width: int, fancy: bool) -> str:
    if largest <= 0:
        return ""
    cells = value / largest * width
    if not fancy:
        return "#" * max(1, round(cells))
    eighths = max(1, round(cells * 8))
    return "█" * (eighths // 8) + ("", "▏", "▎", "▍", "▌", "▋", "▊", "▉")[eighths % 8]


def _features(config: BackendConfig) -> str:
    return f"{config.backend.name} [{','.join(config.backend.features)}]"


def _times(stats: RunStats) -> str:
    return f"{stats.min_ms:8.2f} / {stats.median_ms:8.2f} ms"


def _busy(stats: RunStats) -> str:
    return "   ? cores" if stats.parallelism is None else f"{stats.parallelism:4.2f} cores"


THREADS_WIDTH = 26
"""Room for '3: 45% 44% 11%, main 11%' and the like."""


def _threads(stats: RunStats) -> str:
    """Which threads did the work, e.g. '2: 52% 47%, main 1%' or '1: main 100%'."""
    evidence = stats.thread_evidence
    if evidence is None:
        return "not measured"
    shares = " ".join(f"{share:.0%}" for share in evidence.shares)
    if evidence.threads_used == 1:
        who = "main" if evidence.main_share >= evidence.shares[0] else "pool"
        return f"1: {who} {shares}"
    return f"{evidence.threads_used}: {shares}, main {evidence.main_share:.0%}"


def _verdict_style(verdict: Verdict) -> str:
    return {Verdict.SINGLE: "bold red", Verdict.MULTI: "bold green"}.get(verdict, "bold yellow")


def _rounds() -> str:
    return "" if ROUNDS == 1 else f", best of {ROUNDS} rounds"


def text_lines(report: ProbeReport, fancy: bool) -> list[tuple[str, str]]:
    """(text, rich style) per line."""
    decision = report.current.decision
    lines = _header_lines(report) + _timing_lines(report, fancy)
    if decision.under_load and decision.other_cores is not None:
        lines.append(
            (
                f"  timings measured under load: other processes kept "
                f"{decision.other_cores:.1f} of {report.cores} cores busy; the thread shares "
                "do not depend on it",
                "dim",
            )
        )
    lines += [
        ("", ""),
        (f"{decision.verdict.value}: {decision.reason}", _verdict_style(decision.verdict)),
    ]
    if decision.verdict is Verdict.SINGLE and not report.compare:
        lines.append(
            (
                "  = run `featcheck` on the project for the fix, or `featcheck probe "
                "--compare-fix` to time it",
                "",
            )
        )
    if report.compare:
        lines.append(("", ""))
        lines += _compare_lines(report, fancy)
    for note in report.notes:
        lines.append((f"note: {note}", "dim"))
    lines.append(("", ""))
    lines.append((_build_line(report), "dim"))
    return lines


def _header_lines(report: ProbeReport) -> list[tuple[str, str]]:
    """The member, its backend and pinned crates, and what was timed how."""
    config = report.current.config
    gemm = [str(p) for p in config.pins[1:]]
    return [
        (f"featcheck probe: {report.member} ({report.target})", "bold"),
        (
            f"  {config.backend} (burn {config.burn_version})"
            + (f"; {', '.join(gemm)}" if gemm else ""),
            "",
        ),
        (
            f"  {report.n}x{report.n} f32 matmul on burn-flex: {WARMUP} warm-up + "
            f"{TIMED_RUNS} timed "
            f"runs{_rounds()}; {plural(report.cores, 'core')} usable",
            "",
        ),
        ("", ""),
    ]


def _timing_lines(report: ProbeReport, fancy: bool) -> list[tuple[str, str]]:
    """The current build's table: per workload, the 1-thread and the all-core run."""
    m = report.current.measurement
    rows = [("RAYON_NUM_THREADS=1", m.single), (f"all cores ({report.cores})", m.every)]
    largest = max(stats.min_ms for _, stats in rows)
    lines = [
        (
            f"  {'workload':<9} {'run':<20} {'min / median':>22}  {'busy':>10}  "
            f"{'threads: CPU shares':<{THREADS_WIDTH}}",
            "dim",
        )
    ]
    for label, stats in rows:
        lines.append(
            (
                f"  {'matmul':<9} {label:<20} {_times(stats)}  {_busy(stats)}  "
                f"{_threads(stats):<{THREADS_WIDTH}} " + _bar(stats.min_ms, largest, 24, fancy),
                "",
            )
        )
    return lines


def _compare_rows(report: ProbeReport) -> list[tuple[str, RunStats]]:
    variants = [("current", report.current)]
    if report.fixed is not None:
        variants.append(("featcheck's fix", report.fixed))
    rows = [
        (f"{label}: {_features(variant.config)}", variant.measurement.every)
        for label, variant in variants
    ]
    if report.torch is not None:
        t = report.torch
        rows.append((f"PyTorch {t.version} ({plural(t.threads, 'thread')})", t.stats))
    return rows


def _compare_lines(report: ProbeReport, fancy: bool) -> list[tuple[str, str]]:
    """The matmul of the current build against featcheck's fix (and PyTorch), all cores,
    with bars of the minimum time so that the gap is seen."""
    rows = _compare_rows(report)
    width = max(len(label) for label, _ in rows)
    base = rows[0][1].min_ms
    largest = max(stats.min_ms for _, stats in rows)
    header = (
        f"  {'matmul, all cores':<{width}}  {'min / median':>22}  {'vs current':>13}  "
        f"{'threads: CPU shares':<{THREADS_WIDTH}}"
    )
    lines = [(header, "dim")]
    for index, (label, stats) in enumerate(rows):
        ratio = base / stats.min_ms if stats.min_ms > 0 else 0.0
        versus = "1x" if index == 0 else f"{ratio:.2f}x " + ("faster" if ratio >= 1 else "slower")
        lines.append(
            (
                f"  {label:<{width}}  {_times(stats)}  {versus:>13}  "
                f"{_threads(stats):<{THREADS_WIDTH}} " + _bar(stats.min_ms, largest, 24, fancy),
                "",
            )
        )
    if report.fixed is not None:
        d = report.fixed.decision
        if report.fix_description:
            lines.append((f"  fix: {report.fix_description}", "dim"))
        lines.append((f"  with the fix: {d.verdict.value}: {d.reason}", "dim"))
    if report.torch is not None:
        lines.append((f"  note: {TORCH_NOTE}", "dim"))
    return lines


def _build_line(report: ProbeReport) -> str:
    parts = []
    for variant in (report.current, report.fixed):
        if variant is None:
            continue
        build = variant.build
        how = "cached" if build.cached else f"built in {build.seconds:.0f} s"
        if build.waited >= 0.5:
            how += f" (waited {build.waited:.0f} s for another build before)"
        parts.append(f"{variant.config.label}: {how}")
    return (
        "probe build: "
        + "; ".join(parts)
        + f"; timing began {report.seconds_to_timing:.1f} s after the start"
    )


def render_text(report: ProbeReport) -> None:
    """Print the text report on stdout: colours and block bars on a terminal, plain in a pipe."""
    console = Console(highlight=False, soft_wrap=True)
    fancy = console.is_terminal
    for text, style in text_lines(report, fancy):
        console.print(text, style=style or None, markup=False)
