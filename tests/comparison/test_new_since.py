"""`--new-since REF` on a repository the test makes: the same audit of the tree at REF, read
from git's objects into a directory of featcheck's; only what REF did not have is shown."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest
from history_support import (
    ROOT_MANIFEST,
    TRIMMED_MEMCHR,
    TRIMMED_REGEX,
    commit,
    featcheck_in_process,
    git,
    member,
    new_repository,
    registry_home,
    write_member,
)
from support import trust_of

from featcheck.comparison.git import Revision, resolve_revision
from featcheck.comparison.revision import cache_key, revision_tree, write_tree
from featcheck.errors import FeatcheckError

pytestmark = [pytest.mark.cargo, pytest.mark.usefixtures("remembered_cargo")]


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return registry_home(tmp_path_factory.mktemp("registry"))


def test_only_the_finding_the_second_commit_added_is_shown(home: Path, tmp_path: Path) -> None:
    repository = new_repository(
        tmp_path / "repo", home, member("a", TRIMMED_REGEX), member("b", "")
    )
    write_member(repository, "b", member("b", TRIMMED_MEMCHR))
    commit(repository, "b trims memchr")
    base = git(repository, "rev-parse", "HEAD~1").strip()

    done = featcheck_in_process(repository, home, "--new-since", "HEAD~1")
    assert done.returncode == 1, done.stderr
    assert "memchr 2.8.3 is built without `std`" in done.stdout
    assert "regex 1.11.1" not in done.stdout
    assert f"1 new, 1 also on HEAD~1 ({base[:8]}), not shown" in done.stdout

    report = json.loads(
        featcheck_in_process(repository, home, "--new-since", "main~1", "--format", "json").stdout
    )
    assert [(f["code"], f["member"]) for f in report["findings"]] == [("FC012", "b")]
    [comparison] = report["comparisons"]
    assert comparison["against"] == f"main~1 ({base[:8]})"
    assert [(f["code"], f["member"]) for f in comparison["hidden"]] == [("FC011", "a")]
    assert comparison["absent"] == []
    # A hidden finding is what a plain run shows, field by field, its group included.
    plain = json.loads(featcheck_in_process(repository, home, "--format", "json").stdout)
    [shown] = [f for f in plain["findings"] if f["code"] == "FC011"]
    assert comparison["hidden"] == [shown]


def test_a_commit_that_only_moves_lines_adds_nothing(home: Path, tmp_path: Path) -> None:
    repository = new_repository(
        tmp_path / "repo", home, member("a", TRIMMED_REGEX + TRIMMED_MEMCHR), member("b", "")
    )
    write_member(repository, "a", member("a", TRIMMED_MEMCHR + TRIMMED_REGEX, comments=4))
    commit(repository, "reorder")
    done = featcheck_in_process(repository, home, "--new-since", "HEAD~1")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "no new findings (2 members, " in done.stdout
    assert "0 new, 2 also on HEAD~1" in done.stdout


def test_a_fix_shows_as_absent(home: Path, tmp_path: Path) -> None:
    repository = new_repository(
        tmp_path / "repo", home, member("a", TRIMMED_REGEX), member("b", "")
    )
    write_member(repository, "a", member("a", 'regex = "1.11"\n'))
    commit(repository, "fix")
    report = json.loads(
        featcheck_in_process(repository, home, "--new-since", "HEAD~1", "--format", "json").stdout
    )
    assert report["findings"] == []
    assert [f["code"] for f in report["comparisons"][0]["absent"]] == ["FC011"]


def test_a_member_missing_at_the_revision_makes_every_finding_new(
    home: Path, tmp_path: Path
) -> None:
    repository = new_repository(
        tmp_path / "repo", home, member("a", TRIMMED_REGEX), member("b", "")
    )
    # Not committed yet: a third member, audited on its own.
    (repository / "Cargo.toml").write_text(ROOT_MANIFEST.replace('"b"]', '"b", "c"]'))
    write_member(repository, "c", member("c", TRIMMED_MEMCHR))
    done = featcheck_in_process(repository / "c", home, "--new-since", "HEAD")
    assert done.returncode == 1, done.stdout + done.stderr
    assert "note: c has no Cargo.toml at HEAD (" in done.stdout
    assert "1 new, 0 also on HEAD" in done.stdout
    # Without a git repository, or with a revision git does not know: one line, exit 2.
    done = featcheck_in_process(repository, home, "--new-since", "no-such-branch")
    assert done.returncode == 2
    assert done.stderr.startswith("featcheck: error: --new-since: `no-such-branch` is not a commit")
    assert "Traceback" not in done.stderr


def test_the_revision_tree_holds_manifests_and_empty_sources_only(tmp_path: Path) -> None:
    repository = tmp_path / "repo"
    repository.mkdir()
    git(repository, "init", "-q", "-b", "main")
    (repository / "Cargo.toml").write_text('[package]\nname = "x"\nversion = "0.1.0"\n')
    (repository / "src").mkdir()
    (repository / "src" / "main.rs").write_text('fn main() { println!("secret"); }\n')
    (repository / "src" / "util.rs").write_text("pub fn util() {}\n")
    (repository / "tests").mkdir()
    (repository / "tests" / "it.rs").write_text("#[test]\nfn it() {}\n")
    (repository / "README.md").write_text("# x\n")
    (repository / ".cargo").mkdir()
    (repository / ".cargo" / "config.toml").write_text("[build]\njobs = 1\n")
    (repository / "rust-toolchain.toml").write_text('[toolchain]\nchannel = "nightly"\n')
    (repository / "inside").symlink_to("Cargo.toml")
    (repository / "outside").symlink_to("/etc/passwd")
    # A link that stays inside by its text, but leads out through another link.
    (repository / "up").symlink_to("..")
    (repository / "through").symlink_to("up")
    subprocess.run(["git", "-C", str(repository), "add", "-A"], check=True)
    git(repository, "commit", "-q", "-m", "one")
    revision = resolve_revision(repository, "main", trust_of(repository))
    assert isinstance(revision, Revision) and revision.label.startswith("main (")
    destination = tmp_path / "tree"
    destination.mkdir()
    write_tree(repository, revision, destination, trust_of(repository))
    assert (destination / "Cargo.toml").read_text().startswith("[package]")
    assert (destination / ".cargo" / "config.toml").read_text() == "[build]\njobs = 1\n"
    assert (destination / "src" / "main.rs").read_bytes() == b""
    assert (destination / "tests" / "it.rs").read_bytes() == b""
    # Only what the audit reads and the targets cargo discovers; no link, not even one inside.
    written = sorted(p.relative_to(destination).as_posix() for p in destination.rglob("*"))
    assert written == [
        ".cargo",
        ".cargo/config.toml",
        ".git",
        "Cargo.toml",
        "src",
        "src/main.rs",
        "tests",
        "tests/it.rs",
    ]
    with pytest.raises(FeatcheckError, match="is not a revision"):
        resolve_revision(repository, "--output=/tmp/x", trust_of(repository))


def test_a_revisions_tree_is_kept_once_in_the_users_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repository = _one_commit(tmp_path / "repo")
    revision = resolve_revision(repository, "main", trust_of(repository))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    with revision_tree(repository, trust_of(repository), revision) as first:
        (first / "Cargo.toml").read_text()
    with revision_tree(repository, trust_of(repository), revision) as second:
        kept = tmp_path / "cache" / "featcheck" / "revisions" / cache_key(revision)
        assert second == first == kept and kept.name.startswith(revision.commit)
    assert [p.name for p in first.parent.iterdir()] == [kept.name]  # nothing half-written
    # A cache inside the checkout is the checkout's: a directory of this run's serves instead.
    monkeypatch.setenv("XDG_CACHE_HOME", str(repository / "cache"))
    with revision_tree(repository, trust_of(repository), revision) as scratch:
        assert not scratch.is_relative_to(repository) and (scratch / "Cargo.toml").is_file()
    assert not scratch.exists()


def test_a_revision_git_cannot_find_says_how_to_get_it_only_in_a_shallow_clone(
    home: Path, tmp_path: Path
) -> None:
    """Found on candle: every missing revision was told to `git fetch --depth=1 origin REV`,
    in a full clone too, and for `HEAD~1` or a short commit, which that command cannot fetch;
    `HEAD^{tree}` read as a repository git cannot read."""
    repository = new_repository(
        tmp_path / "repo", home, member("a", TRIMMED_REGEX), member("b", "")
    )
    write_member(repository, "b", member("b", TRIMMED_MEMCHR))
    commit(repository, "b trims memchr")
    with pytest.raises(FeatcheckError) as missing:
        resolve_revision(repository, "nope", trust_of(repository))
    assert str(missing.value) == "--new-since: `nope` is not a commit of this repository"
    with pytest.raises(FeatcheckError) as tree:
        resolve_revision(repository, "HEAD^{tree}", trust_of(repository))
    assert str(tree.value).startswith("--new-since: `HEAD^{tree}` is not a commit (git: ")
    shallow = tmp_path / "shallow"
    subprocess.run(
        ["git", "clone", "-q", "--depth=1", f"file://{repository}", str(shallow)], check=True
    )
    with pytest.raises(FeatcheckError) as beyond:
        resolve_revision(shallow, "HEAD~1", trust_of(shallow))
    assert str(beyond.value) == (
        "--new-since: `HEAD~1` is not a commit of this repository (this clone is shallow: "
        "fetch the history first, e.g. git fetch --unshallow)"
    )


def test_a_run_never_removes_a_whole_tree_another_run_may_be_auditing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Parallel runs on one cache: a run that finds the tree written whole by another while it
    wrote its own leaves that one in place (the other may be running cargo in it), and trees
    used within the hour outlive the eight kept."""
    import featcheck.comparison.revision as revision_module

    repository = _one_commit(tmp_path / "repo")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    trust = trust_of(repository)
    revision = resolve_revision(repository, "main", trust)
    write = revision_module.write_tree

    def other_run_finishes_first(*arguments: Any, **keywords: Any) -> None:
        monkeypatch.setattr(revision_module, "write_tree", write)
        write(*arguments, **keywords)
        with revision_tree(repository, trust, revision) as others:
            (others / "Cargo.lock").write_text("# the other run's cargo, still at work\n")

    monkeypatch.setattr(revision_module, "write_tree", other_run_finishes_first)
    with revision_tree(repository, trust, revision) as tree:
        assert (tree / "Cargo.lock").is_file()

    root = tree.parent
    for number in range(12):
        old = root / f"{number:040x}-0"
        old.mkdir()
        age = 7200 if number < 4 else 60  # four used two hours ago, eight a minute ago
        os.utime(old, (time.time() - age, time.time() - age))
    with revision_tree(repository, trust, revision):
        pass
    left = sorted(p.name for p in root.iterdir())
    assert left == sorted([tree.name, *(f"{n:040x}-0" for n in range(4, 12))])


def test_a_vendored_revision_is_audited_and_a_broken_one_named_as_git_names_it(
    home: Path, tmp_path: Path
) -> None:
    """`cargo vendor`'s crates keep their checksum files in REF's tree (cargo reads them to load
    the crate); a revision whose manifest is broken is named by its path in the repository."""
    repository = new_repository(
        tmp_path / "repo", home, member("a", TRIMMED_MEMCHR), member("b", TRIMMED_REGEX)
    )
    locked = re.findall(
        r'name = "([^"]+)"\nversion = "([^"]+)"\nsource', (repository / "Cargo.lock").read_text()
    )
    for name, version in locked:
        shutil.copytree(
            home.parent / "registry" / f"{name}-{version}", repository / "vendor" / name
        )
    (repository / ".cargo").mkdir()
    (repository / ".cargo" / "config.toml").write_text(
        '[source.crates-io]\nreplace-with = "vendored"\n\n[source.vendored]\ndirectory = "vendor"\n'
    )
    commit(repository, "vendored")
    done = featcheck_in_process(repository, home, "--new-since", "HEAD")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "0 new, 2 also on HEAD" in done.stdout

    (repository / "b" / "Cargo.toml").write_text("[package\n")
    commit(repository, "broken")
    write_member(repository, "b", member("b", TRIMMED_REGEX))
    done = featcheck_in_process(repository, home, "--new-since", "HEAD")
    assert "note: the audit of HEAD (" in done.stdout
    assert "failed, so every finding is new: b/Cargo.toml:1:9: invalid TOML" in done.stdout
    assert "revisions" not in done.stdout

    # A revision without Cargo.lock, which --no-exec needs: said of the revision, not of
    # featcheck's copy of it (where nobody runs cargo).
    (repository / "Cargo.lock").rename(tmp_path / "Cargo.lock")
    commit(repository, "no lockfile")
    (tmp_path / "Cargo.lock").rename(repository / "Cargo.lock")
    done = featcheck_in_process(repository, home, "--no-exec", "--new-since", "HEAD")
    assert "failed, so every finding is new: it has no Cargo.lock, which --no-exec" in done.stdout
    assert "revisions" not in done.stdout and "generate-lockfile" not in done.stdout


def _one_commit(repository: Path) -> Path:
    """A repository whose one commit holds a package manifest."""
    repository.mkdir()
    git(repository, "init", "-q", "-b", "main")
    (repository / "Cargo.toml").write_text('[package]\nname = "x"\nversion = "0.1.0"\n')
    git(repository, "add", "-A")
    git(repository, "commit", "-q", "-m", "one")
    return repository


def test_a_build_configuration_the_finding_is_new_in_is_shown_alone(
    home: Path, tmp_path: Path
) -> None:
    """`--each-feature` makes one finding of the builds that show it. REF's regex finding is in
    the default build and the one without defaults; HEAD's `other` no longer turns `perf` on,
    so its build has it too. That build is new: it is shown, the two others hidden (the
    finding's fingerprint was its first build's, and all three were hidden). A baseline
    written at REF hides the same two."""
    features = '\n[features]\nfast = ["regex/perf"]\nother = ["regex/perf"]\n'
    a = member("a", TRIMMED_REGEX) + features
    repository = new_repository(tmp_path / "repo", home, a, member("b", ""))
    baseline = tmp_path / "baseline.txt"
    options = ("-p", "a", "--each-feature", "--format", "json")
    written = featcheck_in_process(repository, home, *options, "--write-baseline", str(baseline))
    assert written.returncode == 0, written.stderr
    entries = [line.split()[5] for line in baseline.read_text().splitlines() if line[0] != "#"]
    assert sorted(entries) == ["default", "no-default-features"]
    write_member(repository, "a", a.replace('other = ["regex/perf"]', "other = []"))
    commit(repository, "other leaves regex's perf off")

    for against in (("--new-since", "HEAD~1"), ("--baseline", str(baseline))):
        report = json.loads(featcheck_in_process(repository, home, *options, *against).stdout)
        [shown] = report["findings"]
        assert (shown["code"], shown["configurations"]) == (
            "FC011",
            [{"features": ["other"], "no_default_features": True, "all_features": False}],
        )
        [comparison] = report["comparisons"]
        assert [f["configurations"] for f in comparison["hidden"]] == [
            [
                {"features": [], "no_default_features": False, "all_features": False},
                {"features": [], "no_default_features": True, "all_features": False},
            ]
        ]
        assert comparison["absent"] == comparison.get("stale", []) == []


def test_a_build_configuration_that_is_gone_is_absent_and_its_baseline_entry_stale(
    home: Path, tmp_path: Path
) -> None:
    """REF's regex finding is in three builds; HEAD drops the feature `extra`, and with it a
    build. That build's finding is absent (it was not, while the others stood), and its
    baseline entry stale and dropped by a rewrite from the same full run (it was kept, as an
    entry about a build the run did not audit)."""
    features = '\n[features]\nfast = ["regex/perf"]\nextra = []\n'
    a = member("a", TRIMMED_REGEX) + features
    repository = new_repository(tmp_path / "repo", home, a, member("b", ""))
    baseline = tmp_path / "baseline.txt"
    options = ("--each-feature", "--format", "json")
    written = featcheck_in_process(repository, home, *options, "--write-baseline", str(baseline))
    assert written.returncode == 0, written.stderr
    write_member(repository, "a", a.replace("extra = []\n", ""))
    commit(repository, "extra goes")

    report = json.loads(
        featcheck_in_process(repository, home, *options, "--new-since", "HEAD~1").stdout
    )
    [comparison] = report["comparisons"]
    assert [[c["features"] for c in f["configurations"]] for f in comparison["absent"]] == [
        [["extra"]]
    ]
    report = json.loads(
        featcheck_in_process(repository, home, *options, "--baseline", str(baseline)).stdout
    )
    [comparison] = report["comparisons"]
    assert [e["entry"].split(":")[0] for e in comparison["stale"]] == [
        "FC011 a (no-default-features,features=extra)"
    ]
    rewritten = featcheck_in_process(repository, home, *options, "--write-baseline", str(baseline))
    assert "kept" not in rewritten.stderr
    assert "features=extra" not in baseline.read_text()
