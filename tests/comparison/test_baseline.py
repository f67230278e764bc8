"""`--write-baseline` and `--baseline` on a workspace that changes between two commits: the
baseline hides exactly the findings it was written with, also after their lines move and the
crate takes a patch release, names the entries that match nothing any more, and never hides a
finding that has grown more severe."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from history_support import (
    PLAIN_MEMCHR,
    ROOT_MANIFEST,
    TRIMMED_MEMCHR,
    TRIMMED_REGEX,
    commit,
    featcheck_in_process,
    lock_regex,
    member,
    new_repository,
    registry_home,
    write_member,
)

pytestmark = [pytest.mark.cargo, pytest.mark.usefixtures("remembered_cargo")]


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return registry_home(tmp_path_factory.mktemp("registry"))


def test_a_baseline_hides_what_it_was_written_with_after_moves_and_a_patch(
    home: Path, tmp_path: Path
) -> None:
    # First commit: a trims regex (FC011) and memchr (FC012); b is clean.
    repository = new_repository(
        tmp_path / "repo", home, member("a", TRIMMED_REGEX + TRIMMED_MEMCHR), member("b", "")
    )
    baseline = repository / "featcheck-baseline.txt"
    written = featcheck_in_process(repository, home, "--write-baseline", str(baseline))
    assert written.returncode == 0, written.stderr
    assert "2 findings accepted" in written.stderr
    lines = [line for line in baseline.read_text().splitlines() if not line.startswith("#")]
    assert [line.split()[1:4] for line in lines] == [
        ["warning", "FC011", "a"],
        ["warning", "FC012", "a"],
    ]
    assert "# regex 1 `perf`: regex 1.11.1 is built without" in lines[0]

    # Second commit: a's lines move down, regex takes 1.11.2, a's memchr is fixed, and b
    # trims memchr: one new finding, one stale entry.
    write_member(repository, "a", member("a", TRIMMED_REGEX + PLAIN_MEMCHR, comments=3))
    write_member(repository, "b", member("b", TRIMMED_MEMCHR))
    lock_regex(repository, "1.11.2")
    commit(repository, "second")

    done = featcheck_in_process(repository, home, "--baseline", str(baseline))
    assert done.returncode == 1, done.stderr
    assert "memchr 2.8.3 is built without `std`" in done.stdout
    assert "regex" not in done.stdout.split("note:")[-1].split("\n", 1)[1]
    assert "1 in the baseline featcheck-baseline.txt, not shown" in done.stdout
    assert (
        "note: featcheck-baseline.txt:6: baseline entry matches no finding any more "
        "(FC012 a: memchr 2 `std`:" in done.stdout
    )

    report = json.loads(
        featcheck_in_process(
            repository, home, "--baseline", str(baseline), "--format", "json"
        ).stdout
    )
    assert [(f["code"], f["member"]) for f in report["findings"]] == [("FC012", "b")]
    [comparison] = report["comparisons"]
    assert comparison["kind"] == "baseline"
    assert [(f["code"], f["crate_version"]) for f in comparison["hidden"]] == [("FC011", "1.11.2")]
    assert [e["line"] for e in comparison["stale"]] == [6]
    # The hidden finding is the one the baseline was written with, moved three lines down.
    assert comparison["hidden"][0]["location"]["line"] == 10


def test_a_finding_more_severe_than_its_entry_is_shown(home: Path, tmp_path: Path) -> None:
    repository = new_repository(
        tmp_path / "repo", home, member("a", TRIMMED_REGEX), member("b", "")
    )
    baseline = tmp_path / "baseline.txt"
    assert featcheck_in_process(repository, home, "--write-baseline", str(baseline)).returncode == 0
    assert featcheck_in_process(repository, home, "--baseline", str(baseline)).returncode == 0
    (repository / "featcheck.toml").write_text('[severity]\nFC011 = "error"\n')
    done = featcheck_in_process(repository, home, "--baseline", str(baseline))
    assert done.returncode == 1
    assert "regex 1.11.1 is built without `perf`" in done.stdout
    assert "0 in the baseline" in done.stdout


def test_the_configuration_names_the_baseline(home: Path, tmp_path: Path) -> None:
    repository = _with_configured_baseline(home, tmp_path)
    done = featcheck_in_process(repository, home)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "no findings (2 members, " in done.stdout
    assert "1 in the baseline b.txt, not shown" in done.stdout


def test_fix_with_a_configured_baseline_compares_against_the_users_baseline(
    home: Path, tmp_path: Path
) -> None:
    """After --fix writes, the fixed audit is set against the baseline the configuration names
    in the user's checkout, not a path in the temporary copy (gone by then)."""
    repository = _with_configured_baseline(home, tmp_path)
    done = featcheck_in_process(repository, home, "--fix", "--fix-level", "info")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "no such baseline file" not in done.stderr
    assert "fixed " in done.stderr and "no findings (2 members, " in done.stdout


def test_a_configured_baseline_may_not_lead_out_of_the_checkout(home: Path, tmp_path: Path) -> None:
    repository = new_repository(
        tmp_path / "repo", home, member("a", TRIMMED_REGEX), member("b", "")
    )
    (tmp_path / "secret").write_text("not a baseline\n")
    (repository / "link").symlink_to(tmp_path / "secret")
    (repository / "featcheck.toml").write_text('baseline = "link"\n')
    done = featcheck_in_process(repository, home)
    assert done.returncode == 2
    assert "not a baseline" not in done.stdout + done.stderr
    assert done.stderr.count("\n") == 1 and "link" in done.stderr


def test_a_broken_baseline_line_is_one_error_naming_file_and_line(
    home: Path, tmp_path: Path
) -> None:
    repository = new_repository(
        tmp_path / "repo", home, member("a", TRIMMED_REGEX), member("b", "")
    )
    baseline = tmp_path / "baseline.txt"
    baseline.write_text("# header\n\n0123456789abcdef error FC011 a\n")
    done = featcheck_in_process(repository, home, "--baseline", str(baseline))
    assert done.returncode == 2
    assert done.stderr.startswith(f"featcheck: error: {baseline}:3:1: a baseline entry is")
    assert "Traceback" not in done.stderr


def test_a_baseline_is_not_written_against_a_revision(home: Path, tmp_path: Path) -> None:
    """`--write-baseline` accepts every finding of the audit: with `--new-since` the revision
    would be audited for nothing, so the two together are one usage error, and nothing is
    written."""
    repository = new_repository(
        tmp_path / "repo", home, member("a", TRIMMED_REGEX), member("b", "")
    )
    baseline = tmp_path / "baseline.txt"
    done = featcheck_in_process(
        repository, home, "--write-baseline", str(baseline), "--new-since", "HEAD"
    )
    assert done.returncode == 2
    assert done.stderr.splitlines() == [
        "featcheck: error: --write-baseline cannot be used with --new-since: a baseline "
        "accepts every finding of this audit, whatever REF had"
    ]
    assert not baseline.exists()


def test_an_entry_the_revision_hides_too_is_not_stale(home: Path, tmp_path: Path) -> None:
    """With `--new-since`, a finding REF has too is hidden before the baseline is read: its
    entry still matches a finding, and no note tells the user to delete it."""
    repository = _with_configured_baseline(home, tmp_path)
    done = featcheck_in_process(repository, home, "--new-since", "HEAD")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "matches no finding any more" not in done.stdout
    assert "0 new, 1 also on HEAD" in done.stdout


@pytest.mark.parametrize("accepted_by", ["baseline", "new-since"])
def test_fix_and_diff_leave_an_accepted_finding_as_it_is(
    home: Path, tmp_path: Path, accepted_by: str
) -> None:
    """A finding the baseline accepts, or the revision has too, is not shown, so `--diff` has
    nothing to change and `--fix` writes nothing: the same as for a finding a comment allows.
    The new finding beside it is fixed."""
    repository = new_repository(
        tmp_path / "repo", home, member("a", TRIMMED_REGEX), member("b", "")
    )
    if accepted_by == "baseline":
        assert (
            featcheck_in_process(
                repository, home, "--write-baseline", str(repository / "b.txt")
            ).returncode
            == 0
        )
        accepting: tuple[str, ...] = ("--baseline", str(repository / "b.txt"))
    else:
        accepting = ("--new-since", "HEAD")
    before = (repository / "a" / "Cargo.toml").read_text()
    diff = featcheck_in_process(repository, home, "--diff", *accepting)
    assert (diff.returncode, diff.stdout) == (0, ""), diff.stderr
    assert "0 files would change" in diff.stderr

    write_member(repository, "b", member("b", TRIMMED_MEMCHR))
    done = featcheck_in_process(repository, home, "--fix", *accepting)
    assert done.returncode == 0, done.stdout + done.stderr
    assert (repository / "a" / "Cargo.toml").read_text() == before
    assert "memchr" in (repository / "b" / "Cargo.toml").read_text()
    assert '"std"' in (repository / "b" / "Cargo.toml").read_text()
    assert "matches no finding any more" not in done.stdout


def test_a_partial_rewrite_keeps_the_entries_it_did_not_audit(home: Path, tmp_path: Path) -> None:
    """`--write-baseline` with `-p a` keeps b's accepted entry (and says so): the next full
    run still hides it. A file that is not a baseline is not written over."""
    repository = new_repository(
        tmp_path / "repo",
        home,
        member("a", TRIMMED_REGEX),
        member("b", TRIMMED_MEMCHR),
    )
    baseline = repository / "b.txt"
    assert featcheck_in_process(repository, home, "--write-baseline", str(baseline)).returncode == 0
    partial = featcheck_in_process(repository, home, "-p", "a", "--write-baseline", str(baseline))
    assert partial.returncode == 0, partial.stderr
    assert "kept 1 entry about what this run did not audit (FC012 b)" in partial.stderr
    assert [line.split()[2:4] for line in baseline.read_text().splitlines()[4:]] == [
        ["FC011", "a"],
        ["FC012", "b"],
    ]
    done = featcheck_in_process(repository, home, "--baseline", str(baseline))
    assert done.returncode == 0, done.stdout
    assert "2 in the baseline b.txt, not shown" in done.stdout

    manifest = repository / "a" / "Cargo.toml"
    before = manifest.read_text()
    refused = featcheck_in_process(repository, home, "--write-baseline", str(manifest))
    assert refused.returncode == 2
    assert refused.stderr.count("\n") == 1 and "a baseline entry is" in refused.stderr
    assert refused.stderr.endswith(
        "no baseline file, and --write-baseline does not write over it\n"
    )
    assert manifest.read_text() == before


def _with_configured_baseline(home: Path, tmp_path: Path) -> Path:
    """a trims regex (FC011); the baseline b.txt accepts it, and featcheck.toml names it."""
    repository = new_repository(
        tmp_path / "repo", home, member("a", TRIMMED_REGEX), member("b", "")
    )
    baseline = str(repository / "b.txt")
    assert featcheck_in_process(repository, home, "--write-baseline", baseline).returncode == 0
    (repository / "featcheck.toml").write_text('baseline = "b.txt"\n')
    return repository


def test_an_entry_about_a_member_no_longer_in_the_workspace_is_stale(
    home: Path, tmp_path: Path
) -> None:
    """It was kept as an entry about a member the run did not audit, and hid that member's
    finding again if it came back."""
    repository = new_repository(
        tmp_path / "repo", home, member("a", TRIMMED_REGEX), member("b", TRIMMED_MEMCHR)
    )
    baseline = tmp_path / "baseline.txt"
    assert featcheck_in_process(repository, home, "--write-baseline", str(baseline)).returncode == 0
    (repository / "Cargo.toml").write_text(ROOT_MANIFEST.replace('"a", "b"', '"a"'))
    done = featcheck_in_process(repository, home, "--baseline", str(baseline))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "baseline entry matches no finding any more (FC012 b:" in done.stdout
    rewritten = featcheck_in_process(repository, home, "--write-baseline", str(baseline))
    assert "kept" not in rewritten.stderr and " b " not in baseline.read_text()
