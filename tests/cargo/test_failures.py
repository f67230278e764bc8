"""cargo's messages, recognised by their shape."""

from __future__ import annotations

from support import TREES

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
