"""The terminal report: findings grouped by member, the manifest line quoted, the fix spelled out.

By default a finding is compact, as ruff and clippy print them: the verdict, where (with the
manifest line quoted and underlined), the one-line why and the fix. `verbose` adds what the
audit knows beyond that: the whole why with its measurements, the chain (how the feature would
arrive, what cut it), notes and the other candidate fixes. `featcheck rule CODE` prints the rule's
page; JSON and SARIF always carry everything.

Every string from the checkout (names, paths, quoted manifest lines, notes) is passed through
`printable`, so no control character reaches the terminal, and every line printed is made
`inert`: a report printed in any CI log carries no workflow command. Each line is a list of
runs of text, each with its style; the text is never read as markup. Colour comes from rich,
which turns itself off when output is not a terminal or NO_COLOR is set; where rich could not
colour at all (not a terminal, nothing forcing colour) the runs are written as they are, without
loading rich: rich costs about a millisecond per printed finding, which a workspace of hundreds
of members feels.
"""

from __future__ import annotations

import os
import sys
from itertools import groupby
from typing import TYPE_CHECKING, TextIO

from featcheck.render.common import count_line, printable, why_line
from featcheck.render.hints import featcheck_command, fix_command, under_pre_commit
from featcheck.render.safe_text import inert
from featcheck.report import AuditResult, Finding, Fix, Severity

if TYPE_CHECKING:
    from rich.text import Text

_STYLE = {Severity.ERROR: "bold red", Severity.WARNING: "bold yellow", Severity.INFO: "bold cyan"}
_TAB = "    "
"""What a tab in a quoted manifest line is shown as (columns count it as one character)."""

_Run = tuple[str, str]
"""Text and its rich style ("" for none)."""
_Line = list[_Run]

_EQUALS: _Line = [("  ", ""), ("=", "blue"), (" ", "")]
"""How each detail line of a finding starts: `  = `."""


def _quote(finding: Finding) -> list[_Line]:
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
        [(f"{pad} |", "blue")],
        [(f"{number} |", "blue"), (f" {shown(source)}", "")],
        [(f"{pad} |", "blue"), (" ", ""), (underline, "bold")],
    ]


def _where(fix: Fix) -> str:
    return ", ".join(sorted({f"{e.file}:{e.line}" if e.line else e.file for e in fix.edits}))


def _fix_line(finding: Finding) -> _Line | None:
    fix = [*_EQUALS, ("fix:", "green")]
    if finding.fix is not None:
        added = _added(finding.fix)
        safe = finding.fix.safe
        applies = f"`{fix_command()}` applies it" if safe else printable(finding.fix.note)
        text = (
            f" {printable(finding.fix.description)} ({printable(_where(finding.fix))}); with it "
            f"the build gets `{printable(finding.feature)}`{added}, {applies}"
        )
        return [*fix, (text, "")]
    if finding.suggestion:
        return [*fix, (f" {printable(finding.suggestion)}", "")]
    return None


def _added(fix: Fix) -> str:
    """What a fix costs in packages, as the fix line says it."""
    if not fix.added:
        return ""
    return f" and adds {fix.added} package{'s' if fix.added != 1 else ''} to the build"


def _detail(label: str, text: str) -> _Line:
    """`  = label: text`, the text made printable."""
    return [*_EQUALS, (f"{label}: {printable(text)}", "")]


def _details(finding: Finding) -> list[_Line]:
    """What only `-v` shows before the fix: notes, the chain and the whole why."""
    lines = [_detail("note", note) for note in finding.notes]
    if len(finding.configurations) > 1:
        also = "; ".join(c.label for c in finding.configurations[1:])
        lines.append(_detail("note", f"also in the build with {also}"))
    lines += [_detail("chain", link) for link in finding.chain]
    if finding.why:
        lines.append(_detail("why", " ".join(finding.why.split())))
    return lines


def _alternatives(finding: Finding) -> list[_Line]:
    """The other candidate fixes, smallest first (`-v` only)."""
    lines: list[_Line] = []
    for alternative in finding.alternatives:
        state = "confirmed" if alternative.confirmed else "not confirmed"
        if alternative.note:
            state += f": {alternative.note}"
        text = f"{alternative.description} ({_where(alternative)}; {state})"
        lines.append(_detail("or", text))
    return lines


def _render_finding(finding: Finding, verbose: bool) -> list[_Line]:
    lines: list[_Line] = [
        [
            (f"{finding.severity.label}[{finding.code}]", _STYLE[finding.severity]),
            (" ", ""),
            (printable(finding.message), "bold"),
        ]
    ]
    location = finding.location
    if location is not None:
        place = f" {printable(location.file)}:{location.line}:{location.column}"
        lines.append([("  ", ""), ("-->", "blue"), (place, "")])
        lines.extend([("  ", ""), *line] for line in _quote(finding))
    if finding.confidence != "resolved":
        # Always shown: a verdict read from the manifests alone must never pass for a resolved one.
        lines.append(
            _detail(
                "confidence",
                f"{finding.confidence} (packages --no-exec could not read may turn the feature "
                "on; see the note above)",
            )
        )
    if verbose:
        lines.extend(_details(finding))
    elif finding.why:
        lines.append(_detail("why", why_line(finding)))
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


def _findings_lines(result: AuditResult, verbose: bool) -> list[_Line]:
    lines: list[_Line] = []
    for (member, target, configuration), findings in groupby(result.findings, key=_group):
        heading: _Line = [(printable(member), "bold")]
        if target:
            heading += [(" ", ""), (f"({printable(target)})", "dim")]
        if configuration:
            heading += [(" with ", ""), (printable(configuration), "bold")]
        lines.append(heading)
        for finding in findings:
            lines.extend(_render_finding(finding, verbose))
            lines.append([])
    return lines


def _write(lines: list[_Line], stream: TextIO | None, colour: bool | None) -> None:
    """Print the lines to `stream` (stdout when None), styled where the terminal shows it;
    `colour` True says the text goes to a terminal by another way (the CLI renders into a
    buffer first), None leaves it to the stream."""
    if not lines:
        return
    lines = [_inert(line) for line in lines]
    target = sys.stdout if stream is None else stream
    if not (colour or (colour is None and _may_colour(target))):
        target.write("".join("".join(text for text, _ in line) + "\n" for line in lines))
        return
    from rich.console import Console

    # rich still honours NO_COLOR and the terminal's colour system.
    Console(file=stream, highlight=False, soft_wrap=True, force_terminal=colour).print(
        _styled(lines)
    )


def _inert(line: _Line) -> _Line:
    """The line as it is, or, where checkout text in it would read as a workflow command, as
    one unstyled run with the command broken (the runs are printable already)."""
    plain = "".join(text for text, _ in line)
    shown = inert(plain)
    return line if shown == plain else [(shown, "")]


def _may_colour(stream: TextIO) -> bool:
    """Whether rich could print styles to `stream`: a terminal, an environment that forces
    colour (rich reads FORCE_COLOR and TTY_COMPATIBLE), or a notebook. Where it could, rich
    decides; everywhere else it would print the plain text."""
    if "FORCE_COLOR" in os.environ or "TTY_COMPATIBLE" in os.environ:
        return True
    if "IPython" in sys.modules:
        return True
    isatty = getattr(stream, "isatty", None)
    try:
        return bool(isatty()) if isatty is not None else False
    except ValueError:  # a closed stream
        return False


def _styled(lines: list[_Line]) -> Text:
    from rich.text import Text

    text = Text(end="\n")
    for index, line in enumerate(lines):
        if index:
            text.append("\n")
        for run, style in line:
            text.append(run, style or None)
    return text


def render_findings(
    result: AuditResult,
    stream: TextIO | None = None,
    *,
    verbose: bool = False,
    colour: bool | None = None,
) -> None:
    """Print only the findings, without notes or the summary line (nothing when there are none)."""
    _write(_findings_lines(result, verbose), stream, colour)


def render_text(
    result: AuditResult,
    stream: TextIO | None = None,
    *,
    verbose: bool = False,
    colour: bool | None = None,
) -> None:
    """Print the report to `stream` (stdout by default); `verbose` adds each finding's details;
    `colour` as for `_write`."""
    lines: list[_Line] = [
        [("note:", "yellow"), (f" {printable(note)}", "")] for note in result.notes
    ]
    lines += _findings_lines(result, verbose)
    lines.append([(count_line(result), "green" if not result.findings else "bold")])
    if not verbose and any(_has_details(f) for f in result.findings):
        codes = sorted({f.code for f in result.findings})
        lines.append(
            [
                (
                    f"{_verbose_flag()} shows each finding's chain and measurements; "
                    f"`{featcheck_command('rule ' + codes[0])}` explains a rule",
                    "dim",
                )
            ]
        )
    _write(lines, stream, colour)


def _verbose_flag() -> str:
    # A hook's arguments are in the user's configuration, not on a command line they type.
    return f"`{featcheck_command('-v')}`" if under_pre_commit() else "-v"


def _has_details(finding: Finding) -> bool:
    return bool(finding.notes or finding.chain or finding.alternatives or finding.why)
