"""The cargo check a run may need: fixes that turn on dependencies Cargo.lock lacks.

Resolution in memory answers every candidate whose packages the lockfile already holds
(`lockcheck.py`). An edit that turns on a package nothing in the workspace used before needs
cargo to pick its version first, and cargo may refuse: re-enabling burn's defaults can pull a
crate whose requirement conflicts with a version the lock keeps. Those candidates, for all
findings of the run together, are written into one temporary copy of the workspace, cargo
metadata runs there once, and the resolver answers again over what it printed. Only when cargo
refuses the whole overlay is each fix asked alone, in the same copy, to find which one it
refuses. The user's files are never touched.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from featcheck.errors import FeatcheckError
from featcheck.fixes.apply import plan_edits
from featcheck.fixes.lockcheck import cargo_reason
from featcheck.fixes.reach import added_packages
from featcheck.fixes.search import StillFlagged
from featcheck.fixes.workspace_copy import WorkspaceCopy
from featcheck.graph import DependencyGraph, Node, closure
from featcheck.report import Edit
from featcheck.resolution import resolve_builds
from featcheck.workspace.workspace import Workspace

if TYPE_CHECKING:
    from featcheck.fixes.counterfactual import WhatIf
    from featcheck.placement import Flagged

Pending = tuple["Flagged", tuple[Edit, ...], tuple[str, ...]]
"""A fix that only cargo can confirm: the detection in one member's build on one target (its
build without the fix is what the fix's additions are counted against), the fix's edits, and
the dependencies they turn on that Cargo.lock holds no version of (`package/KEY`)."""


@dataclass(frozen=True)
class Answer:
    """cargo's answer for one pending fix."""

    cleared: bool
    """cargo resolved the copy, and with its versions the finding is gone."""
    added: tuple[str, ...] = ()
    """Packages the fix adds to the flagged builds it was asked for, each once (`name version`)."""
    locked: tuple[str, ...] | None = None
    """Packages it adds to Cargo.lock, which holds every platform's and every optional
    dependency a feature names, built here or not (voxcpm-rs: 3 to the build, 168 to the lock);
    None where the workspace has no Cargo.lock."""
    reason: str = ""
    """Why cargo could not resolve it, or not check it, in one line."""


_UNCHECKED = "cargo could not check it: "


@dataclass
class OverlayCheck:
    """Confirms pending fixes with `cargo metadata` over one edited copy."""

    workspace_root: Path
    metadata_of: Callable[[Path, Path], Workspace]
    """Runs cargo metadata for the manifest at the given path, in the copy at the other (the
    audit's cargo settings)."""
    what_if: WhatIf
    """The audit's resolver settings: targets, host, resolver, feature unification."""
    still_flagged: StillFlagged
    beside: tuple[Path, ...] = ()
    """The path packages' directories, and the checkout they may be copied from."""
    within: Path | None = None

    def __post_init__(self) -> None:
        self._copy = WorkspaceCopy(self.workspace_root, self.beside, self.within, for_cargo=True)

    def close(self) -> None:
        self._copy.close()

    def confirm(self, pending: Sequence[Pending]) -> list[Answer]:
        together = self._resolve([e for _, edits, _ in pending for e in edits])
        groups = list(dict.fromkeys(edits for _, edits, _ in pending))
        if not isinstance(together, str) or len(groups) == 1:
            # Resolved with every fix made: each counts only what its own new dependencies
            # bring (two fixes of one build each said they added what both do).
            several = len(groups) > 1
            answers = [self._answer(together, item, several, needs) for item, _, needs in pending]
        else:
            alone = {edits: self._resolve(list(edits)) for edits in groups}
            answers = [self._answer(alone[edits], item) for item, edits, _ in pending]
        gained: dict[tuple[Edit, ...], set[str]] = {}
        for (_, edits, _), answer in zip(pending, answers, strict=True):
            gained.setdefault(edits, set()).update(answer.added)
        return [
            replace(a, added=tuple(sorted(gained[e]))) if a.cleared else a
            for (_, e, _), a in zip(pending, answers, strict=True)
        ]

    def _resolve(self, edits: list[Edit]) -> _Resolved | str:
        """cargo's metadata of the copy with `edits` made, and what its Cargo.lock gained; or
        why there is none."""
        if self._copy.left_out:
            outside = os.path.relpath(self._copy.left_out[0], self._copy.root)
            left_out = f"leaves out {outside}, a path package outside the checkout"
            return f"{_UNCHECKED}the copy it is checked on {left_out}"
        try:
            self._copy.apply(plan_edits(edits))
            metadata = self.metadata_of(self._copy.path / "Cargo.toml", self._copy.tree)
            before = self._copy.lockfile(as_copied=True)
            gained = None if before is None else _locked(self._copy.lockfile()) - _locked(before)
            return metadata, gained
        except ValueError:
            return f"{_UNCHECKED}a manifest to edit lies outside the workspace"
        except FeatcheckError as error:
            return "cargo cannot resolve it: " + self._copy.original(cargo_reason(error.message))
        except OSError as error:
            return f"{_UNCHECKED}the copy could not be made: {error.strerror or error}"

    def _answer(
        self,
        resolved: _Resolved | str,
        item: Flagged,
        with_others: bool = False,
        needs: tuple[str, ...] = (),
    ) -> Answer:
        """cargo's answer for `item`'s fix, over what cargo `resolved` with its edits made (and,
        where `with_others`, the other pending fixes' too: the packages it adds, to the build
        and to Cargo.lock, are then those its `needs` bring)."""
        if isinstance(resolved, str):
            return Answer(False, reason=resolved)
        metadata, gained = resolved
        # Path packages have other ids in the copy: find the member by name and version.
        wanted = (item.member.name, item.member.version)
        member = next((m for m in metadata.members if (m.name, m.version) == wanted), None)
        if member is None:
            return Answer(False, reason=f"{_UNCHECKED}the member is not in the fixed copy")
        graphs = resolve_builds(
            metadata,
            [member.id],
            [self.what_if.cfgs[item.target]],
            self.what_if.resolver,
            host=self.what_if.host,
            features=item.selection,
            unify_workspace=self.what_if.unify_workspace,
        )
        graph = graphs[(member.id, item.target)]
        crate = item.detection.node.package
        if crate.is_local:
            # The copy's path packages print another directory; name and version identify.
            same = [n.package for n in graph.nodes() if n.name == crate.name]
            crate = next((s for s in same if s.version == crate.version), crate)
        excused = frozenset(item.detection.deferred_to)
        flagged = self.still_flagged(item.member, item.target, graph, crate, excused)
        added = added_packages(item.view.graph, graph)
        if with_others:
            brought = _brought_by(metadata, graph, needs)
            added = [package for package in added if package in brought]
        locked = None if gained is None else _locked_by(metadata, gained, with_others, needs)
        return Answer(not flagged, tuple(added), locked)


def _brought_by(metadata: Workspace, graph: DependencyGraph, needs: Iterable[str]) -> set[str]:
    """`name version` of every package in `graph` at or below the dependencies `needs` names
    (`package/KEY`, as `WhatIf.describe` writes them) of the packages in it."""
    starts: list[Node] = []
    for need in needs:
        name, _, key = need.rpartition("/")
        for node in graph.named(name):
            package = metadata.package_of(node.package)
            if package is None:
                continue
            for edge in package.edges:
                if edge.name_in_toml == key:
                    dep = metadata.packages[edge.dep]
                    starts += [n for n in graph.named(dep.name) if n.version == dep.version]
    return {f"{n.name} {n.version}" for n in closure(starts, graph.dependencies)}


_Resolved = tuple[Workspace, "set[tuple[str, str]] | None"]
"""cargo's metadata of the edited copy, and the packages its Cargo.lock gained (`name`,
`version`); None where there was no Cargo.lock to gain them."""

_LOCKED = re.compile(r'^\[\[package\]\]\r?\nname = "([^"]*)"\r?\nversion = "([^"]*)"', re.M)


def _locked(lockfile: bytes | None) -> set[tuple[str, str]]:
    """The name and version of every package of a Cargo.lock, as cargo writes it."""
    return set(_LOCKED.findall((lockfile or b"").decode("utf-8", "replace")))


def _locked_by(
    after: Workspace, gained: set[tuple[str, str]], with_others: bool, needs: Iterable[str]
) -> tuple[str, ...]:
    """`name version` of what Cargo.lock `gained`; `with_others` (fixes resolved together),
    those at or below the dependencies `needs` names in cargo's resolution `after`, as
    `_brought_by` counts a build's."""
    if with_others:
        listed = after.packages.listed
        new = {i for i, p in enumerate(listed) if (p.name, p.version) in gained}
        starts: list[int] = []
        for need in needs:
            name, _, key = need.rpartition("/")
            for i in (i for i, p in enumerate(listed) if p.name == name):
                starts += [e.dep for e in after.packages[i].edges if e.name_in_toml == key]
        reached = closure(starts, after.packages.resolved_positions)
        gained = {(listed[i].name, listed[i].version) for i in reached if i in new}
    return tuple(sorted(f"{name} {version}" for name, version in gained))
