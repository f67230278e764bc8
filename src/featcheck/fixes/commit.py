"""`--fix` and `--diff`: every fix cargo accepts, each all or nothing.

The safe fixes of every finding are written into one temporary copy of the workspace, and the
copy is audited again there, which runs `cargo metadata` over it: cargo picks the versions and
writes the copy's Cargo.lock. Only what cargo resolves is written to the user's files, the
manifests and Cargo.lock together. When cargo refuses the fixes together, each fix (the edits of
one finding, or of several findings with the same edits) is asked in turn, together with those
cargo accepted before it: every fix it accepts is written, each refused one is named with
cargo's reason, and one refused fix keeps no other out. When cargo accepts none, every file
stays byte for byte as it was and the reason is printed. `--diff` does the same and prints what
`--fix` would write, Cargo.lock included, instead of writing it.
"""

from __future__ import annotations

import contextlib
import posixpath
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

from featcheck.boundary import MAX_LOCKFILE_BYTES, TrustContext, read_regular_file
from featcheck.errors import FeatcheckError
from featcheck.fixes.apply import FileChange, plan_edits, refuse_outside
from featcheck.fixes.lockcheck import cargo_reason
from featcheck.fixes.workspace_copy import WorkspaceCopy
from featcheck.policy.settings import relative_file
from featcheck.report import AuditResult, Edit, Finding, Fix, Location

Audit = Callable[[Path, Path, Path], AuditResult]
"""Audits the project at a path, with paths relative to the second, in the run's trust context
derived for the third (the copy's tree), with the run's options, keeping what cargo writes to
Cargo.lock."""


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
    """Raises a FeatcheckError (nothing written) when cargo accepts no fix or the copy cannot be
    audited. Nothing is written outside the checkout of the run's trust context."""
    applied = result.applied_fixes()
    # The edits of each safe fix, once each, in finding order.
    fixes = list(dict.fromkeys(f.fix.edits for f in applied if f.fix is not None and f.fix.safe))
    unfixable = unfixable_lines(result, applied)
    changes = plan_edits(e for edits in fixes for e in edits)
    if not changes:
        return Prepared([], None, unfixable)
    refuse_outside(changes, trust.checkout, result.local_manifests)
    workspace = result.workspace_root or result.root
    beside = [manifest.parent for manifest in result.local_manifests]
    with contextlib.closing(WorkspaceCopy(workspace, beside, trust.checkout)) as copy:
        resolved = _resolve(copy, path, fixes, audit)
    if isinstance(resolved, str):
        raise FeatcheckError(
            f"--fix changed nothing: cargo cannot resolve the fixed workspace: {resolved}"
        )
    audited, lockfile, refusals = resolved
    for finding in applied:  # one line per finding whose fix cargo refused, with its reason
        if finding.fix is not None and finding.fix.edits in refusals:
            who = f"{finding.member}: " if finding.member else ""
            why = refusals[finding.fix.edits]
            unfixable.append(
                f"{who}{finding.code} {finding.crate}: not applied: cargo cannot resolve it: {why}"
            )
    changes = plan_edits(e for edits in fixes if edits not in refusals for e in edits)
    lock = _lock_change(workspace, lockfile, result.root)
    refuse_outside(lock, trust.checkout)
    fixed = replace(
        rebased(audited, relative_file(workspace, result.root)),
        root=result.root,
        workspace_root=result.workspace_root,
        audited=result.audited,  # the user's directory and baseline, not the copy's
        baseline=result.baseline,
        fix_level=result.fix_level,
    )
    return Prepared([*changes, *lock], fixed, unfixable)


_Audited = tuple[AuditResult, bytes | None]
"""The audit of the copy with some fixes made, and the Cargo.lock cargo wrote there."""


def _resolve(
    copy: WorkspaceCopy, path: Path, fixes: list[tuple[Edit, ...]], audit: Audit
) -> tuple[AuditResult, bytes | None, dict[tuple[Edit, ...], str]] | str:
    """The copy's audit with the fixes cargo accepts made, the Cargo.lock cargo wrote there,
    and each fix cargo refused with its reason in one line; cargo's reason when it accepts
    none."""
    together = _audit_with(copy, path, fixes, audit)
    if not isinstance(together, str):
        return (*together, {})
    if len(fixes) == 1:
        return together
    kept: list[tuple[Edit, ...]] = []
    refusals: dict[tuple[Edit, ...], str] = {}
    last: _Audited | None = None
    for edits in fixes:
        answer = _audit_with(copy, path, [*kept, edits], audit)
        if isinstance(answer, str):
            refusals[edits] = answer
            continue
        kept.append(edits)
        last = answer
    return together if last is None else (*last, refusals)


def _audit_with(
    copy: WorkspaceCopy, path: Path, fixes: list[tuple[Edit, ...]], audit: Audit
) -> _Audited | str:
    """The copy's audit with `fixes` made; cargo's reason in one line when it cannot resolve
    them."""
    try:
        copy.apply(plan_edits(e for edits in fixes for e in edits))
        # Relative to the copy's workspace root, then to the user's root, which may lie above it.
        return audit(copy.moved(path.absolute()), copy.path, copy.tree), copy.lockfile()
    except ValueError:
        raise FeatcheckError(
            "--fix changed nothing: a file to edit lies outside the workspace"
        ) from None
    except FeatcheckError as error:
        return copy.original(cargo_reason(error.message))


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
    created = before is None
    return [FileChange(path, relative_file(path, root), before or b"", updated, created)]


def rebased(result: AuditResult, prefix: str) -> AuditResult:
    """`result` with every file it names (locations, edits) under `prefix`: an audit of a copy,
    relative to the copy's workspace root, shown relative to the user's root above it."""
    if prefix in ("", "."):
        return result

    def file(name: str) -> str:
        return posixpath.normpath(f"{prefix}/{name}") if name else name

    def location(place: Location | None) -> Location | None:
        return None if place is None else replace(place, file=file(place.file))

    def fix(candidate: Fix) -> Fix:
        edits = tuple(replace(edit, file=file(edit.file)) for edit in candidate.edits)
        return replace(candidate, edits=edits)

    findings = [
        replace(
            finding,
            location=location(finding.location),
            declaration=location(finding.declaration),
            inherited_by=location(finding.inherited_by),
            member_declarations=tuple(
                replace(place, file=file(place.file)) for place in finding.member_declarations
            ),
            fix=None if finding.fix is None else fix(finding.fix),
            alternatives=tuple(map(fix, finding.alternatives)),
        )
        for finding in result.findings
    ]
    return replace(result, findings=findings)
