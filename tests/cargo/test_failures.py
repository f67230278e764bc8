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


def test_a_version_cargo_cannot_select_is_said_with_why() -> None:
    """cargo 1.95's own words; the first line named only the crate."""
    feature = (
        "error: failed to select a version for `lib`.\n"
        "    ... required by package `app v0.1.0 (/w/app)`\n"
        "versions that meet the requirements `*` (locked to 0.1.0) are: 0.1.0\n\n"
        "package `app` depends on `lib` with feature `nosuch` but `lib` does not have that "
        "feature.\n available features: real\n\n\n"
        "failed to select a version for `lib` which could resolve this conflict\n"
    )
    assert summarize(feature) == (
        "failed to select a version for `lib`: package `app` depends on `lib` with feature "
        "`nosuch` but `lib` does not have that feature."
    )
    yanked = (
        "    Updating crates.io index\n"
        'error: failed to select a version for the requirement `ort = "^1.16.3"`\n'
        "  version 1.16.3 is yanked\nlocation searched: crates.io index\n"
        "required by package `rust-bert v0.23.0 (/w)`\n"
    )
    assert summarize(yanked) == (
        'failed to select a version for the requirement `ort = "^1.16.3"`: version 1.16.3 is yanked'
    )
    conflict = (
        "error: failed to select a version for `unicode-width`.\n"
        "    ... required by package `ratatui v0.29.0`\n"
        "versions that meet the requirements `=0.2.0` are: 0.2.0\n\n"
        "all possible versions conflict with previously selected packages.\n\n"
        "  previously selected package `unicode-width v0.2.2`\n"
        '    ... which satisfies dependency `unicode-width = "^0.2.2"` (locked to 0.2.2)\n\n'
        "failed to select a version for `unicode-width` which could resolve this conflict\n"
    )
    assert summarize(conflict) == (
        "failed to select a version for `unicode-width`: versions that meet the requirements "
        "`=0.2.0` are: 0.2.0: previously selected package `unicode-width v0.2.2`"
    )
