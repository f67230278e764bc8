"""The levels a finding is reported at and judged by, and counts in words: the ground floor
(it imports nothing) under the report, the rules, the command line and the probe, which all
speak of them."""

from __future__ import annotations

import enum


class Severity(enum.IntEnum):
    """How much a finding matters; ordered so that `>=` compares levels."""

    INFO = 10
    WARNING = 20
    ERROR = 30

    @property
    def label(self) -> str:
        return self.name.lower()

    @classmethod
    def parse(cls, text: str) -> Severity:
        try:
            return cls[text.strip().upper()]
        except KeyError:
            names = ", ".join(s.label for s in cls)
            raise ValueError(f"unknown severity {text!r} (expected one of: {names})") from None


class Confidence(enum.Enum):
    """How sure a finding is of the build it speaks of."""

    RESOLVED = "resolved"
    """From the resolved feature graph."""
    INCOMPLETE = "incomplete"
    """A --no-exec audit could not read packages that may turn the feature on (noexec.gaps)."""


class FailOn(enum.Enum):
    """The least severity that fails a check (`--fail-on`, the configuration's `fail-on`)."""

    ERROR = "error"
    WARNING = "warning"
    INFO = "info"
    NEVER = "never"

    @property
    def threshold(self) -> Severity | None:
        """The severity at and above which a finding fails the check; None never fails."""
        return None if self is FailOn.NEVER else Severity[self.name]


def plural(count: int, word: str) -> str:
    """`1 error`, `2 errors`, never `1 error(s)`."""
    return f"{count} {word if count == 1 else word + 's'}"
