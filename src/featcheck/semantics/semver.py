"""Cargo version requirements (`=0.22.1`, `^0.21`, `~1.2`, `>=1, <2`, `1.*`), enough to tell
which of several declarations of one package a resolved version came from.

Major, minor and patch numbers are what cargo holds them in, a u64: a longer number is not a
version (cargo refuses it: "value of patch version number exceeds u64::MAX"). They are never
converted before that check, so a number of any length costs nothing and raises nothing (Python
refuses to convert more than 4,300 digits).
"""

from __future__ import annotations

import functools
import re

_COMPARATOR = re.compile(
    r"^\s*(?P<op>=|>=|<=|>|<|~|\^)?\s*v?(?P<major>\d+|\*|x|X)"
    r"(?:\.(?P<minor>\d+|\*|x|X))?(?:\.(?P<patch>\d+|\*|x|X))?(?:-(?P<pre>[0-9A-Za-z.-]+))?"
    r"(?:\+[0-9A-Za-z.-]+)?\s*$"
)
_VERSION = re.compile(r"^(\d+)\.(\d+)\.(\d+)(?:-([0-9A-Za-z.-]+))?(?:\+.*)?$")
_VERSION_PARTS = re.compile(r"^\s*(?P<major>\d+)\.(?P<minor>\d+)\.(?P<patch>\d+)")

Version = tuple[int, int, int, int]
"""(major, minor, patch, 0 for a pre-release / 1 for a release): pre-releases sort first."""

U64_MAX = 2**64 - 1
_U64_DIGITS = len(str(U64_MAX))
_PARTS = ("major", "minor", "patch")


def _number(digits: str) -> int | None:
    """A version number as cargo reads it, or None when it does not fit in a u64."""
    if len(digits) > _U64_DIGITS:
        return None
    value = int(digits)
    return value if value <= U64_MAX else None


# A graph's walk orders every node's children by version, again for each build the fix search
# resolves: a workspace holds a few hundred versions, read once each.
@functools.cache
def parse_version(text: str) -> Version | None:
    """Read `1.2.3` or `1.2.3-pre.1`; None if it is not a semver version cargo can hold."""
    match = _VERSION.match(text.strip())
    if match is None:
        return None
    major, minor, patch = (_number(match[i]) for i in (1, 2, 3))
    if major is None or minor is None or patch is None:
        return None
    return major, minor, patch, 0 if match[4] else 1


def number_error(text: str, *, requirement: bool = False) -> str | None:
    """Why cargo refuses the version (or with `requirement`, the version requirement) `text`
    for the size of a number in it, as cargo words it; None when every number fits.

    Only that: other syntax is left to cargo (and to `parse_version` / `is_requirement`)."""
    pattern = _COMPARATOR if requirement else _VERSION_PARTS
    for part in text.split(",") if requirement else (text,):
        match = pattern.match(part)
        if match is None:
            continue
        for name in _PARTS:
            digits = match[name]
            if digits and digits.isdigit() and _number(digits) is None:
                shown = digits if len(digits) <= 24 else f"{digits[:20]}… ({len(digits)} digits)"
                return f"value of {name} version number {shown} exceeds u64::MAX"
    return None


def _is_wild(part: str | None) -> bool:
    return part is None or part in ("*", "x", "X")


def _bounds(comparator: str) -> tuple[Version, Version | None] | None:
    """(lowest allowed, first excluded or None) for one comparator."""
    match = _COMPARATOR.match(comparator)
    if match is None:
        return None
    op = match["op"] or "^"
    if _is_wild(match["major"]):
        return (0, 0, 0, 0), None
    major = _number(match["major"])
    minor = None if _is_wild(match["minor"]) else _number(match["minor"])
    patch = None if _is_wild(match["patch"]) else _number(match["patch"])
    if major is None or (minor is None and not _is_wild(match["minor"])):
        return None  # a number cargo cannot hold: not a requirement
    if patch is None and not _is_wild(match["patch"]):
        return None
    release = 0 if match["pre"] else 1
    low: Version = (major, minor or 0, patch or 0, release if patch is not None else 0)
    if minor is None:
        next_up: Version = (major + 1, 0, 0, 0)
    elif patch is None:
        next_up = (major, minor + 1, 0, 0)
    else:
        next_up = (major, minor, patch + 1, 0)
    if op == "=":
        if patch is not None and release == 0:
            return low, (major, minor or 0, patch, 1)  # any pre-release of that patch
        return low, next_up
    zero: Version = (0, 0, 0, 0)
    ranges = {">=": (low, None), ">": (next_up, None), "<": (zero, low), "<=": (zero, next_up)}
    if op in ranges:
        return ranges[op]
    if op == "~":
        return low, (major + 1, 0, 0, 0) if minor is None else (major, minor + 1, 0, 0)
    # Caret: the left-most non-zero part may not change.
    if major > 0 or minor is None:
        upper: Version = (major + 1, 0, 0, 0)
    elif minor > 0 or patch is None:
        upper = (0, minor + 1, 0, 0)
    else:
        upper = (0, 0, patch + 1, 0)
    return low, upper


# Asked for every node of a rule's crates in every member's build: a few rules' requirements
# against a few hundred versions.
@functools.cache
def matches(requirement: str, version: str) -> bool:
    """True when `version` satisfies the cargo `requirement`; unknown syntax matches anything."""
    parsed = parse_version(version)
    if parsed is None:
        return True
    for comparator in requirement.split(","):
        if (found := bounds(comparator)) is None:
            return True
        low, high = found
        if parsed < low or (high is not None and parsed >= high):
            return False
    return True


def is_requirement(text: str) -> bool:
    """True when every comma-separated comparator of `text` is cargo version syntax."""
    return bool(text.strip()) and all(_bounds(part) is not None for part in text.split(","))


def bounds(requirement: str) -> tuple[Version, Version | None] | None:
    """(lowest allowed, first excluded or None) of the versions `requirement` allows, every
    comparator applied; None when its syntax is unknown."""
    low: Version = (0, 0, 0, 0)
    high: Version | None = None
    for comparator in requirement.split(","):
        if not comparator.strip():
            continue
        found = _bounds(comparator)
        if found is None:
            return None
        low = max(low, found[0])
        if found[1] is not None:
            high = found[1] if high is None else min(high, found[1])
    return low, high
