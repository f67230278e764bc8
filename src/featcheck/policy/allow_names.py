"""Whether an `allow` entry names a member, crate or target that exists.

An entry is only reported unused (FC900) when the audit could have matched it: one for a member,
target or rule that was not audited is left alone. A typo (`member = "ap"`) would then never be
reported and never suppress anything; here such a name is told apart from one that merely was
not audited this time.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

from featcheck.cargo.argv_gate import GateError, target_triple
from featcheck.errors import FeatcheckError
from featcheck.policy.settings import Allow
from featcheck.workspace.names import crate_key
from featcheck.workspace.workspace import Workspace

TargetCheck = Callable[[str], object]
"""Asks rustc about a target (the runner's `target_cfg`); raises FeatcheckError for one it
does not know."""


class KnownNames:
    """The workspace's members, every crate its dependency graph holds or declares, and the
    targets rustc knows (asked only for a target an entry names that was not audited)."""

    def __init__(
        self,
        metadata: Workspace,
        audited_targets: list[str],
        target_check: TargetCheck | None,
    ) -> None:
        self._metadata = metadata
        self._audited_targets = set(audited_targets)
        self._target_check = target_check
        """None where rustc is not asked (--no-exec): no target is called unknown there."""

    @functools.cached_property
    def _members(self) -> list[str]:
        return sorted(m.name for m in self._metadata.members)

    @functools.cached_property
    def _crates(self) -> frozenset[str]:
        # Declared dependencies count too: an optional one no audited build turns on exists.
        return frozenset(crate_key(name) for name in self._metadata.index.packages.names())

    def misnamed(self, allow: Allow) -> str | None:
        """Why `allow` can never match a finding of this workspace, or None."""
        if allow.member is not None and allow.member not in self._members:
            return (
                f"no workspace member is named {allow.member} (members: {', '.join(self._members)})"
            )
        if allow.crate is not None and crate_key(allow.crate) not in self._crates:
            return f"no crate named {allow.crate} is in the dependency graph"
        if allow.target is not None and not self._target_exists(allow.target):
            return f"rustc knows no target {allow.target}"
        return None

    def _target_exists(self, target: str) -> bool:
        if target in self._audited_targets:
            return True
        try:
            target_triple(target)  # what cannot reach rustc's command line is no target
        except GateError:
            return False
        if self._target_check is None:
            return True
        if target.endswith(".json"):
            return True  # a target specification file: cargo resolves it where it builds
        try:
            self._target_check(target)
        except FeatcheckError:
            return False
        return True
