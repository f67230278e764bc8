"""`--fix` and `--diff`, all or nothing per run.

The safe fixes of every finding are written into one temporary copy of the workspace, and the
copy is audited again there, which runs `cargo metadata` over it: cargo picks the versions and
writes the copy's Cargo.lock. Only when that succeeds is anything of the user's replaced, the
manifests and Cargo.lock together; if cargo cannot resolve the copy or the audit fails, every
file stays byte for byte as it was and the reason is printed. `--diff` does the same and prints
what `--fix` would write, Cargo.lock included, instead of writing it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

from featcheck.boundary import TrustContext
from featcheck.errors import FeatcheckError
from featcheck.fileio import MAX_LOCKFILE_BYTES, read_regular_file
from featcheck.fixes.apply import FileChange, plan_changes, refuse_outside
from featcheck.fixes.lockcheck import cargo_reason
from featcheck.fixes.overlay import WorkspaceCopy
from featcheck.policy.settings import relative_file
from featcheck.report import AuditResult, Finding, rebased

Audit = Callable[[Path, Path], AuditResult]
"""Audits the project at a path, with paths relative to the second (the run's options,
keeping what cargo writes to Cargo.lock)."""


@dataclass(frozen=True)
class Prepared:
    """What `--fix` would write, checked by cargo on a copy."""

    changes: list[FileChange]
    """The manifests, then Cargo.lock, as they would be after the run."""
    result: AuditResult | None
    """The audit of the fixed copy (paths relative to the user's root); None: no change."""
    unfixable: list[str]
    """One line per finding that gets no fix, with why."""


def unfixable_lines(result: AuditResult, applied: list[Finding]) -> list[str]:
    """Each finding `--fix` leaves alone (not in `applied`), and why: its suggestion, its
    fix's note, or its severity below the fix level."""
    lines = []
    level = result.applied_fix_level()
    for finding in result.findings:
        if finding.location is None or finding in applied:
            continue
        if finding.fix is not None and finding.fix.safe:
            label = finding.severity.label
            why = f"{label} is below the fix level {level.label} (`--fix-level {label}` applies it)"
        else:
            why = finding.fix.note if finding.fix is not None else finding.suggestion
        who = f"{finding.member}: " if finding.member else ""
        lines.append(f"{who}{finding.code} {finding.crate}: no fix applied: {why}")
    return lines


def prepare(result: AuditResult, path: Path, audit: Audit, trust: TrustContext) -> Prepared:
    """The run's changes (the safe fixes of the findings at or above its fix level), resolved
    by cargo on a copy and audited there; raises a FeatcheckError (nothing written) when the
    copy cannot be resolved or audited. Nothing is written outside the checkout of the run's
    trust context."""
    applied = result.applied_fixes()
    changes = plan_changes(applied)
    unfixable = unfixable_lines(result, applied)
    if not changes:
        return Prepared([], None, unfixable)
    refuse_outside(changes, trust.checkout, result.local_manifests)
    workspace = result.workspace_root or result.root
    copy = WorkspaceCopy(workspace)
    try:
        copy.apply(changes)
        # Relative to the copy's workspace root, then to the user's root, which may lie above it.
        audited = audit(copy.moved(path.absolute()), copy.path)
        lockfile = copy.lockfile()
    except ValueError:
        raise FeatcheckError(
            "--fix changed nothing: a file to edit lies outside the workspace"
        ) from None
    except FeatcheckError as error:
        raise FeatcheckError(
            "--fix changed nothing: cargo cannot resolve the fixed workspace: "
            + cargo_reason(error.message)
        ) from None
    finally:
        copy.close()
    lock = _lock_change(workspace, lockfile, result.root)
    refuse_outside(lock, trust.checkout)
    fixed = replace(
        rebased(audited, relative_file(workspace, result.root)),
        root=result.root,
        workspace_root=result.workspace_root,
        audited=result.audited,  # the user's directory, not the copy's
        fix_level=result.fix_level,
    )
    return Prepared([*changes, *lock], fixed, unfixable)


def _lock_change(workspace: Path, after: bytes | None, root: Path) -> list[FileChange]:
    """Cargo.lock's change, when cargo wrote another one into the copy (named relative to
    `root`, as the manifests are)."""
    path = workspace / "Cargo.lock"
    before = read_regular_file(path, "Cargo.lock", MAX_LOCKFILE_BYTES) if path.is_file() else None
    if after is None or after == before:
        return []
    try:
        updated = after.decode("utf-8")
    except UnicodeDecodeError:
        raise FeatcheckError("cargo wrote a Cargo.lock that is not UTF-8", path=path) from None
    if before is None:
        return [FileChange(path, relative_file(path, root), b"", updated, created=True)]
    return [FileChange(path, relative_file(path, root), before, updated)]
