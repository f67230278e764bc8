"""The protocol every report format follows, and the options the command line makes one with.

Apart from the format table (render/formats.py), which the command line loads at start-up, so
that building these classes is paid only by a run that renders.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple, Protocol, TextIO

if TYPE_CHECKING:
    from featcheck.report import AuditResult


class Renderer(Protocol):
    """Writes one audit's report. What a format needs besides the result (verbosity, colour,
    width, the CI environment) it is given when made, never per call."""

    def render(self, result: AuditResult, out: TextIO) -> None:
        """Write the whole report for `result` to `out`."""


class RenderOptions(NamedTuple):
    """What the command line tells a renderer (the text report reads all of it, others none)."""

    verbose: bool = False
    """Each finding's chain, notes, full why and other fixes (`-v`)."""
    quiet: bool = False
    """Only the findings: no notes, no summary line (`-q`)."""
    colour: bool | None = None
    """True: styled; False: plain; None: as the stream allows (see `text_report`)."""
    width: int | None = None
    """Columns to wrap to; None: the report's own width."""
