"""The text report's lines: runs of styled text, wrapped, made inert, and written plain or, where
the stream shows styles, through rich; the quoted manifest line; the hints at the report's foot;
the compact report of an audit over several build configurations.

Where rich could not colour at all (not a terminal, nothing forcing colour) the runs are written as
they are, not through rich: rich costs about a millisecond per printed finding, which a workspace
of hundreds of members feels. rich itself is imported only where it prints styles: a hook's or
CI's report, written to a pipe, never loads it (~25 ms of CPU, docs/speed.md).

A finding's manifest line is quoted as rustc quotes source: the line cut around its span, the
span underlined, and the first line of the declaration around it where that starts earlier
(`[dependencies.burn]`, `burn = {`), so that the crate is always in sight.

The hints name commands so that they run where the report is read. Under pre-commit (which sets
PRE_COMMIT=1) featcheck runs from the hook's own virtual environment, where `featcheck` may not be
on PATH and `--fix` is no flag one can add to `git commit`: no command works for everyone there,
so the hints say what each needs (README, "In CI and in hooks"). (featcheck is installed from its
repository, not from a package index: a hint naming an index's `featcheck` would run whatever
someone published under that name.)

An audit over several build configurations (`--each-feature`, `configurations`) is shown as a
table of builds by rule first, then each edit once per rule. Auditing each feature on its own
repeats a verdict build after build, and a GPU backend built without its defaults lacks both
`fusion` (FC004) and `autotune` (FC005), which one edit adds. Printed one finding at a time,
under one heading per configuration, that is a page of repeats. So the table says which build
has which rule's findings, and under each member's heading the findings that share the place
and the edit to make, in the same builds, are one block: each verdict, the place quoted once,
the builds, each rule's why, the one fix (text_report.py draws it). `-v` keeps a block per
finding: it shows what differs between them.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TextIO

from featcheck.featureset import FeatureSelection
from featcheck.render.common import FindingGroup
from featcheck.render.safe_text import inert, printable
from featcheck.report import AuditResult, Finding

Run = tuple[str, str]
"""Text and its rich style ("" for none)."""
Line = list[Run]

_HANGING = re.compile(r"  = [a-z]+: |  --> |note: |[a-z]+\[[^\]]*\] ")
"""The label a wrapped line's continuation lines are indented past (`  = why: `, ...)."""
_UNWRAPPED = re.compile(r" *\d* \|| (?: +(?:\d+|\.))+  \S| (?: +\S+)+  (?:member: )?build$")
"""A line of the quoted manifest (`  9 | ...`), shortened to fit, or of the configuration
table (`configuration_table`): never wrapped."""


def wrap(line: Line, width: int) -> list[Line]:
    """`line` broken at spaces to `width`, each continuation indented past its label (a
    hanging indent); a word longer than a whole line is broken where it must be."""
    plain = "".join(text for text, _ in line)
    if len(plain) <= width or _UNWRAPPED.match(plain):
        return [line]
    label = _HANGING.match(plain)
    indent = min(len(label.group()) if label else 4, width // 2)
    lines: list[Line] = [[]]
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


def write_lines(lines: list[Line], stream: TextIO, colour: bool | None, width: int) -> None:
    """Print the lines to `stream`, wrapped to `width`, styled where the terminal shows it;
    `colour` True says the text goes to a terminal by another way (the CLI renders into a buffer
    first), None leaves it to the stream."""
    if not lines:
        return
    shown: list[Line] = []
    for line in lines:
        for wrapped in wrap(line, width):
            # Where checkout text in a line would read as a workflow command, the line becomes
            # one unstyled run with the command broken (the runs are printable already).
            plain = "".join(text for text, _ in wrapped)
            safe = inert(plain)
            shown.append(wrapped if safe == plain else [(safe, "")])
    if not (colour or (colour is None and _may_colour(stream))):
        stream.write("".join("".join(text for text, _ in line) + "\n" for line in shown))
        return
    from rich.console import Console
    from rich.text import Text

    text = Text(end="\n")
    for index, line in enumerate(shown):
        if index:
            text.append("\n")
        for run, style in line:
            text.append(run, style or None)
    # rich still honours the terminal's colour system, and NO_COLOR unless colour was asked
    # for (the CLI's --color always, or a terminal where NO_COLOR is not set).
    Console(
        file=stream,
        highlight=False,
        soft_wrap=True,
        force_terminal=colour,
        no_color=False if colour else None,
    ).print(text)


def _may_colour(stream: TextIO) -> bool:
    """Whether rich could print styles to `stream`: a terminal, an environment that forces
    colour (rich reads FORCE_COLOR and TTY_COMPATIBLE), or a notebook. Where it could, rich
    decides; everywhere else it would print the plain text."""
    if "FORCE_COLOR" in os.environ or "TTY_COMPATIBLE" in os.environ or "IPython" in sys.modules:
        return True
    try:
        return stream.isatty()
    except ValueError:  # a closed stream
        return False


_TAB = "    "
"""What a tab in a quoted manifest line is shown as (columns count it as one character)."""
_ELLIPSIS = "..."


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


def quote(finding: Finding, width: int) -> list[Line]:
    """The manifest line quoted as the module's text says, shortened to `width`."""
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
    opening = finding.declaration  # quoted where it starts on an earlier line of the file
    if opening is not None and not (
        opening.source_line and opening.file == location.file and opening.line < location.line
    ):
        opening = None
    numbers = [str(n) for n in (*([opening.line] if opening else []), location.line)]
    gutter = max(len(n) for n in numbers)
    number = numbers[-1].rjust(gutter)
    pad = " " * gutter
    room = max(20, width - len(f"  {number} | "))
    text, column = _window(
        before + marked + shown(source[end:]), len(before), len(before) + len(marked), room
    )
    underline = " " * column + "^" * max(1, min(len(marked), len(text) - column))
    lines: list[Line] = [[(f"{pad} |", "blue")]]
    if opening is not None:
        header = _window(shown(opening.source_line), 0, 0, room)[0]
        lines.append([(f"{numbers[0].rjust(gutter)} |", "blue"), (f" {header}", "")])
        if location.line - opening.line > 1:
            lines.append([("...", "blue")])  # the lines between, as rustc elides them
    return [
        *lines,
        [(f"{number} |", "blue"), (f" {text}", "")],
        [(f"{pad} |", "blue"), (" ", ""), (underline, "bold")],
    ]


FIX_HOOK = "pre-commit run featcheck-fix --hook-stage manual --all-files"
"""Runs the `featcheck-fix` hook (`featcheck --fix`), which only runs when asked for; with
`--all-files`, as without it the hook is skipped when no manifest is staged."""


def details_hint(code: str, result: AuditResult) -> str:
    """How to see what the compact report leaves out, and a rule's documentation (`code`, a
    project's own rule code included)."""
    rule = f"`featcheck rule {printable(code)}` explains a rule"
    if os.environ.get("PRE_COMMIT") != "1":  # not a pre-commit hook
        return f"-v shows each finding's chain and measurements; {rule}"
    return (
        f"with featcheck installed, `featcheck -v{_project(result)}` shows each finding's chain "
        f"and measurements; {rule}"
    )


def fix_hint(result: AuditResult) -> str | None:
    """Under pre-commit, how to run the `--fix` the findings name; None elsewhere."""
    if os.environ.get("PRE_COMMIT") != "1":
        return None
    return (
        f"--fix under pre-commit: `{FIX_HOOK}` with the featcheck-fix hook configured, or "
        f"`featcheck --fix{_project(result)}` with featcheck installed"
    )


def _project(result: AuditResult) -> str:
    """The audited directory as an argument from here (pre-commit runs hooks at the repository
    root): ` crates/app`, or nothing for the current directory."""
    audited = result.audited or result.root
    try:
        relative = Path(os.path.relpath(audited))
    except ValueError:  # another drive on Windows
        relative = audited
    if relative == Path("."):
        return ""
    import shlex  # only under pre-commit, and only with findings

    return " " + printable(shlex.quote(relative.as_posix()))


def several_configurations(result: AuditResult) -> bool:
    return any(len(audited) > 1 for audited in result.configurations.values())


def configuration_table(result: AuditResult) -> list[Line]:
    """How many findings of each rule each audited build of each member with findings has,
    one row per build in audit order (a member's builds without findings too: they are clean),
    one column per rule; empty when there is nothing to tabulate (one build per member)."""
    members = list(dict.fromkeys(f.member for f in result.findings if f.member is not None))
    codes = sorted({f.code for f in result.findings if f.configurations})
    if not members or not codes or not several_configurations(result):
        return []
    several = len(members) > 1
    rows: list[tuple[str, list[str]]] = []
    for member in members:
        found = [f for f in result.findings if f.member == member]
        for build in result.configurations.get(member, ()):
            label = printable(build.label)
            counted = (sum(f.code == c and build in f.configurations for f in found) for c in codes)
            shown = [str(count) if count else "." for count in counted]  # ".": none
            rows.append((f"{printable(member)}: {label}" if several else label, shown))
    heading = "build" if not several else "member: build"
    cells = [max(len(code), 3) + 2 for code in codes]
    lines: list[Line] = [[("findings by build configuration and rule:", "bold")]]
    # The counts first, under their codes, the builds' names after them, whatever their length.
    for index, (label, counts) in enumerate([(heading, codes), *rows]):
        row = "".join(c.rjust(w) for c, w in zip(counts, cells, strict=True)) + "  " + label
        lines.append([(row, "" if index else "dim")])
    return [*lines, []]


def edit_blocks(groups: Sequence[FindingGroup]) -> list[list[FindingGroup]]:
    """`groups` (of one heading) gathered into blocks: those at the same place with the same
    confirmed edits are one, whichever crate and build (see the module's text); blocks, and the
    groups in each, in rule order, then in report order."""
    blocks: dict[tuple[object, ...], list[FindingGroup]] = {}
    for position, group in enumerate(groups):
        blocks.setdefault(_edit_key(group, position), []).append(group)
    ordered = [sorted(block, key=lambda group: group.lead.code) for block in blocks.values()]
    return sorted(ordered, key=lambda block: block[0].lead.code)


def _edit_key(group: FindingGroup, position: int) -> tuple[object, ...]:
    """What the groups of one block share; a group without a location or a fix is alone."""
    lead = group.lead
    if lead.location is None or lead.fix is None:
        return ("alone", position)
    place = (lead.location.file, lead.location.line, lead.location.column)
    edits = frozenset(
        (e.file, e.line, tuple(map(str, e.declaration)), e.action, frozenset(e.features), e.version)
        for e in lead.fix.edits
    )
    return (place, edits, lead.fix.safe, group.members)


def builds_line(block: Sequence[FindingGroup]) -> str:
    """The builds a block is in, where its heading names the member and target: the
    configurations (`default features` among them), each crate's own where the block speaks
    of several (`burn-cuda 0.22.1: --features cuda ...; burn-wgpu 0.22.1: ...`)."""
    by_crate: dict[str, list[FeatureSelection]] = {}
    for group in block:
        crate = f"{group.lead.crate} {group.lead.crate_version}"
        listed = by_crate.setdefault(crate, [])
        listed += [c for c in group.configurations if c not in listed]
    shown = {
        crate: "; ".join(printable(c.label) for c in found) for crate, found in by_crate.items()
    }
    if len(shown) == 1:
        return next(iter(shown.values()))
    return "; ".join(f"{printable(crate)}: {labels}" for crate, labels in shown.items())


def rule_why(block: Sequence[FindingGroup], code: str) -> str:
    """The why of rule `code` in a block, once: the first finding's, which names its crate
    (`{crate}` in the rule's doc); where the rule's findings there are on several crates, the
    name reads as all of them (`burn-cuda or burn-wgpu defaults to ...`)."""
    leads = [group.lead for group in block if group.lead.code == code]
    why = leads[0].why
    crates = list(dict.fromkeys(lead.crate for lead in leads))
    if len(crates) > 1:
        why = why.replace(crates[0], f"{', '.join(crates[:-1])} or {crates[-1]}")
    return why
