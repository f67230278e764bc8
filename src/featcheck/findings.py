"""What an audit reports: findings that know rule, member, crate, feature, target and place."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field

from featcheck.fixes.model import Fix


class Severity(enum.IntEnum):
    """How much a finding matters; ordered so that `>=` compares levels."""

    INFO = 10
    WARNING = 20
    ERROR = 30

    @property
    def label(self) -> str:
        """The lowercase name used in output and configuration."""
        return self.name.lower()

    @classmethod
    def parse(cls, text: str) -> Severity:
        """Read a severity name such as `warning`; raises ValueError for unknown names."""
        try:
            return cls[text.strip().upper()]
        except KeyError:
            names = ", ".join(s.label for s in cls)
            raise ValueError(f"unknown severity {text!r} (expected one of: {names})") from None


@dataclass(frozen=True)
class Location:
    """A span in a manifest, relative to the audited root; lines and columns are 1-based."""

    file: str
    """The manifest's path relative to the audited root, with forward slashes."""
    line: int
    """1-based line of the span's start."""
    column: int
    """1-based column (in characters) of the span's start."""
    end_line: int
    """1-based line where the span ends."""
    end_column: int
    """1-based column just past the span's last character."""
    source_line: str = ""
    """The text of the start line, for quoting in reports."""


@dataclass(frozen=True)
class Finding:
    """One configuration that costs performance in what cargo builds for a member and target."""

    code: str
    """Stable rule code, e.g. `FC001`; never reused for another rule."""
    rule: str
    """The rule's kebab-case name, e.g. `flex-without-rayon`."""
    severity: Severity
    member: str | None
    """The workspace member whose build is affected; None when saved tree text cannot tell."""
    crate: str
    """The crate built without the feature, e.g. `burn-flex`."""
    crate_version: str
    feature: str
    """The missing feature, e.g. `rayon`."""
    target: str | None
    """The target triple audited; None when saved tree text does not say."""
    message: str
    """One sentence: what is wrong and what it costs."""
    location: Location | None
    """The manifest span to edit; None when the audit had no manifest (saved tree text)."""
    why: str = ""
    """Why it matters, with the measured numbers and their source."""
    suggestion: str = ""
    """The change to make, in words."""
    notes: tuple[str, ...] = field(default_factory=tuple)
    """Caveats about how the verdict was reached (e.g. what saved tree text cannot show)."""
    chain: tuple[str, ...] = field(default_factory=tuple)
    """The why chain: how the feature would arrive, what cut it, where else it is enabled."""
    fix: Fix | None = None
    """The smallest change cargo confirmed (what `--fix` applies), if any."""
    alternatives: tuple[Fix, ...] = field(default_factory=tuple)
    """Other candidate changes, smallest first (unconfirmed unless marked)."""
    declaration: Location | None = None
    inherited_by: Location | None = None
    """For a cut in `[workspace.dependencies]`: the member's own `workspace = true` declaration,
    where an inline suppression comment counts too."""
    """The whole dependency declaration that `location` lies in (key to end of value; the
    `[dependencies.x]` header to its last key for the table form), for suppression comments."""
    confidence: str = "resolved"
    """`resolved`: from the resolved feature graph; `manifest-only`: read from the members' own
    manifests alone, because a --no-exec audit lacked the dependencies' manifests."""
