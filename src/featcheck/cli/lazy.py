"""The command line's one start-up boundary: every module it loads only once a run needs it.

`featcheck` runs as a commit hook, where every millisecond before cargo starts is waited for
(docs/speed.md, benchmarks/bench_cli.py). So importing `featcheck.cli` loads the standard
library's argparse, the parsers and the commands' front ends (~20 ms), and the rest is imported
here, when first called:

- the front of the audit (`featcheck.audit`, ~7 ms), which starts cargo; the pipeline and the
  rules are imported after it, so that Python loads those while cargo resolves (`main` loads
  the front for every command, to tell the audit that the process ends without freeing its
  objects);
- what follows the audit (the report in the chosen format, the exit code): loaded while cargo
  works, through the audit's `meanwhile`, so that it adds no wall time;
- what only some runs need: the fixes (`--fix`, `--diff`), the comparisons (`--baseline`,
  `--new-since`), tree mode (`--tree`), the rules'
  documentation (`rules`, `rule`), the probe, and rich, which only a terminal's spinner and
  `--verbose` use (its console ~25 ms to import; with the Markdown of `rule CODE`, ~55 ms).

Every other module of the command line imports at its top, and report formats are loaded by
name from their registry (featcheck.render). The imports that wait below the command line
(tomlkit, rich's for colour) are docs/speed.md's.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import argparse
    from collections.abc import Callable
    from pathlib import Path

    from rich.console import Console

    from featcheck.audit import SourceFactory
    from featcheck.boundary import TrustContext
    from featcheck.cargo.command_setup import CommandSetup
    from featcheck.cli.stages import EarlierAudit
    from featcheck.featureset import AuditOptions
    from featcheck.report import AuditResult

    CompareStage = Callable[[AuditResult, argparse.Namespace, EarlierAudit | None], AuditResult]


def project_manifest(path: Path | None, manifest_path: Path | None) -> Path:
    from featcheck.audit import project_manifest

    return project_manifest(path, manifest_path)


def audit_project(
    path: Path,
    options: AuditOptions,
    trust: TrustContext,
    meanwhile: Callable[[CommandSetup | None], object],
) -> AuditResult:
    """The audit of the project: cargo starts (featcheck.audit), then the rest of the audit is
    loaded (featcheck.pipeline) and `meanwhile` runs while cargo works, given the setup of the
    audit's cargo for the trees made from the checkout (None with `--no-exec`)."""
    from featcheck.audit import cargo_source, started_audit
    from featcheck.cargo.runner import CargoRunner

    if options.select or options.ignore:  # the usual run: the rules load while cargo works
        from featcheck.rules import check_builtin_codes

        check_builtin_codes(options.select, options.ignore)
    source_of: SourceFactory = cargo_source
    if options.no_exec:  # only --no-exec loads the registry and archive readers
        from featcheck.noexec.source import FileSource

        source_of = FileSource
    with started_audit(path, options, trust, source_of) as started:
        # While cargo resolves: load the rest of the audit, which then reads the manifest and
        # asks rustc for the targets' cfg, off the path the user waits on.
        from featcheck.pipeline import audit_started

        source = started.source
        setup = source.prepared_setup if isinstance(source, CargoRunner) else lambda: None
        return audit_started(started, lambda: meanwhile(setup()))


def report_stage(output_format: str) -> Callable[[AuditResult, argparse.Namespace, str], int]:
    """The audit calls this while cargo works too, so that the chosen renderer loads then."""
    from featcheck.cli.outcome import finish
    from featcheck.render import preload

    preload(output_format)
    return finish


def fix_stage() -> Callable[..., AuditResult]:
    from featcheck.cli.stages import fix_or_diff

    return fix_or_diff


def compare_stage() -> CompareStage:
    from featcheck.cli.stages import compare_or_write

    return compare_or_write


def attach_measurements(result: AuditResult, trust: TrustContext) -> AuditResult:
    from featcheck.probe.cache import attach

    return attach(result, trust)


def revision_audit() -> type[EarlierAudit]:
    from featcheck.cli.stages import EarlierAudit

    return EarlierAudit


def audit_tree_text(text: str, source: str, options: AuditOptions) -> AuditResult:
    from featcheck.tree_mode import audit_tree_text

    return audit_tree_text(text, source, options)


def probe(arguments: argparse.Namespace) -> int:
    from featcheck.cli.probe import probe

    return probe(arguments)


def rule_table(path: Path, width: int) -> list[str]:
    from featcheck.policy.load import project_catalogue
    from featcheck.rules import UNUSED_SUPPRESSION, rule_table

    return rule_table((*project_catalogue(path).rules, UNUSED_SUPPRESSION), width)


def rule_markdown(code: str, path: Path) -> str | None:
    """`featcheck rule CODE`: the rule's page as Markdown; None when no rule has that code."""
    from featcheck.policy.load import project_catalogue
    from featcheck.rules import UNUSED_SUPPRESSION, find_by_code, rule_markdown

    entries = (*project_catalogue(path).rules, UNUSED_SUPPRESSION)
    rule = find_by_code(entries, code)
    return None if rule is None else rule_markdown(rule)


def print_markdown(text: str) -> None:
    """`text` rendered as Markdown on the terminal (rich's Markdown brings a parser, pygments)."""
    from rich.console import Console
    from rich.markdown import Markdown

    Console(highlight=False).print(Markdown(text, hyperlinks=False))


def stderr_console() -> Console:
    from rich.console import Console

    # rich drops colour when stderr is not a terminal or NO_COLOR is set.
    return Console(stderr=True, highlight=False, soft_wrap=True)


def keep_until_exit() -> None:
    """Let the audit keep what it would free on returning, for a process that ends without
    freeing it (featcheck.audit, `KEPT_UNTIL_EXIT`)."""
    from featcheck import audit

    audit.KEPT_UNTIL_EXIT = []
