"""`--write-baseline`, `--baseline` and `--new-since`: the audit's findings set against a
baseline file or the audit of an earlier revision (featcheck.comparison)."""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
from pathlib import Path

from featcheck.audit import find_manifest
from featcheck.boundary import checkout_root, repository_root
from featcheck.cli.terminal import EXIT_CLEAN, CommandExit
from featcheck.comparison.baseline import baseline_text, read_baseline
from featcheck.comparison.compare import against_baseline, against_revision
from featcheck.comparison.revision import (
    copy_toolchain_files,
    resolve_revision,
    write_tree,
)
from featcheck.errors import FeatcheckError
from featcheck.options import AuditOptions
from featcheck.pipeline import audit_project
from featcheck.render.output import write_report
from featcheck.report import AuditResult


def compare_or_write(
    result: AuditResult, arguments: argparse.Namespace, path: Path, options: AuditOptions
) -> AuditResult:
    """With `--write-baseline`, write the baseline and end the command; else `result` set
    against `--new-since`'s revision and the baseline (`--baseline`, else the configured one)."""
    if arguments.write_baseline is not None:
        write_report(arguments.write_baseline, baseline_text(result.findings))
        count = len(result.findings)
        print(
            f"featcheck: wrote {arguments.write_baseline}: {count} finding(s) accepted",
            file=sys.stderr,
        )
        raise CommandExit(EXIT_CLEAN)
    if arguments.new_since is not None:
        result = _against_revision(result, arguments.new_since, path, options)
    return _against_baseline(result, arguments.baseline)


def _against_baseline(result: AuditResult, given: Path | None) -> AuditResult:
    """The baseline the command line names (the user's own file), else the one the project's
    configuration names (checkout content: it may not lead out of the checkout)."""
    if given is not None:
        path, root = given, None
    elif result.baseline is not None:
        path, root = result.baseline, checkout_root(result.audited or result.root)
    else:
        return result
    entries = read_baseline(path, root)
    return against_baseline(result, entries, _shown_path(path, result.root))


def _shown_path(path: Path, root: Path) -> str:
    """`path` as reports name files: relative to the report root where it lies below it."""
    absolute = Path(os.path.abspath(path))
    if absolute.is_relative_to(root):
        return absolute.relative_to(root).as_posix()
    return str(path)


def _against_revision(
    result: AuditResult, name: str, path: Path, options: AuditOptions
) -> AuditResult:
    """The same audit of the tree at revision `name`, in a directory of featcheck's; `result`
    with only what it did not find."""
    audited = find_manifest(path).parent.resolve()
    repository = repository_root(audited)
    if repository is None:
        raise FeatcheckError("--new-since needs a git repository; this is in none", path=audited)
    revision = resolve_revision(repository, name)
    scratch = Path(tempfile.mkdtemp(prefix="featcheck-revision-"))
    try:
        write_tree(repository, revision, scratch)
        copy_toolchain_files(repository, audited, scratch)
        earlier_path = scratch / audited.relative_to(repository)
        if not (earlier_path / "Cargo.toml").is_file():
            earlier = AuditResult(scratch)
            result.notes.append(
                f"{audited.relative_to(repository).as_posix() or '.'} has no Cargo.toml at "
                f"{revision.label}: every finding is new"
            )
        else:
            earlier = _audit_earlier(earlier_path, options, revision.label, result)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return against_revision(result, earlier, revision.label)


def _audit_earlier(
    path: Path, options: AuditOptions, label: str, result: AuditResult
) -> AuditResult:
    """The audit of the earlier tree, with the same options; where it fails (the revision's
    manifests were broken), every finding counts as new and a note says why."""
    quiet = options._replace(on_progress=None, root=None)
    try:
        return audit_project(path, quiet)
    except FeatcheckError as error:
        result.notes.append(f"the audit of {label} failed, so every finding is new: {error}")
        return AuditResult(path)
