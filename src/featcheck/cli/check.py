"""`featcheck [check] [PATH] ...`: the audit's options from the flags, then the audit (or the
audit of saved tree text), the fixes, and the report with its exit code."""

from __future__ import annotations

import argparse
import os
import sys
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

import featcheck.cli.lazy as lazy
from featcheck import __version__
from featcheck.boundary import TrustContext
from featcheck.cli.arguments import rule_codes
from featcheck.cli.terminal import EXIT_CLEAN, Progress, fail, in_actions
from featcheck.errors import FeatcheckError
from featcheck.featureset import AuditOptions, FeatureSelection
from featcheck.severity import FailOn, Severity

if TYPE_CHECKING:
    from featcheck.cargo.command_setup import CommandSetup
    from featcheck.cli.stages import EarlierAudit
    from featcheck.report import AuditResult


def check(arguments: argparse.Namespace) -> int:
    """The audit: exit 0 clean, 1 findings at or above the failing level, 2 errors."""
    if arguments.version:
        print(f"featcheck {__version__}")
        return EXIT_CLEAN
    output_format: str = arguments.output_format or ("github" if in_actions() else "text")
    github = output_format == "github" or in_actions()
    progress = Progress(spinner=not arguments.quiet, github=github)
    try:
        options = _options(arguments, progress, output_format)
        if arguments.tree is not None:
            result = _audit_tree(arguments, options)
        else:
            result = _audit_project(arguments, options, progress, output_format)
    except FeatcheckError as error:
        fail(error, github=github)
    return lazy.report_stage(output_format)(result, arguments, output_format)


def _options(arguments: argparse.Namespace, progress: Progress, output_format: str) -> AuditOptions:
    features, all_features = arguments.features, arguments.all_features
    no_default = arguments.no_default_features
    if arguments.each_feature and (all_features or no_default):
        flag = "--all-features" if all_features else "--no-default-features"
        raise FeatcheckError(f"{flag} cannot be used with --each-feature")
    configurations: tuple[FeatureSelection, ...] = ()
    if features or all_features or no_default:
        try:
            selection = FeatureSelection.of(
                features or [], no_default=no_default, all_features=all_features
            )
        except ValueError as error:
            raise FeatcheckError(f"--features: {error}") from None
        configurations = (selection,)
    if arguments.no_exec and (arguments.fix or arguments.diff):
        flag = "--fix" if arguments.fix else "--diff"
        raise FeatcheckError(
            f"{flag} cannot be used with --no-exec: {flag} confirms the fixes by resolving the "
            "fixed workspace with cargo, and --no-exec starts no process; drop --no-exec "
            "(featcheck then runs cargo, none of the checkout's own programs)"
        )
    if arguments.write_baseline is not None and arguments.new_since is not None:
        raise FeatcheckError(
            "--write-baseline cannot be used with --new-since: a baseline accepts every finding "
            "of this audit, whatever REF had"
        )
    if arguments.root is not None and not arguments.root.is_dir():
        raise FeatcheckError("--root: not a directory", path=arguments.root)
    # Whether an output reads each finding's other fixes: every report but text without `-v`
    # (JSON, SARIF and GitHub's word the others too), `--fix`, `--diff`, and `--no-exec`'s list
    # of unconfirmed fixes.
    plain = output_format == "text" and not (arguments.verbose or arguments.no_exec)
    alternatives = not plain or arguments.sarif is not None or arguments.fix or arguments.diff
    return AuditOptions(
        packages=tuple(arguments.package or ()),
        targets=tuple(arguments.target or ()),
        offline=arguments.offline,
        locked=arguments.locked,
        timeout=arguments.timeout,
        select=rule_codes(arguments.select),
        ignore=rule_codes(arguments.ignore),
        on_command=progress.show_command if arguments.verbose else None,
        on_progress=progress.progress if progress.spinner else None,
        no_exec=arguments.no_exec,
        configurations=configurations,
        each_feature=arguments.each_feature,
        root=arguments.root,
        search_alternatives=alternatives,
    )


def _audit_project(
    arguments: argparse.Namespace, options: AuditOptions, progress: Progress, output_format: str
) -> AuditResult:
    """The audit of the project (and with --fix or --diff, its fixes); the report's modules
    load while cargo works."""
    path = lazy.project_manifest(arguments.path, arguments.manifest_path)
    # What this run trusts, computed once from the path the user named: every tree made from
    # the checkout (the fix copy, the --new-since revision) gets this context, derived.
    trust = TrustContext.of(path, os.environ, trust_checkout=arguments.trust_checkout)
    reading = "Reading the manifests" if arguments.no_exec else "Resolving features"
    earlier: list[EarlierAudit] = []
    # The audit's cargo, toolchain and configuration, once cargo started: the fixed copy gets
    # them all, --new-since's revision the toolchain (its configuration is its own).
    setups: list[CommandSetup | None] = []

    def meanwhile(setup: CommandSetup | None) -> None:
        # While cargo works: the report's modules load, and --new-since's audit starts.
        setups.append(setup)
        lazy.report_stage(output_format)
        if arguments.new_since is not None:
            revision = options._replace(toolchain=setup.toolchain if setup else None)
            earlier.append(lazy.revision_audit()(arguments.new_since, path, revision, trust))

    with progress.working(reading):
        result = lazy.audit_project(path, options, trust, meanwhile)
    result.fix_level = _fix_level(arguments, result)
    comparing = _compares(arguments) or result.baseline is not None
    what = f"Auditing {arguments.new_since}" if arguments.new_since else "Comparing"
    if arguments.diff or arguments.fix:
        fixing = options._replace(setup=next(iter(setups), None))
        # Only what the run shows is fixed: a finding the baseline accepts or the revision
        # has too is kept as it is, like one a comment allows.
        shown = result
        if comparing and arguments.write_baseline is None:
            with progress.working(what):
                compared = lazy.compare_stage()(result, arguments, next(iter(earlier), None))
            shown = replace(result, findings=compared.findings)
        fixed = lazy.fix_stage()(shown, path, fixing, trust, progress, diff=arguments.diff)
        result = result if fixed is shown else fixed  # the audit of the fixed checkout
    if comparing:
        with progress.working(what):
            result = lazy.compare_stage()(result, arguments, next(iter(earlier), None))
    if arguments.measured:
        result = lazy.attach_measurements(result, trust)
    return result


def _fix_level(arguments: argparse.Namespace, result: AuditResult) -> Severity:
    """The run's fix level: `--fix-level`, the configuration's `fix-level`, else the failing
    level (`--fail-on` wins over the configuration's there too)."""
    if arguments.fix_level is not None:
        return Severity.parse(arguments.fix_level)
    if result.fix_level is None and arguments.fail_on is not None:
        return FailOn(arguments.fail_on).threshold or Severity.WARNING
    return result.applied_fix_level()


def _compares(arguments: argparse.Namespace) -> bool:
    named = (arguments.baseline, arguments.write_baseline, arguments.new_since)
    return any(value is not None for value in named)


def _audit_tree(arguments: argparse.Namespace, options: AuditOptions) -> AuditResult:
    """`--tree FILE`: the audit of saved `cargo tree` text, which is one build of no project."""
    if arguments.fix or arguments.diff:
        raise FeatcheckError("--fix and --diff need the project, not saved tree text")
    if options.configurations or arguments.each_feature:
        raise FeatcheckError("feature flags need the project: saved tree text is one build already")
    if arguments.new_since is not None:
        raise FeatcheckError("--new-since needs the project, not saved tree text")
    if len(options.targets) > 1:
        raise FeatcheckError(
            "saved tree text is one build: name the one --target it was printed for"
        )
    if arguments.tree == "-":
        data, source = sys.stdin.buffer.read(), "<stdin>"
    else:
        source = arguments.tree
        try:
            data = Path(source).read_bytes()
        except OSError as error:
            raise FeatcheckError(f"cannot read: {error.strerror or error}", path=source) from None
    result = lazy.audit_tree_text(data.decode("utf-8", errors="replace"), source, options)
    if _compares(arguments):
        result = lazy.compare_stage()(result, arguments, None)
    return result
