"""The commands a report tells its reader to run, named so that the reader can run them.

Under pre-commit (which sets PRE_COMMIT=1 in every hook's environment) featcheck runs from the
hook's own virtual environment: the developer has no `featcheck` on PATH, and `--fix` is no flag
they can add to `git commit`. There the hints name the manual-stage fix hook of
.pre-commit-hooks.yaml and `pipx run featcheck`, which run without an install.
"""

from __future__ import annotations

import os

FIX_HOOK = "pre-commit run featcheck-fix --hook-stage manual"
"""Runs the `featcheck-fix` hook (`featcheck --fix`), which only runs when asked for."""


def under_pre_commit() -> bool:
    """Whether featcheck runs as a pre-commit hook."""
    return os.environ.get("PRE_COMMIT") == "1"


def featcheck_command(arguments: str) -> str:
    """`featcheck ARGUMENTS` as the reader types it: `pipx run featcheck ...` under pre-commit."""
    program = "pipx run featcheck" if under_pre_commit() else "featcheck"
    return f"{program} {arguments}"


def fix_command() -> str:
    """What applies the confirmed fixes: `--fix`, or the fix hook under pre-commit."""
    return FIX_HOOK if under_pre_commit() else "--fix"
