"""Snapshot files: what featcheck printed, kept beside what it was printed for.

A test compares its output with the file; a difference fails it with a diff. With
FEATCHECK_UPDATE_SNAPSHOTS=1 in the environment the test writes its output instead (and
passes): review the change with `git diff`, as with ruff's or zizmor's snapshots.
"""

from __future__ import annotations

import difflib
import os
from pathlib import Path

import pytest

UPDATE_VARIABLE = "FEATCHECK_UPDATE_SNAPSHOTS"


def updating() -> bool:
    """Whether this run rewrites snapshots rather than checking them."""
    return os.environ.get(UPDATE_VARIABLE) == "1"


def assert_snapshot(path: Path, actual: str) -> None:
    """Fail unless `path` holds `actual`; with FEATCHECK_UPDATE_SNAPSHOTS=1, write it there."""
    expected = path.read_text(encoding="utf-8") if path.exists() else None
    if actual == expected:
        return
    if updating():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(actual, encoding="utf-8")
        return
    if expected is None:
        pytest.fail(f"{path} is missing: run the test with {UPDATE_VARIABLE}=1 to write it")
    diff = difflib.unified_diff(
        expected.splitlines(keepends=True),
        actual.splitlines(keepends=True),
        fromfile=f"{path} (snapshot)",
        tofile="now",
    )
    pytest.fail(
        f"output differs from {path} (if the change is right, rerun with "
        f"{UPDATE_VARIABLE}=1 and review `git diff`):\n{''.join(diff)}",
        pytrace=False,
    )
