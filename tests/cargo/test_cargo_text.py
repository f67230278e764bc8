"""cargo's messages by shape, cfg expressions, and version requirements."""

from __future__ import annotations

import pytest
from conftest import LINUX_CFG, TREES

from featcheck.cargo import semver
from featcheck.cargo.cfg import TargetCfg
from featcheck.cargo.failures import FailureKind, classify, summarize


def test_ambiguity_in_cargo_1_95_wording_with_its_misspelling() -> None:
    failure = classify((TREES / "two-versions.invert-burn-flex.stderr.txt").read_text())
    assert failure.kind is FailureKind.AMBIGUOUS
    assert failure.candidates == ("burn-flex@0.21.0", "burn-flex@0.22.1")


def test_ambiguity_in_older_cargo_wording() -> None:
    older = (
        "error: There are multiple `burn-flex` packages in your project, and the specification "
        "`burn-flex` is ambiguous.\n"
        "Please re-run this command with one of the following specifications:\n"
        "  burn-flex@0.21.0\n"
        "  burn-flex@0.22.1\n"
    )
    failure = classify(older)
    assert failure.kind is FailureKind.AMBIGUOUS
    assert failure.candidates == ("burn-flex@0.21.0", "burn-flex@0.22.1")


def test_no_match_and_nothing_to_print() -> None:
    no_match = classify((TREES / "pitb-exec-cpu.p-does-not-exist.stderr.txt").read_text())
    assert no_match.kind is FailureKind.NO_MATCH
    assert "does-not-exist" in no_match.summary
    nothing = classify(
        (TREES / "target-specific.invert-burn-flex.apple-darwin.stderr.txt").read_text()
    )
    assert nothing.kind is FailureKind.NOTHING_TO_PRINT


def test_summary_is_one_line_with_the_error_and_its_last_cause() -> None:
    stderr = (
        "    Updating crates.io index\n"
        'error: failed to select a version for the requirement `burn = "=9.9.9"`\n'
        "Caused by:\n"
        "  candidate versions found which didn't match: 0.22.1\n"
    )
    assert summarize(stderr) == (
        'failed to select a version for the requirement `burn = "=9.9.9"`: '
        "candidate versions found which didn't match: 0.22.1"
    )


def test_summary_of_a_missing_file_names_the_file_first() -> None:
    """cargo 1.95 on a workspace whose member's path dependency has a path dependency that is
    gone: the member is not what is missing."""
    stderr = (
        "error: failed to load manifest for workspace member `/w/app`\n"
        "referenced by workspace at `/w/Cargo.toml`\n\n"
        "Caused by:\n  failed to load manifest for dependency `lib`\n\n"
        "Caused by:\n  failed to load manifest for dependency `helper`\n\n"
        "Caused by:\n  failed to read `/w/helper/Cargo.toml`\n\n"
        "Caused by:\n  No such file or directory (os error 2)\n"
    )
    assert summarize(stderr) == (
        "failed to read `/w/helper/Cargo.toml`: No such file or directory (os error 2) "
        "(failed to load manifest for workspace member `/w/app`)"
    )


@pytest.mark.parametrize(
    ("platform", "expected"),
    [
        (None, True),
        ('cfg(target_os = "linux")', True),
        ("cfg(windows)", False),
        ("cfg(unix)", True),
        ('cfg(all(unix, target_arch = "x86_64"))', True),
        ('cfg(any(windows, target_os = "macos"))', False),
        ("cfg(not(windows))", True),
        ("x86_64-unknown-linux-gnu", True),
        ("x86_64-pc-windows-msvc", False),
    ],
)
def test_target_tables_apply_as_cargo_evaluates_them(platform: str | None, expected: bool) -> None:
    cfg = TargetCfg.parse("x86_64-unknown-linux-gnu", LINUX_CFG)
    assert cfg.applies(platform) is expected


@pytest.mark.parametrize(
    ("requirement", "version", "expected"),
    [
        ("=0.22.1", "0.22.1", True),
        ("=0.22.1", "0.22.2", False),
        ("0.22", "0.22.9", True),
        ("0.22", "0.23.0", False),
        ("^0.21.0", "0.21.4", True),
        ("^1.2", "1.9.0", True),
        ("^1.2", "2.0.0", False),
        ("~1.2.3", "1.2.9", True),
        ("~1.2.3", "1.3.0", False),
        (">=0.19, <0.21", "0.20.1", True),
        (">=0.19, <0.21", "0.21.0", False),
        ("1.*", "1.4.0", True),
        ("*", "0.0.1", True),
        ("^0.0.3", "0.0.4", False),
    ],
)
def test_version_requirements(requirement: str, version: str, expected: bool) -> None:
    assert semver.matches(requirement, version) is expected
