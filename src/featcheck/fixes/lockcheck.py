"""Whether cargo can pick versions for what a fix turns on, answered from Cargo.lock alone.

A fix only ever adds to what declarations ask for, so it can turn on optional dependencies that
nothing turned on before: cargo's resolve (what `cargo metadata` printed) has no edge for them.
cargo resolves such a dependency the way its `lock` step does: every package of Cargo.lock
stays locked, and a dependency a locked package gains is bound to a locked version of that name
when one satisfies its requirement. If none does but a locked version sits in the requirement's
semver-compatible range, cargo cannot select a second one there and fails ("all possible
versions conflict with previously selected packages"): the fix does not hold. Otherwise cargo
picks a version Cargo.lock does not hold yet, which only cargo can answer (`overlay.py`).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from featcheck.semantics import semver
from featcheck.workspace.model import DEV, FEATURE, Declaration, Edge
from featcheck.workspace.workspace import Workspace


@dataclass(frozen=True, order=True)
class Need:
    """A dependency a (counterfactual) build turns on that cargo's resolve has no edge for
    (ordered by package, then key)."""

    package: int
    """Index position of the declaring package."""
    key: str
    """The dependency's key in that package's manifest."""
    weak: bool = False
    """Turned on only through `dep?/feature`: cargo builds it no more than before, but the
    resolve that writes Cargo.lock takes every such dependency in (cargo issue 10801), so the
    lock must hold it, and cargo refuses a fix whose lock it cannot extend (whisper-burn:
    burn's defaults bring burn-train's ratatui, whose `unicode-width` conflicts)."""


@dataclass(frozen=True)
class Conflict:
    """A requirement no locked version satisfies, in a range Cargo.lock already fills."""

    name: str
    requirement: str
    required_by: str
    locked: str
    held_by: str
    """Who keeps the locked version, as `PACKAGE requires REQ`; empty when unknown."""
    update_helps: bool
    """Whether `cargo update -p NAME` can lift the locked version to one both accept."""

    def reason(self) -> str:
        """The one line a user reads: what conflicts, and what to do about it."""
        text = (
            f"{self.name} {self.requirement} required by {self.required_by} vs locked {self.locked}"
        )
        if self.held_by:
            text += f" ({self.held_by})"
        if self.update_helps:
            return f"{text}; `cargo update -p {self.name}` first"
        return text


Verdict = tuple[Edge, ...] | Conflict | None
"""Edges: the dependency bound to locked versions, one edge per declaration. None: no locked
version fits and none is in the way, so cargo must pick one."""


class LockView:
    """The versions Cargo.lock holds, as cargo's resolve printed them, and who requires them."""

    def __init__(self, metadata: Workspace) -> None:
        self._metadata = metadata
        self._verdicts: dict[Need, Verdict] = {}

    def check(self, need: Need) -> Verdict:
        """How cargo binds `need` given the lock (the same for every fix: computed once)."""
        if need not in self._verdicts:
            self._verdicts[need] = self._check(need)
        return self._verdicts[need]

    def _check(self, need: Need) -> Verdict:
        package = self._metadata.packages[need.package]
        bound = {edge.declaration for edge in package.edges}
        edges: list[Edge] = []
        for declaration in package.declarations:
            if declaration.key != need.key or declaration.kind is DEV or declaration in bound:
                continue
            if declaration.path is not None:
                return None  # a path package not in the resolve: cargo reads it first
            locked = self._locked.get(declaration.name, [])
            fitting = [(v, i) for v, i in locked if semver.matches(declaration.req, v)]
            if not fitting:
                return self._conflict(declaration, package.ref.name, locked)
            _, package_id = max(fitting, key=lambda pair: semver.parse_version(pair[0]) or ())
            edges.append(
                self._metadata.packages.edge(declaration, self._metadata.by_id[package_id])
            )
        return tuple(edges) if edges else None

    @functools.cached_property
    def _locked(self) -> dict[str, list[tuple[str, str]]]:
        """By name: (version, id) of every registry package of that name in the resolve."""
        return self._metadata.packages.registry_versions()

    def _conflict(
        self, declaration: Declaration, required_by: str, locked: list[tuple[str, str]]
    ) -> Conflict | None:
        if (low := _single_range(declaration.req)) is None:
            return None
        parsed, top = [(semver.parse_version(v), v, i) for v, i in locked], _next_range(low)
        in_range = [(v, i) for p, v, i in parsed if p is not None and _next_range(p) == top]
        if not in_range:
            return None  # a new semver-compatible version beside the locked ones: cargo picks
        version, package_id = in_range[0]
        holders = list(self._holders(package_id))
        lowest = ".".join(str(part) for part in low[:3])
        update_helps = bool(holders) and all(semver.matches(req, lowest) for _, req in holders)
        held = f"{holders[0][0]} requires {declaration.name} {holders[0][1]}" if holders else ""
        return Conflict(declaration.name, declaration.req, required_by, version, held, update_helps)

    def _holders(self, package_id: str) -> Iterator[tuple[str, str]]:
        """(package name, requirement) of each dependent of the locked package, members
        first: what keeps that version in Cargo.lock."""
        members = set(self._metadata.member_ids)
        dependents = self._metadata.packages.dependents(package_id)
        dependents.sort(key=lambda i: i not in members)
        name = self._metadata[package_id].name
        for dependent in dependents:
            info = self._metadata.get(dependent)
            if info is None:
                continue
            for declaration in info.declarations:
                if declaration.name == name and declaration.kind is not DEV:
                    yield info.name, declaration.req
                    break


def _single_range(requirement: str) -> semver.Version | None:
    """The lowest version `requirement` allows when every version it allows is
    semver-compatible with it (`^3.26`, `=0.2.0`, `~1.2`); None for a wider one."""
    if (bounds := semver.bounds(requirement)) is None:
        return None
    low, high = bounds
    if high is None or high > _next_range(low):
        return None
    return low


def _next_range(version: semver.Version) -> semver.Version:
    major, minor, patch, _ = version
    if major > 0:
        return (major + 1, 0, 0, 0)
    if minor > 0:
        return (0, minor + 1, 0, 0)
    return (0, 0, patch + 1, 0)


_SELECT = re.compile(r"failed to select a version for `([^`]+)`")
_REQUIRED_BY = re.compile(r"required by package `([^` ]+) v([^` ]+)")
_MEETS = re.compile(r"versions that meet the requirements `([^`]+)`")
_PREVIOUS = re.compile(r"previously selected package `([^` ]+) v([^` ]+)`")
_SATISFIES = re.compile(
    r"which satisfies dependency `[^`]* = \"([^\"]+)\"`[^`]*of package `([^` ]+)"
)


def cargo_reason(message: str) -> str:
    """cargo's refusal in one line: the version conflict it names, else its first error line."""
    select = _SELECT.search(message)
    required = _REQUIRED_BY.search(message)
    meets = _MEETS.search(message)
    previous = _PREVIOUS.search(message)
    if select and required and meets and previous:
        tail = message[previous.end() :]
        holder = _SATISFIES.search(tail)
        name = select[1]
        held = f"{holder[2]} requires {name} {holder[1]}" if holder else ""
        lowest = meets[1].lstrip("^=~>< ").split(",")[0].strip()
        parts = [*lowest.split("."), "0", "0"][:3]  # padded to three numbers
        lowest = ".".join(part if part.isdigit() else "0" for part in parts)
        helps = holder is not None and semver.matches(holder[1], lowest)
        return Conflict(name, meets[1], required[1], previous[2], held, helps).reason()
    lines = [line.strip() for line in message.splitlines() if line.strip()]
    first = next((line for line in lines if line.startswith("error")), lines[0] if lines else "")
    return first.removeprefix("error:").strip() or "cargo failed"


def needs_of(index: Workspace, position: int, features: Any) -> Iterator[Need]:
    """The dependencies a package's activated `features` turn on that the resolve lacks, each
    once: weak where only `dep?/feature` values name it."""
    package = index.packages[position]
    if not package.unresolved:
        return
    weak: dict[str, bool] = {}
    for feature in features:
        for value in package.features.get(feature, ()):
            if value.kind != FEATURE and value.name in package.unresolved:
                weak[value.name] = weak.get(value.name, True) and value.weak
    for key, only_weak in weak.items():
        yield Need(position, key, only_weak)
