"""The quoted manifest line of a finding, as rustc quotes source: the line cut around its span,
the span underlined, and the first line of the declaration around it where that starts earlier
(`[dependencies.burn]`, `burn = {`), so that the crate is always in sight."""

from __future__ import annotations

from featcheck.render.safe_text import printable
from featcheck.render.styled_lines import Line
from featcheck.report import Finding, Location

_TAB = "    "
"""What a tab in a quoted manifest line is shown as (columns count it as one character)."""
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


def quote(finding: Finding, width: int) -> list[Line]:
    """The manifest line with a caret underline, as compilers draw it, shortened to `width`;
    below the first line of its declaration where that starts higher up (a `[dependencies.x]`
    table, a multi-line inline table): the line alone may not name the crate."""
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
    opening = _opening_line(finding)
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


def _opening_line(finding: Finding) -> Location | None:
    """The declaration around the finding's line where it starts on an earlier line of the same
    file (its `source_line` is that first line), else None."""
    location, declaration = finding.location, finding.declaration
    if location is None or declaration is None or not declaration.source_line:
        return None
    if declaration.file != location.file or declaration.line >= location.line:
        return None
    return declaration
