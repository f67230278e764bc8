"""A fix is a list of edits to declarations the user owns, and whether cargo confirmed it."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from featcheck.manifest.spans import KeyPath

Action = Literal["add-features", "remove-default-features", "add-dependency"]


@dataclass(frozen=True)
class Edit:
    """One change to one dependency declaration in one manifest."""

    manifest: Path
    """Absolute path of the manifest to edit."""
    declaration: KeyPath
    """Key path of the declaration, e.g. ("workspace", "dependencies", "burn")."""
    action: Action
    features: tuple[str, ...] = ()
    """For add-features and add-dependency: the features to add."""
    version: str = ""
    """For add-dependency: the version requirement."""
    file: str = ""
    """The manifest relative to the audited root, for reports."""
    line: int = 0
    """The declaration's line, for reports (0 for a new dependency)."""

    def describe(self) -> str:
        """The edit in words."""
        key = str(self.declaration[-1])
        if self.action == "add-features":
            listed = ", ".join(f'"{f}"' for f in self.features)
            return f"add {listed} to the features of {key}"
        if self.action == "remove-default-features":
            return f"remove `default-features = false` from {key}"
        listed = ", ".join(f'"{f}"' for f in self.features)
        return (
            f'add {key} = {{ version = "{self.version}", default-features = false, '
            f"features = [{listed}] }} to [dependencies]"
        )


@dataclass(frozen=True)
class Fix:
    """A candidate change for one finding."""

    edits: tuple[Edit, ...]
    confirmed: bool = False
    """cargo resolved the missing feature on a temporary copy with the edits applied."""
    safe: bool = False
    """Confirmed and the smallest candidate: what `--fix` applies."""
    note: str = ""
    """Why it could not be confirmed, when it was not."""

    @property
    def description(self) -> str:
        """The fix in words."""
        return "; ".join(edit.describe() for edit in self.edits)
