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
which turns itself off when output is not a terminal or NO_COLOR is set (styled_lines.py).
"""

from __future__ import annotations

from dataclasses import replace
from itertools import groupby
from typing import TextIO

from featcheck.grouping import FindingGroup, group_findings
from featcheck.render.common import builds_of_group, cost_text, count_line, why_line
from featcheck.render.hints import featcheck_command, fix_command, under_pre_commit
from featcheck.render.renderer import RenderOptions
from featcheck.render.safe_text import printable
from featcheck.render.styled_lines import Line, write_lines
from featcheck.report import AuditResult, Finding, Fix
from featcheck.severity import Confidence, Severity

_STYLE = {Severity.ERROR: "bold red", Severity.WARNING: "bold yellow", Severity.INFO: "bold cyan"}
_TAB = "    "
"""What a tab in a quoted manifest line is shown as (columns count it as one character)."""

_EQUALS: Line = [("  ", ""), ("=", "blue"), (" ", "")]
"""How each detail line of a finding starts: `  = `."""

WIDTH = 100
"""The width the report is wrapped to where no terminal says its own (piped, a file)."""
_ELLIPSIS = "..."
"""What stands for the cut part of a long manifest line, as rustc marks it."""


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


def _quote(finding: Finding, width: int) -> list[Line]:
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


def _where(fix: Fix) -> str:
    """The files the fix edits, each at its first edited line where it has one."""
    lines: dict[str, int] = {}
    for edit in fix.edits:
        known = lines.get(edit.file, 0)
        lines[edit.file] = min(known, edit.line) if known and edit.line else known or edit.line
    return ", ".join(sorted(f"{file}:{line}" if line else file for file, line in lines.items()))


def _described(fix: Fix) -> str:
    """The fix in words; the same edit in several manifests (one per member) said once, the
    files following in `_where`."""
    said = list(dict.fromkeys(edit.describe() for edit in fix.edits))
    files = {edit.file for edit in fix.edits}
    return said[0] if len(said) == 1 and len(files) > 1 else fix.description


def _fix_line(finding: Finding) -> Line | None:
    fix = [*_EQUALS, ("fix:", "green")]
    if finding.fix is not None:
        added = _added(finding.fix)
        safe = finding.fix.safe
        confirmed = safe and finding.fix.confirmed
        applies = f"`{fix_command()}` applies it" if confirmed else printable(finding.fix.note)
        text = (
            f" {printable(_described(finding.fix))} ({printable(_where(finding.fix))}); with it "
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


def _detail(label: str, text: str) -> Line:
    """`  = label: text`, the text made printable."""
    return [*_EQUALS, (f"{label}: {printable(text)}", "")]


def _details(finding: Finding) -> list[Line]:
    """What only `-v` shows before the fix: notes, the chain and the whole why."""
    lines = [_detail("note", note) for note in finding.notes]
    if len(finding.configurations) > 1:
        also = "; ".join(c.label for c in finding.configurations[1:])
        lines.append(_detail("note", f"also in the build with {also}"))
    lines += [_detail("chain", link) for link in finding.chain]
    if finding.why:
        lines.append(_detail("why", " ".join(finding.why.split())))
    return lines


def _alternatives(finding: Finding) -> list[Line]:
    """The other candidate fixes, smallest first (`-v` only)."""
    lines: list[Line] = []
    for alternative in finding.alternatives:
        state = "confirmed" if alternative.confirmed else "not confirmed"
        if alternative.note:
            state += f": {alternative.note}"
        text = f"{alternative.description} ({_where(alternative)}; {state})"
        lines.append(_detail("or", text))
    return lines


def _render_group(group: FindingGroup, verbose: bool, width: int) -> list[Line]:
    """The lead finding, with the builds a repeated cut covers named under its quote."""
    lead = group.lead
    if group.fix is not lead.fix:  # each member's own edit: the fix line names them all
        lead = replace(lead, fix=group.fix)
    lines = _render_finding(lead, verbose, group.confidence, width)
    if group.shared:
        # After the verdict, the place and its quote: where the cut costs, before why and fix.
        after = 1 + (1 + len(_quote(lead, width)) if lead.location is not None else 0)
        lines.insert(after, _detail("builds", builds_of_group(group)))
    return lines


def _render_finding(
    finding: Finding, verbose: bool, confidence: Confidence, width: int
) -> list[Line]:
    lines: list[Line] = [
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
    if confidence is not Confidence.RESOLVED:
        # Always shown: a verdict read from the manifests alone must never pass for a resolved one.
        lines.append(
            _detail(
                "confidence",
                f"{confidence.value} (packages --no-exec could not read may turn the feature "
                "on; see the note above)",
            )
        )
    if verbose:
        lines.extend(_details(finding))
    elif finding.why:
        lines.append(_detail("why", why_line(finding)))
    if finding.cost is not None:
        lines.append(_detail("cost", cost_text(finding.cost)))
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


def _findings_lines(result: AuditResult, verbose: bool, width: int) -> list[Line]:
    lines: list[Line] = []
    # Groups of several members after the members' own, those of one set of members together.
    groups = sorted(group_findings(result.findings), key=_shared_last)
    for (_, member, target, configuration), shown in groupby(groups, key=_heading):
        heading: Line = [(printable(member), "bold")]
        if target:
            heading += [(" ", ""), (f"({printable(target)})", "dim")]
        if configuration:
            heading += [(" with ", ""), (printable(configuration), "bold")]
        lines.append(heading)
        for group in shown:
            lines.extend(_render_group(group, verbose, width))
            lines.append([])
    return lines


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
    write_lines(_findings_lines(result, verbose, width), stream, colour, width)


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
    lines: list[Line] = [
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
    write_lines(lines, stream, colour, width)


def _verbose_flag() -> str:
    # A hook's arguments are in the user's configuration, not on a command line they type.
    return f"`{featcheck_command('-v')}`" if under_pre_commit() else "-v"


def _has_details(finding: Finding) -> bool:
    return bool(finding.notes or finding.chain or finding.alternatives or finding.why)


class TextRenderer:
    """The terminal report (`render_text`), or with `quiet` only the findings
    (`render_findings`)."""

    def __init__(self, options: RenderOptions) -> None:
        self.options = options

    def render(self, result: AuditResult, out: TextIO) -> None:
        write = render_findings if self.options.quiet else render_text
        options = self.options
        write(result, out, verbose=options.verbose, colour=options.colour, width=options.width)


def renderer(options: RenderOptions) -> TextRenderer:
    """The text renderer, as `formats.FORMATS` names it."""
    return TextRenderer(options)
