"""The commands a report tells its reader to run, named so that they run where it is read.

Under pre-commit (which sets PRE_COMMIT=1 in every hook's environment) featcheck runs from the
hook's own virtual environment: the developer may have no `featcheck` on PATH, and `--fix` is
no flag they can add to `git commit`. No command works for everyone there, so the hints say
what each needs: the manual-stage fix hook of .pre-commit-hooks.yaml runs only where the
developer configured it, `featcheck` only where they installed it. (featcheck is installed
from its repository, not from a package index: a hint naming an index's `featcheck` would run
whatever someone published under that name.)
"""

from __future__ import annotations

import os
from pathlib import Path

from featcheck.render.safe_text import printable
from featcheck.report import AuditResult

FIX_HOOK = "pre-commit run featcheck-fix --hook-stage manual --all-files"
"""Runs the `featcheck-fix` hook (`featcheck --fix`), which only runs when asked for; with
`--all-files`, as without it the hook is skipped when no manifest is staged."""


def under_pre_commit() -> bool:
    """Whether featcheck runs as a pre-commit hook."""
    return os.environ.get("PRE_COMMIT") == "1"


def details_hint(code: str, result: AuditResult) -> str:
    """How to see what the compact report leaves out, and a rule's documentation (`code`, a
    project's own rule code included)."""
    rule = f"`featcheck rule {printable(code)}` explains a rule"
    if not under_pre_commit():
        return f"-v shows each finding's chain and measurements; {rule}"
    return (
        f"with featcheck installed, `featcheck -v{_project(result)}` shows each finding's chain "
        f"and measurements; {rule}"
    )


def fix_hint(result: AuditResult) -> str | None:
    """Under pre-commit, how to run the `--fix` the findings name; None elsewhere."""
    if not under_pre_commit():
        return None
    return (
        f"--fix under pre-commit: `{FIX_HOOK}` with the featcheck-fix hook configured, or "
        f"`featcheck --fix{_project(result)}` with featcheck installed"
    )


def _project(result: AuditResult) -> str:
    """The audited directory as an argument from here (pre-commit runs hooks at the repository
    root): ` crates/app`, or nothing for the current directory."""
    audited = result.audited or result.root
    try:
        relative = Path(os.path.relpath(audited))
    except ValueError:  # another drive on Windows
        relative = audited
    if relative == Path("."):
        return ""
    import shlex  # only under pre-commit, and only with findings

    return " " + printable(shlex.quote(relative.as_posix()))
