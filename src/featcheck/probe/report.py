"""What `featcheck probe` prints on a terminal or in a pipe, under one title: the matmul's
verdict with a small bar chart (with --compare-fix the fixed build and PyTorch beside it), then
each rule probe's two builds, their times and the ratio. The JSON is schema.py's.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.console import Console

from featcheck.probe.measure import RULE_RUNS, TIMED_RUNS, TORCH_NOTE, WARMUP, usable_cores
from featcheck.probe.verdict import COSTS_FROM, RunStats, Verdict
from featcheck.render.safe_text import printable
from featcheck.severity import plural

if TYPE_CHECKING:
    from featcheck.probe.command import MatmulReport
    from featcheck.probe.member import ProbeReport, RuleProbeResult


def _bar(value: float, largest: float, width: int, fancy: bool) -> str:
    if largest <= 0:
        return ""
    cells = value / largest * width
    if not fancy:
        return "#" * max(1, round(cells))
    eighths = max(1, round(cells * 8))
    return "█" * (eighths // 8) + ("", "▏", "▎", "▍", "▌", "▋", "▊", "▉")[eighths % 8]


def _times(stats: RunStats) -> str:
    return f"{stats.min_ms:8.2f} / {stats.median_ms:8.2f} ms"


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


def text_lines(report: MatmulReport, fancy: bool) -> list[tuple[str, str]]:
    """(text, rich style) per line."""
    decision, config = report.current.decision, report.current.build.config
    gemm = [str(p) for p in config.pins[1:]]
    runs = [
        ("RAYON_NUM_THREADS=1", decision.single),
        (f"all cores ({report.cores})", decision.every),
    ]
    lines = [
        _title(config.member, config.target),
        (
            f"  {config.backend} (burn {config.burn_version})"
            + (f"; {', '.join(gemm)}" if gemm else ""),
            "",
        ),
        (
            f"  {report.n}x{report.n} f32 matmul on burn-flex: {WARMUP} warm-up + "
            f"{TIMED_RUNS} timed runs; {plural(report.cores, 'core')} usable",
            "",
        ),
        ("", ""),
        *_table(
            f"  {'workload':<9} {'run':<20} {'min / median':>22}  {'busy':>10}  ",
            [
                (f"  {'matmul':<9} {run:<20} {_times(s)}  {_busy(s.parallelism)}  ", s)
                for run, s in runs
            ],
            fancy,
        ),
    ]
    if decision.load.loaded and decision.load.other_cores is not None:
        lines.append(
            (
                f"  timings measured under load: other processes kept "
                f"{decision.load.other_cores:.1f} of {report.cores} cores busy; the thread shares "
                "do not depend on it",
                "dim",
            )
        )
    lines += [
        ("", ""),
        (f"{decision.verdict.value}: {decision.reason}", _verdict_style(decision.verdict)),
    ]
    if report.compare:
        lines += [("", ""), *_compare_lines(report, fancy)]
    elif decision.verdict is Verdict.SINGLE:
        lines.append(
            (
                "  = run `featcheck` on the project for the fix, or `featcheck probe "
                "--compare-fix` to time it",
                "",
            )
        )
    lines += [(f"note: {note}", "dim") for note in report.notes]
    return [*lines, ("", ""), (_build_line(report), "dim")]


def _title(member: str, target: str) -> tuple[str, str]:
    return (f"featcheck probe: {member} ({target})", "bold")


def _table(header: str, rows: list[tuple[str, RunStats]], fancy: bool) -> list[tuple[str, str]]:
    """A table of runs: each row's own columns (`rows`: the text, the run), then which threads
    did the work and a bar of its minimum time, so that the gap is seen."""
    largest = max(stats.min_ms for _, stats in rows)
    return [
        (f"{header}{'threads: CPU shares':<{THREADS_WIDTH}}", "dim"),
        *(
            (
                f"{text}{_threads(stats):<{THREADS_WIDTH}} "
                + _bar(stats.min_ms, largest, 24, fancy),
                "",
            )
            for text, stats in rows
        ),
    ]


def _busy(parallelism: float | None) -> str:
    return "   ? cores" if parallelism is None else f"{parallelism:4.2f} cores"


def _compare_lines(report: MatmulReport, fancy: bool) -> list[tuple[str, str]]:
    """The matmul of the current build against featcheck's fix (and PyTorch), all cores."""
    rows = [(f"current: {report.current.build.config.backend}", report.current.decision.every)]
    if report.fixed is not None:
        rows.append(
            (f"featcheck's fix: {report.fixed.build.config.backend}", report.fixed.decision.every)
        )
    if report.torch is not None:
        t = report.torch
        rows.append((f"PyTorch {t.version} ({plural(t.stats.threads, 'thread')})", t.stats))
    width = max(len(label) for label, _ in rows)
    base = rows[0][1].min_ms
    cells = []
    for index, (label, stats) in enumerate(rows):
        ratio = base / stats.min_ms if stats.min_ms > 0 else 0.0
        versus = "1x" if index == 0 else f"{ratio:.2f}x " + ("faster" if ratio >= 1 else "slower")
        cells.append((f"  {label:<{width}}  {_times(stats)}  {versus:>13}  ", stats))
    lines = _table(
        f"  {'matmul, all cores':<{width}}  {'min / median':>22}  {'vs current':>13}  ",
        cells,
        fancy,
    )
    if report.fixed is not None:
        d = report.fixed.decision
        if report.fix_description:
            lines.append((f"  fix: {report.fix_description}", "dim"))
        lines.append((f"  with the fix: {d.verdict.value}: {d.reason}", "dim"))
    if report.torch is not None:
        lines.append((f"  note: {TORCH_NOTE}", "dim"))
    return lines


def _build_line(report: MatmulReport) -> str:
    parts = []
    for variant in [v for v in (report.current, report.fixed) if v is not None]:
        build = variant.build
        how = "cached" if build.cached else f"built in {build.seconds:.0f} s"
        if build.waited >= 0.5:
            how += f" (waited {build.waited:.0f} s for another build before)"
        parts.append(f"{build.config.label}: {how}")
    parts.append(f"timing began {report.seconds_to_timing:.1f} s after the start")
    return "probe build: " + "; ".join(parts)


# --- the rule probes ---------------------------------------------------------------------------


def _verdict_line(result: RuleProbeResult) -> tuple[str, str]:
    """`FC012 memchr 2.8.3 without `std`: 2.06x slower here (memchr: …)`, in the matmul
    verdict's colours: a cost red, no cost green, no ratio yellow."""
    finding, best = result.finding, result.headline
    state = "with" if finding.feature in result.current.config.backend.features else "without"
    about = f"{finding.code} {finding.crate} {finding.crate_version} {state} `{finding.feature}`"
    work = f"({best.name}: {result.program.work})"
    if not result.agree:
        return (
            f"{about}: the two builds computed different results; no ratio is given",
            _verdict_style(Verdict.INCONCLUSIVE),
        )
    if best.ratio >= COSTS_FROM:
        return f"{about}: {best.ratio:.2f}x slower here {work}", _verdict_style(Verdict.SINGLE)
    return (
        f"{about}: no measurable cost here ({best.ratio:.2f}x) {work}",
        _verdict_style(Verdict.MULTI),
    )


def _rule_lines(results: list[RuleProbeResult]) -> list[tuple[str, str]]:
    lines = []
    for result in results:
        lines += [("", ""), _verdict_line(result)]
        if result.program.wall:
            lines.append((f"  by wall time, on {plural(usable_cores(), 'core')}", ""))
        lines += [
            (f"  current:  {result.current.config.backend}", ""),
            (f"  fixed:    {result.fixed.config.backend}  ({result.fix})", ""),
            (f"  {'workload':<16}{'current':>12}{'fixed':>12}{'ratio':>9}", "dim"),
        ]
        lines += [
            (f"  {w.name:<16}{w.current_ms:>10.3f}ms{w.fixed_ms:>10.3f}ms{w.ratio:>8.2f}x", "")
            for w in result.workloads
        ]
    clocks = sorted(
        {
            "wall time" if r.program.wall else "thread CPU time of the calling thread"
            for r in results
        }
    )
    lines += [
        ("", ""),
        (
            f"{' or '.join(clocks)}, median of {plural(RULE_RUNS, 'run')} of each build in turn, "
            "each run the median of many calls",
            "dim",
        ),
    ]
    return lines


def render_text(report: ProbeReport) -> None:
    """Colours and block bars on a terminal, plain in a pipe."""
    console = Console(highlight=False, soft_wrap=True, emoji=False)
    if report.matmul is not None:
        lines = text_lines(report.matmul, console.is_terminal)
    else:
        lines = [_title(report.member, report.target)]
    if report.rules is not None:
        lines += _rule_lines(report.rules)
    for text, style in lines:
        console.print(printable(text), style=style or None, markup=False)
