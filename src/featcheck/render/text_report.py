"""The terminal report: findings grouped by member, the manifest line quoted, the fix spelled out.

Colour comes from rich, which turns itself off when output is not a terminal or NO_COLOR is set.
"""

from __future__ import annotations

from itertools import groupby
from typing import TextIO

from rich.console import Console
from rich.markup import escape

from featcheck.render.common import count_line
from featcheck.report import AuditResult, Finding, Severity

_STYLE = {Severity.ERROR: "bold red", Severity.WARNING: "bold yellow", Severity.INFO: "bold cyan"}


def _quote(finding: Finding) -> list[str]:
    """The manifest line with a caret underline, as compilers draw it."""
    location = finding.location
    if location is None or not location.source_line:
        return []
    number = str(location.line)
    pad = " " * len(number)
    width = (
        location.end_column - location.column
        if location.end_line == location.line
        else len(location.source_line) - location.column + 1
    )
    underline = " " * (location.column - 1) + "^" * max(1, width)
    return [
        f"[blue]{pad} |[/]",
        f"[blue]{number} |[/] {escape(location.source_line)}",
        f"[blue]{pad} |[/] [bold]{underline}[/]",
    ]


def _render_finding(finding: Finding) -> list[str]:
    style = _STYLE[finding.severity]
    lines = [
        f"[{style}]{finding.severity.label}[{finding.code}][/] [bold]{escape(finding.message)}[/]"
    ]
    location = finding.location
    if location is not None:
        lines.append(f"  [blue]-->[/] {escape(location.file)}:{location.line}:{location.column}")
        lines.extend("  " + line for line in _quote(finding))
    if finding.confidence != "resolved":
        lines.append(
            f"  [blue]=[/] confidence: {escape(finding.confidence)} (packages --no-exec could "
            "not read may turn the feature on; see the note above)"
        )
    for note in finding.notes:
        lines.append(f"  [blue]=[/] note: {escape(note)}")
    for link in finding.chain:
        lines.append(f"  [blue]=[/] chain: {escape(link)}")
    if finding.why:
        lines.append(f"  [blue]=[/] why: {escape(finding.why)}")
    if finding.fix is not None:
        where = ", ".join(
            sorted({f"{e.file}:{e.line}" if e.line else e.file for e in finding.fix.edits})
        )
        lines.append(
            f"  [blue]=[/] [green]fix:[/] {escape(finding.fix.description)} ({escape(where)}); "
            "cargo confirmed it, `--fix` applies it"
        )
    elif finding.suggestion:
        lines.append(f"  [blue]=[/] [green]fix:[/] {escape(finding.suggestion)}")
    return lines


def _group(finding: Finding) -> tuple[str, str]:
    """Findings are listed per member and target; unused suppressions under "configuration"."""
    if finding.member is not None:
        member = finding.member
    else:
        member = "configuration" if finding.code == "FC900" else "(unknown member)"
    return member, finding.target or ""


def _print_findings(console: Console, result: AuditResult) -> None:
    for (member, target), findings in groupby(result.findings, key=_group):
        heading = f"[bold]{escape(member)}[/]" + (f" [dim]({escape(target)})[/]" if target else "")
        console.print(heading)
        for finding in findings:
            for line in _render_finding(finding):
                console.print(line)
            console.print()


def render_findings(result: AuditResult, stream: TextIO | None = None) -> None:
    """Print only the findings, without notes or the summary line (nothing when there are none)."""
    _print_findings(Console(file=stream, highlight=False, soft_wrap=True), result)


def render_text(result: AuditResult, stream: TextIO | None = None) -> None:
    """Print the report to `stream` (stdout by default)."""
    console = Console(file=stream, highlight=False, soft_wrap=True)
    for note in result.notes:
        console.print(f"[yellow]note:[/] {escape(note)}")
    _print_findings(console, result)
    line = count_line(result)
    style = "green" if not result.findings else "bold"
    console.print(f"[{style}]{escape(line)}[/]")
