"""`--fix` and `--diff`: the fixes resolved on a copy, then written or shown as a diff."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from featcheck.boundary import TrustContext
from featcheck.cli.terminal import EXIT_CLEAN, EXIT_FINDINGS, CommandExit, in_actions
from featcheck.featureset import AuditOptions
from featcheck.fixes.apply import render_diff, write_changes
from featcheck.fixes.commit import Prepared, prepare
from featcheck.pipeline import audit_project
from featcheck.render.safe_text import printable, safe_line, stop_commands
from featcheck.report import AuditResult
from featcheck.severity import plural

if TYPE_CHECKING:
    from featcheck.cli.terminal import Progress


def fix_or_diff(
    result: AuditResult,
    path: Path,
    options: AuditOptions,
    trust: TrustContext,
    progress: Progress,
    *,
    diff: bool,
) -> AuditResult:
    """Resolve the safe fixes on a copy (cargo, then featcheck's audit of the copy, in the
    run's trust context derived for it). With `diff`, print what would change and end the
    command; else write it and return the audit of the fixed checkout."""
    again = options._replace(update_lockfile=True)

    def audit_copy(copy: Path, root: Path) -> AuditResult:
        return audit_project(copy, again._replace(root=root), trust.derive(root))

    with progress.working("Resolving the fixes"):
        prepared = prepare(result, path, audit_copy, trust)
    if diff:
        raise CommandExit(_show_diff(prepared))
    return _apply_fixes(prepared, result)


def _show_diff(prepared: Prepared) -> int:
    """`--diff`: what `--fix` would write, on stdout; nothing written; exit 1 when there is
    something to fix."""
    _print_diff(render_diff(prepared.changes), sys.stdout)
    _print_unfixable(prepared)
    print(f"featcheck: {plural(len(prepared.changes), 'file')} would change", file=sys.stderr)
    return EXIT_FINDINGS if prepared.changes else EXIT_CLEAN


def _apply_fixes(prepared: Prepared, result: AuditResult) -> AuditResult:
    """`--fix`: write what cargo resolved on the copy, show what changed (on stderr), and
    return the audit of the fixed checkout."""
    write_changes(prepared.changes)
    _print_diff(render_diff(prepared.changes), sys.stderr)
    _print_unfixable(prepared)
    print(f"featcheck: fixed {plural(len(prepared.changes), 'file')}", file=sys.stderr)
    return prepared.result if prepared.result is not None else result


def _print_unfixable(prepared: Prepared) -> None:
    for line in prepared.unfixable:
        print(f"featcheck: {printable(line)}", file=sys.stderr)


def _print_diff(diff: str, stream: TextIO) -> None:
    """A diff quotes manifest lines: control characters (not tabs) escaped, inert in any log."""
    # A CRLF line ending is the manifest's own style, not a hidden CR: it is shown as a line end.
    lines = [safe_line(line.removesuffix("\r"), tabs=True) for line in diff.split("\n")]
    if lines and not lines[-1]:
        lines.pop()
    if in_actions():
        stream.write(stop_commands(lines))
    else:
        stream.write("".join(f"{line}\n" for line in lines))
