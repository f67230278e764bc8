"""Cargo version requirements (`=0.22.1`, `^0.21`, `~1.2`, `>=1, <2`, `1.*`), enough to tell
which of several declarations of one package a resolved version came from."""

from __future__ import annotations

import re

_COMPARATOR = re.compile(
    r"^\s*(?P<op>=|>=|<=|>|<|~|\^)?\s*v?(?P<major>\d+|\*|x|X)"
    r"(?:\.(?P<minor>\d+|\*|x|X))?(?:\.(?P<patch>\d+|\*|x|X))?(?:-(?P<pre>[0-9A-Za-z.-]+))?"
    r"(?:\+[0-9A-Za-z.-]+)?\s*$"
)
_VERSION = re.compile(r"^(\d+)\.(\d+)\.(\d+)(?:-([0-9A-Za-z.-]+))?(?:\+.*)?$")

Version = tuple[int, int, int, int]
"""(major, minor, patch, 0 for a pre-release / 1 for a release): pre-releases sort first."""


def parse_version(text: str) -> Version | None:
    """Read `1.2.3` or `1.2.3-pre.1`; None if it is not a semver version."""
    match = _VERSION.match(text.strip())
    if match is None:
        return None
    return int(match[1]), int(match[2]), int(match[3]), 0 if match[4] else 1


def _is_wild(part: str | None) -> bool:
    return part is None or part in ("*", "x", "X")


def _bounds(comparator: str) -> tuple[Version, Version | None, bool] | None:
    """(lowest allowed, first excluded or None, lowest inclusive) for one comparator."""
    match = _COMPARATOR.match(comparator)
    if match is None:
        return None
    op = match["op"] or "^"
    if _is_wild(match["major"]):
        return (0, 0, 0, 0), None, True
    major = int(match["major"])
    minor = None if _is_wild(match["minor"]) else int(match["minor"])
    patch = None if _is_wild(match["patch"]) else int(match["patch"])
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
            return low, (major, minor or 0, patch, 1), True  # any pre-release of that patch
        return low, next_up, True
    if op == ">=":
        return low, None, True
    if op == ">":
        return next_up, None, True
    if op == "<":
        return (0, 0, 0, 0), low, True
    if op == "<=":
        return (0, 0, 0, 0), next_up, True
    if op == "~":
        return low, (major + 1, 0, 0, 0) if minor is None else (major, minor + 1, 0, 0), True
    # Caret: the left-most non-zero part may not change.
    if major > 0 or minor is None:
        upper: Version = (major + 1, 0, 0, 0)
    elif minor > 0 or patch is None:
        upper = (0, minor + 1, 0, 0)
    else:
        upper = (0, 0, patch + 1, 0)
    return low, upper, True


def matches(requirement: str, version: str) -> bool:
    """True when `version` satisfies the cargo `requirement`; unknown syntax matches anything."""
    parsed = parse_version(version)
    if parsed is None:
        return True
    for comparator in requirement.split(","):
        if not comparator.strip():
            continue
        bounds = _bounds(comparator)
        if bounds is None:
            return True
        low, high, _ = bounds
        if parsed < low or (high is not None and parsed >= high):
            return False
    return True


def is_requirement(text: str) -> bool:
    """True when every comma-separated comparator of `text` is cargo version syntax."""
    parts = text.split(",")
    return bool(text.strip()) and all(_bounds(part) is not None for part in parts)


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
