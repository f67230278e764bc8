"""Lines of styled runs, as the text report builds them: wrapped, made inert, and written plain
or, where the stream shows styles, through rich.

Where rich could not colour at all (not a terminal, nothing forcing colour) the runs are written as
they are, not through rich: rich costs about a millisecond per printed finding, which a workspace
of hundreds of members feels. rich itself is imported with this module, which the command line
loads while cargo works (cli/lazy.py); only a --no-exec run waits for it (~26 ms, docs/speed.md).
"""

from __future__ import annotations

import os
import re
import sys
from typing import TextIO

from rich.console import Console
from rich.text import Text

from featcheck.render.safe_text import inert

Run = tuple[str, str]
"""Text and its rich style ("" for none)."""
Line = list[Run]

_HANGING = re.compile(r"  = [a-z]+: |  --> |note: |[a-z]+\[[^\]]*\] ")
"""The label a wrapped line's continuation lines are indented past (`  = why: `, ...)."""
_QUOTED = re.compile(r" *\d* \|")
"""A line of the quoted manifest (`  9 | ...`): shortened to fit, never wrapped."""


def wrap(line: Line, width: int) -> list[Line]:
    """`line` broken at spaces to `width`, each continuation indented past its label (a
    hanging indent); a word longer than a whole line is broken where it must be."""
    plain = "".join(text for text, _ in line)
    if len(plain) <= width or _QUOTED.match(plain):
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


def write_lines(lines: list[Line], stream: TextIO | None, colour: bool | None, width: int) -> None:
    """Print the lines to `stream` (stdout when None), wrapped to `width`, styled where the
    terminal shows it; `colour` True says the text goes to a terminal by another way (the CLI
    renders into a buffer first), None leaves it to the stream."""
    if not lines:
        return
    lines = [_inert(wrapped) for line in lines for wrapped in wrap(line, width)]
    target = sys.stdout if stream is None else stream
    if not (colour or (colour is None and _may_colour(target))):
        target.write("".join("".join(text for text, _ in line) + "\n" for line in lines))
        return
    _print_styled(lines, stream, colour)


def _print_styled(lines: list[Line], stream: TextIO | None, colour: bool | None) -> None:
    text = Text(end="\n")
    for index, line in enumerate(lines):
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


def _inert(line: Line) -> Line:
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
