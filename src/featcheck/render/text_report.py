"""The terminal report: findings grouped by member, the manifest line quoted, the fix spelled out.

By default a finding is compact, as ruff and clippy print them: the verdict, where (with the
manifest line quoted and underlined), the one-line why and the fix. `verbose` adds what the
audit knows beyond that: the whole why with its measurements, the chain (how the feature would
arrive, what cut it), notes and the other candidate fixes. `featcheck rule CODE` prints the rule's
page; JSON and SARIF always carry everything.

Every string from the checkout (names, paths, quoted manifest lines, notes) is passed through
`printable`, so no control character reaches the terminal, then through rich's markup escape.
Colour comes from rich, which turns itself off when output is not a terminal or NO_COLOR is set.
"""

from __future__ import annotations

from itertools import groupby
from typing import TextIO

from rich.console import Console
from rich.markup import escape

from featcheck.render.common import count_line, printable, why_line
from featcheck.report import AuditResult, Finding, Fix, Severity

_STYLE = {Severity.ERROR: "bold red", Severity.WARNING: "bold yellow", Severity.INFO: "bold cyan"}
_TAB = "    "
"""What a tab in a quoted manifest line is shown as (columns count it as one character)."""


def _safe(text: str) -> str:
    """Checkout text as rich markup: control characters escaped, then markup escaped."""
    return escape(printable(text))


def _quote(finding: Finding) -> list[str]:
    """The manifest line with a caret underline, as compilers draw it."""
    location = finding.location
    if location is None or not location.source_line:
        return []
    source = location.source_line
    start = location.column - 1
    end = location.end_column - 1 if location.end_line == location.line else len(source)

    def shown(text: str) -> str:
        return printable(text.replace("\t", _TAB))

    # The caret is placed under the escaped text, so it stays under the span whatever precedes it.
    underline = " " * len(shown(source[:start])) + "^" * max(1, len(shown(source[start:end])))
    number = str(location.line)
    pad = " " * len(number)
    return [
        f"[blue]{pad} |[/]",
        f"[blue]{number} |[/] {escape(shown(source))}",
        f"[blue]{pad} |[/] [bold]{underline}[/]",
    ]


def _where(fix: Fix) -> str:
    return ", ".join(sorted({f"{e.file}:{e.line}" if e.line else e.file for e in fix.edits}))


def _fix_line(finding: Finding) -> str | None:
    if finding.fix is not None:
        return (
            f"  [blue]=[/] [green]fix:[/] {_safe(finding.fix.description)} "
            f"({_safe(_where(finding.fix))}); with it the build gets `{_safe(finding.feature)}`, "
            "`--fix` applies it"
        )
    if finding.suggestion:
        return f"  [blue]=[/] [green]fix:[/] {_safe(finding.suggestion)}"
    return None


def _details(finding: Finding) -> list[str]:
    """What only `-v` shows before the fix: notes, the chain and the whole why."""
    lines = [f"  [blue]=[/] note: {_safe(note)}" for note in finding.notes]
    if len(finding.configurations) > 1:
        also = "; ".join(c.label for c in finding.configurations[1:])
        lines.append(f"  [blue]=[/] note: also in the build with {_safe(also)}")
    lines += [f"  [blue]=[/] chain: {_safe(link)}" for link in finding.chain]
    if finding.why:
        lines.append(f"  [blue]=[/] why: {_safe(' '.join(finding.why.split()))}")
    return lines


def _alternatives(finding: Finding) -> list[str]:
    """The other candidate fixes, smallest first (`-v` only)."""
    lines: list[str] = []
    for alternative in finding.alternatives:
        state = "confirmed" if alternative.confirmed else "not confirmed"
        if alternative.note:
            state += f": {alternative.note}"
        lines.append(
            f"  [blue]=[/] or: {_safe(alternative.description)} "
            f"({_safe(_where(alternative))}; {_safe(state)})"
        )
    return lines


def _render_finding(finding: Finding, verbose: bool) -> list[str]:
    style = _STYLE[finding.severity]
    lines = [
        f"[{style}]{finding.severity.label}[{escape(finding.code)}][/] "
        f"[bold]{_safe(finding.message)}[/]"
    ]
    location = finding.location
    if location is not None:
        lines.append(f"  [blue]-->[/] {_safe(location.file)}:{location.line}:{location.column}")
        lines.extend("  " + line for line in _quote(finding))
    if finding.confidence != "resolved":
        # Always shown: a verdict read from the manifests alone must never pass for a resolved one.
        lines.append(
            f"  [blue]=[/] confidence: {_safe(finding.confidence)} (packages --no-exec could "
            "not read may turn the feature on; see the note above)"
        )
    if verbose:
        lines.extend(_details(finding))
    elif finding.why:
        lines.append(f"  [blue]=[/] why: {_safe(why_line(finding))}")
    fix = _fix_line(finding)
    if fix is not None:
        lines.append(fix)
    if verbose:
        lines.extend(_alternatives(finding))
    return lines


def _group(finding: Finding) -> tuple[str, str, str]:
    """Findings are listed per member, build configuration and target; unused suppressions
    under "configuration"."""
    if finding.member is not None:
        member = finding.member
    else:
        member = "configuration" if finding.code == "FC900" else "(unknown member)"
    configuration = finding.configuration
    shown = "" if configuration is None or configuration.is_default else configuration.label
    return member, finding.target or "", shown


def _print_findings(console: Console, result: AuditResult, verbose: bool) -> None:
    for (member, target, configuration), findings in groupby(result.findings, key=_group):
        heading = f"[bold]{_safe(member)}[/]" + (f" [dim]({_safe(target)})[/]" if target else "")
        if configuration:
            heading += f" with [bold]{_safe(configuration)}[/]"
        # One print per member: rich's cost is per call, not per line (the lines' markup is
        # closed on each line, so joining them changes nothing that is printed).
        block = [heading]
        for finding in findings:
            block += _render_finding(finding, verbose)
            block.append("")
        console.print("\n".join(block))


def _console(stream: TextIO | None) -> Console:
    return Console(file=stream, highlight=False, soft_wrap=True)


def render_findings(
    result: AuditResult, stream: TextIO | None = None, *, verbose: bool = False
) -> None:
    """Print only the findings, without notes or the summary line (nothing when there are none)."""
    _print_findings(_console(stream), result, verbose)


def render_text(
    result: AuditResult, stream: TextIO | None = None, *, verbose: bool = False
) -> None:
    """Print the report to `stream` (stdout by default); `verbose` adds each finding's details."""
    console = _console(stream)
    for note in result.notes:
        console.print(f"[yellow]note:[/] {_safe(note)}")
    _print_findings(console, result, verbose)
    style = "green" if not result.findings else "bold"
    console.print(f"[{style}]{escape(count_line(result))}[/]")
    if not verbose and any(_has_details(f) for f in result.findings):
        codes = sorted({f.code for f in result.findings})
        console.print(
            f"[dim]-v shows each finding's chain and measurements; "
            f"`featcheck rule {escape(codes[0])}` explains a rule[/]"
        )


def _has_details(finding: Finding) -> bool:
    return bool(finding.notes or finding.chain or finding.alternatives or finding.why)
