"""The stages after the audit that only some runs need, loaded when one does (cli/lazy.py):
`--fix` and `--diff`, the fixes resolved on a copy, then written or shown as a diff; and
`--write-baseline`, `--baseline` and `--new-since`, the audit's findings set against a baseline
file or the audit of an earlier revision (featcheck.comparison)."""

from __future__ import annotations

import argparse
import os
import sys
import threading
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

from featcheck.audit import find_manifest
from featcheck.boundary import TrustContext, checkout_root, repository_root
from featcheck.cli.outcome import write_report
from featcheck.cli.terminal import EXIT_CLEAN, EXIT_FINDINGS, CommandExit, in_actions
from featcheck.comparison.baseline import (
    against_baseline,
    against_revision,
    baseline_text,
    read_baseline,
    unaudited_entries,
)
from featcheck.comparison.git import resolve_revision
from featcheck.comparison.revision import copy_toolchain_files, revision_tree
from featcheck.errors import FeatcheckError
from featcheck.featureset import AuditOptions
from featcheck.fixes.apply import render_diff, write_changes
from featcheck.fixes.commit import prepare
from featcheck.pipeline import audit_project
from featcheck.render.safe_text import printable, safe_line, stop_commands
from featcheck.report import AuditResult
from featcheck.severity import plural

if TYPE_CHECKING:
    from featcheck.cli.terminal import Progress


@dataclass
class EarlierAudit:
    """The audit of `--new-since`'s revision, run on a thread of its own from the moment it is
    made, once the project's cargo has started: it costs a second `cargo metadata` and audit,
    which on two cores mostly overlap the first (benchmarks/bench_new_since.py: without the
    overlap, 2.4x one audit on 100 members, against a goal of 2x)."""

    name: str
    path: Path
    options: AuditOptions
    trust: TrustContext
    """The run's trust context: the revision's tree is the checkout too, and gets it derived."""
    label: str = ""
    result: AuditResult | None = None
    notes: list[str] = field(default_factory=list)
    error: BaseException | None = None
    """What ended the thread early: raised again where the audit waits for it."""
    thread: threading.Thread = field(init=False)

    def __post_init__(self) -> None:
        self.thread = threading.Thread(target=self._run, name="featcheck-new-since", daemon=True)
        self.thread.start()

    def wait(self) -> tuple[str, AuditResult, list[str]]:
        """The revision's label, its audit and what to note; a FeatcheckError where the
        revision cannot be read at all."""
        self.thread.join()
        if self.error is not None:
            raise self.error
        assert self.result is not None  # `_run` sets it wherever it sets no error
        return self.label, self.result, self.notes

    def _run(self) -> None:
        try:
            audited = find_manifest(self.path).parent.resolve()
            repository = repository_root(audited)
            if repository is None:
                raise FeatcheckError(
                    "--new-since needs a git repository; this is in none", path=audited
                )
            timeout = self.options.timeout
            revision = resolve_revision(repository, self.name, self.trust, timeout=timeout)
            self.label = revision.label
            with revision_tree(repository, self.trust, revision, timeout=timeout) as tree:
                copy_toolchain_files(repository, audited, tree)
                relative = audited.relative_to(repository)
                earlier = tree / relative
                if not (earlier / "Cargo.toml").is_file():
                    self.result = AuditResult(tree)
                    shown = relative.as_posix() or "."
                    self.notes.append(
                        f"{shown} has no Cargo.toml at {revision.label}: every finding is new"
                    )
                    return
                # The same options, but only the findings count here, not their fixes: none is
                # searched (a finding points at the member's own declaration on the way), so none
                # is confirmed with cargo either.
                quiet = self.options._replace(
                    on_progress=None, root=None, search_fixes=False, check_new_packages=False
                )
                try:
                    self.result = audit_project(earlier, quiet, self.trust.derive(tree))
                except FeatcheckError as error:
                    # Files as the repository names them, not featcheck's copy of its tree
                    # (where nobody runs cargo: a revision without Cargo.lock is said so).
                    said = str(error).replace(f"{tree}{os.sep}", "")
                    if error.message.startswith("--no-exec needs a Cargo.lock"):
                        said = "it has no Cargo.lock, which --no-exec needs"
                    self.notes.append(
                        f"the audit of {self.label} failed, so every finding is new: {said}"
                    )
                    self.result = AuditResult(earlier)
        except BaseException as error:  # raised again in the thread that waits for it
            self.error = error


def compare_or_write(
    result: AuditResult, arguments: argparse.Namespace, earlier: EarlierAudit | None
) -> AuditResult:
    """With `--write-baseline`, write the baseline and end the command; else `result` set
    against `--new-since`'s revision (`earlier`) and the baseline (`--baseline`, else the
    configured one)."""
    if (written := arguments.write_baseline) is not None:
        # A file that is no baseline is refused here, before anything is written over it.
        kept = unaudited_entries(Path(written), result)
        write_report(written, baseline_text(result.findings, kept))
        accepted = plural(len(result.findings), "finding")
        print(f"featcheck: wrote {written}: {accepted} accepted", file=sys.stderr)
        if kept:
            what = ", ".join(sorted({f"{e.code} {e.member or ''}".strip() for e in kept}))
            noun = "entry" if len(kept) == 1 else "entries"
            print(
                f"featcheck: kept {len(kept)} {noun} about what this run did not audit "
                f"({what}); delete a line that is no longer wanted",
                file=sys.stderr,
            )
        raise CommandExit(EXIT_CLEAN)
    if earlier is not None:
        label, audit, notes = earlier.wait()
        result = against_revision(replace(result, notes=[*result.notes, *notes]), audit, label)
    # The baseline the command line names (the user's own file), else the one the project's
    # configuration names (checkout content: it may not lead out of the checkout).
    if arguments.baseline is not None:
        path, root = arguments.baseline, None
    elif result.baseline is not None:
        path, root = result.baseline, checkout_root(result.audited or result.root)
    else:
        return result
    entries = read_baseline(path, root)
    # `path` as reports name files: relative to the report root where it lies below it.
    absolute = Path(os.path.abspath(path))
    below = absolute.is_relative_to(result.root)
    shown = absolute.relative_to(result.root).as_posix() if below else str(path)
    return against_baseline(result, entries, shown)


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

    def audit_copy(copy: Path, root: Path, tree: Path) -> AuditResult:
        return audit_project(copy, again._replace(root=root), trust.derive(tree))

    with progress.working("Resolving the fixes"):
        prepared = prepare(result, path, audit_copy, trust)
    changed = plural(len(prepared.changes), "file")
    if not diff:  # written, then what changed shown on stderr
        write_changes(prepared.changes)
    # With `diff`, what --fix would write, on stdout; nothing written. A diff quotes manifest
    # lines: control characters (not tabs) escaped, inert in any log. A CRLF line ending is the
    # manifest's own style, not a hidden CR: it is shown as a line end. A Cargo.lock cargo
    # wrote where there was none is thousands of lines of cargo's: --fix names it, and only
    # --diff, a patch, prints it whole.
    created = [change for change in prepared.changes if change.created and not diff]
    shown = render_diff([c for c in prepared.changes if diff or not c.created]).split("\n")
    lines = [safe_line(line.removesuffix("\r"), tabs=True) for line in shown]
    if not lines[-1]:
        lines.pop()
    text = stop_commands(lines) if in_actions() else "".join(f"{line}\n" for line in lines)
    (sys.stdout if diff else sys.stderr).write(text)
    for change in created:
        packages = plural(change.updated.count("[[package]]"), "package")
        what = f"cargo's resolution of the fixed workspace, {packages}"
        print(f"featcheck: created {printable(change.display)}: {what}", file=sys.stderr)
    for line in prepared.unfixable:
        print(f"featcheck: {printable(line)}", file=sys.stderr)
    if diff:  # exit 1 when there is something to fix
        print(f"featcheck: {changed} would change", file=sys.stderr)
        raise CommandExit(EXIT_FINDINGS if prepared.changes else EXIT_CLEAN)
    print(f"featcheck: fixed {changed}", file=sys.stderr)
    return prepared.result if prepared.result is not None else result
