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
import re
import sys
from itertools import groupby
from typing import TYPE_CHECKING, TextIO

from featcheck.grouping import FindingGroup, group_findings
from featcheck.render.common import builds_of_group, count_line, printable, why_line
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

WIDTH = 100
"""The width the report is wrapped to where no terminal says its own (piped, a file)."""
_ELLIPSIS = "..."
"""What stands for the cut part of a long manifest line, as rustc marks it."""
_HANGING = re.compile(r"  = [a-z]+: |  --> |note: |[a-z]+\[[^\]]*\] ")
"""The label a wrapped line's continuation lines are indented past (`  = why: `, ...)."""
_QUOTED = re.compile(r" *\d* \|")
"""A line of the quoted manifest (`  9 | ...`): shortened to fit, never wrapped."""


def _window(text: str, start: int, end: int, room: int) -> tuple[str, int]:
    """`text` cut to `room` characters around its span [start, end), the cuts marked `...`
    (rustc's way with a long source line), and where the span now starts."""
    if len(text) <= room:
        return text, start
    mark = len(_ELLIPSIS)
    inner = max(1, room - 2 * mark)
    left = 0 if end <= room - mark else max(0, start - max(0, (inner - (end - start)) // 2))
    if left and len(text) - left <= room - mark:  # the rest fits: no cut on the right
        left = len(text) - (room - mark)
    prefix = _ELLIPSIS if left else ""
    right = left + room - len(prefix)
    if right < len(text):
        right -= mark
        return prefix + text[left:right] + _ELLIPSIS, start - left + len(prefix)
    return prefix + text[left:], start - left + len(prefix)


def _quote(finding: Finding, width: int) -> list[_Line]:
    """The manifest line with a caret underline, as compilers draw it, shortened to `width`."""
    location = finding.location
    if location is None or not location.source_line:
        return []
    source = location.source_line
    start = location.column - 1
    end = location.end_column - 1 if location.end_line == location.line else len(source)

    def shown(text: str) -> str:
        return printable(text.replace("\t", _TAB))

    # The caret is placed under the escaped text, so it stays under the span whatever precedes it.
    before, marked = shown(source[:start]), shown(source[start:end])
    number = str(location.line)
    pad = " " * len(number)
    room = max(20, width - len(f"  {number} | "))
    text, column = _window(
        before + marked + shown(source[end:]), len(before), len(before) + len(marked), room
    )
    underline = " " * column + "^" * max(1, min(len(marked), len(text) - column))
    return [
        [(f"{pad} |", "blue")],
        [(f"{number} |", "blue"), (f" {text}", "")],
        [(f"{pad} |", "blue"), (" ", ""), (underline, "bold")],
    ]


def _wrap(line: _Line, width: int) -> list[_Line]:
    """`line` broken at spaces to `width`, each continuation indented past its label (a
    hanging indent); a word longer than a whole line is broken where it must be."""
    plain = "".join(text for text, _ in line)
    if len(plain) <= width or _QUOTED.match(plain):
        return [line]
    label = _HANGING.match(plain)
    indent = min(len(label.group()) if label else 4, width // 2)
    lines: list[_Line] = [[]]
    column, pending = 0, ""
    for text, style in line:
        for piece in re.split(r"( +)", text):
            if not piece:
                continue
            if piece.startswith(" "):
                pending += piece
                continue
            while piece:
                if column + len(pending) + len(piece) > width and column > indent:
                    lines.append([(" " * indent, "")])
                    column, pending = indent, ""
                room = width - column - len(pending)
                part, piece = (piece, "") if len(piece) <= room else (piece[:room], piece[room:])
                current = lines[-1]
                if current and current[-1][1] == style:  # one run per style, as before
                    current[-1] = (current[-1][0] + pending + part, style)
                else:
                    current.append((pending + part, style))
                column += len(pending) + len(part)
                pending = ""
    return lines


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


def _render_group(group: FindingGroup, verbose: bool, width: int) -> list[_Line]:
    """The lead finding, with the builds a repeated cut covers named under its quote."""
    lead = group.lead
    lines = _render_finding(lead, verbose, group.confidence, width)
    if group.shared:
        # After the verdict, the place and its quote: where the cut costs, before why and fix.
        after = 1 + (1 + len(_quote(lead, width)) if lead.location is not None else 0)
        lines.insert(after, _detail("builds", builds_of_group(group)))
    return lines


def _render_finding(finding: Finding, verbose: bool, confidence: str, width: int) -> list[_Line]:
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
        lines.extend([("  ", ""), *line] for line in _quote(finding, width))
    if confidence != "resolved":
        # Always shown: a verdict read from the manifests alone must never pass for a resolved one.
        lines.append(
            _detail(
                "confidence",
                f"{confidence} (packages --no-exec could not read may turn the feature "
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


def _heading(group: FindingGroup) -> tuple[tuple[str, ...], str, str, str]:
    """Findings are listed per member, build configuration and target; unused suppressions
    under "configuration"; a cut repeated in several members under `N members` (each named
    in the finding). The members come first: equal headings are printed once."""
    finding = group.lead
    members = group.members
    if len(members) > 1:
        member = f"{len(members)} members"
    elif finding.member is not None:
        member = finding.member
    else:
        member = "configuration" if finding.code == "FC900" else "(unknown member)"
    configuration = finding.configuration
    shown = "" if configuration is None or configuration.is_default else configuration.label
    return members, member, ", ".join(group.targets), shown


def _shared_last(group: FindingGroup) -> tuple[bool, tuple[str, ...]]:
    several = len(group.members) > 1
    return several, group.members if several else ()


def _findings_lines(result: AuditResult, verbose: bool, width: int) -> list[_Line]:
    lines: list[_Line] = []
    # Groups of several members after the members' own, those of one set of members together.
    groups = sorted(group_findings(result.findings), key=_shared_last)
    for (_, member, target, configuration), shown in groupby(groups, key=_heading):
        heading: _Line = [(printable(member), "bold")]
        if target:
            heading += [(" ", ""), (f"({printable(target)})", "dim")]
        if configuration:
            heading += [(" with ", ""), (printable(configuration), "bold")]
        lines.append(heading)
        for group in shown:
            lines.extend(_render_group(group, verbose, width))
            lines.append([])
    return lines


def _write(lines: list[_Line], stream: TextIO | None, colour: bool | None, width: int) -> None:
    """Print the lines to `stream` (stdout when None), wrapped to `width`, styled where the
    terminal shows it; `colour` True says the text goes to a terminal by another way (the CLI
    renders into a buffer first), None leaves it to the stream."""
    if not lines:
        return
    lines = [_inert(wrapped) for line in lines for wrapped in _wrap(line, width)]
    target = sys.stdout if stream is None else stream
    if not (colour or (colour is None and _may_colour(target))):
        target.write("".join("".join(text for text, _ in line) + "\n" for line in lines))
        return
    from rich.console import Console

    # rich still honours the terminal's colour system, and NO_COLOR unless colour was asked
    # for (the CLI's --color always, or a terminal where NO_COLOR is not set).
    Console(
        file=stream,
        highlight=False,
        soft_wrap=True,
        force_terminal=colour,
        no_color=False if colour else None,
    ).print(_styled(lines))


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
    width: int | None = None,
) -> None:
    """Print only the findings, without notes or the summary line (nothing when there are none)."""
    width = width or WIDTH
    _write(_findings_lines(result, verbose, width), stream, colour, width)


def render_text(
    result: AuditResult,
    stream: TextIO | None = None,
    *,
    verbose: bool = False,
    colour: bool | None = None,
    width: int | None = None,
) -> None:
    """Print the report to `stream` (stdout by default), wrapped to `width` columns (WIDTH by
    default); `verbose` adds each finding's details; `colour` as for `_write`."""
    width = width or WIDTH
    lines: list[_Line] = [
        [("note:", "yellow"), (f" {printable(note)}", "")] for note in result.notes
    ]
    lines += _findings_lines(result, verbose, width)
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
    _write(lines, stream, colour, width)


def _verbose_flag() -> str:
    # A hook's arguments are in the user's configuration, not on a command line they type.
    return f"`{featcheck_command('-v')}`" if under_pre_commit() else "-v"


def _has_details(finding: Finding) -> bool:
    return bool(finding.notes or finding.chain or finding.alternatives or finding.why)
