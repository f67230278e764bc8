"""What `featcheck probe --rule` prints: per finding, both builds' times and the ratio, as
text or one JSON object (versioned like the audit's: adding a field keeps `version`)."""

from __future__ import annotations

from typing import Any, TextIO

from featcheck import __version__
from featcheck.probe.measure import usable_cores
from featcheck.probe.resolve import BackendConfig
from featcheck.probe.rules.run import RuleProbeReport, RuleProbeResult
from featcheck.render.safe_text import json_document, printable
from featcheck.wording import plural

SCHEMA_VERSION = 1
COSTS_FROM = 1.10
"""The ratio from which a finding counts as costing speed here (exit code 1)."""


def costs_here(report: RuleProbeReport) -> bool:
    """Whether some finding's build is measurably slower than the fixed one."""
    return any(r.agree and r.headline.ratio >= COSTS_FROM for r in report.results)


def unsettled(report: RuleProbeReport) -> bool:
    """Whether some finding got no ratio: its two builds computed different results."""
    return any(not r.agree for r in report.results)


def verdict_line(result: RuleProbeResult) -> str:
    """`FC012 memchr 2.8.3 without `std`: 2.06x slower here (memchr: …, median of 5 runs)`."""
    finding, best = result.finding, result.headline
    on = finding.feature in result.current.backend.features
    state = "with" if on else "without"
    about = f"{finding.code} {finding.crate} {finding.crate_version} {state} `{finding.feature}`"
    if not result.agree:
        return f"{about}: the two builds computed different results; no ratio is given"
    if best.ratio >= COSTS_FROM:
        how = f"{best.ratio:.2f}x slower here"
    else:
        how = f"no measurable cost here ({best.ratio:.2f}x)"
    return f"{about}: {how} ({best.name}: {result.program.work})"


def render_text(report: RuleProbeReport, out: TextIO, *, header: bool = True) -> None:
    """The report for a terminal (`header`: open with the member; false below the matmul's
    report, which names it)."""
    if header:
        out.write(f"{printable(report.member)} ({printable(report.target)})\n")
    for result in report.results:
        out.write(f"\n{printable(verdict_line(result))}\n")
        if result.program.wall:
            out.write(f"  by wall time, on {plural(usable_cores(), 'core')}\n")
        now, fixed = _features(result.current), _features(result.fixed)
        out.write(f"  current:  {printable(now)}\n  fixed:    {printable(fixed)}")
        out.write(f"  ({printable(result.fix)})\n")
        out.write(f"  {'workload':<16}{'current':>12}{'fixed':>12}{'ratio':>9}\n")
        for workload in result.workloads:
            out.write(
                f"  {printable(workload.name):<16}{workload.current_ms:>10.3f}ms"
                f"{workload.fixed_ms:>10.3f}ms{workload.ratio:>8.2f}x\n"
            )
    clocks = sorted({_clock(result) for result in report.results})
    out.write(
        f"\n{' or '.join(clocks)}, median of {plural(report.runs, 'run')} of each build in turn, "
        "each run the median of many calls\n"
    )
    for note in report.notes:
        out.write(f"note: {printable(note)}\n")


def _clock(result: RuleProbeResult) -> str:
    return "wall time" if result.program.wall else "thread CPU time of the calling thread"


def _features(config: BackendConfig) -> str:
    pin = config.backend
    return f"{pin.name} {pin.version} [{', '.join(pin.features)}]"


def render_json(report: RuleProbeReport) -> str:
    """The report as one JSON object."""
    return json_document(report_json(report)) + "\n"


def report_json(report: RuleProbeReport) -> dict[str, Any]:
    """The report as a JSON-ready dict."""
    return {
        "version": SCHEMA_VERSION,
        "kind": "rules",
        "tool": {"name": "featcheck", "version": __version__},
        "member": report.member,
        "target": report.target,
        "runs": report.runs,
        "probes": [_result_json(result) for result in report.results],
        "costs_here": costs_here(report),
        "notes": report.notes,
    }


def _result_json(result: RuleProbeResult) -> dict[str, Any]:
    finding = result.finding
    return {
        "code": finding.code,
        "rule": finding.rule,
        "crate": finding.crate,
        "crate_version": finding.crate_version,
        "feature": finding.feature,
        "current_features": list(result.current.backend.features),
        "fixed_features": list(result.fixed.backend.features),
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
        "builds": [
            {
                "key": b.key,
                "cached": b.cached,
                "seconds": round(b.seconds, 1),
                "waited_seconds": round(b.waited, 1),
            }
            for b in result.builds
        ],
    }
