"""cargo's last metadata answer stands in for cargo while nothing cargo reads has changed: any
change to a file, directory, setting or program it reads, and cargo runs again.

featcheck's command line runs in this process (cli_in_process.run_in_process): what one run
keeps for the next lies in the user cache on disk, as between two runs of a user. `--verbose`
says whether cargo ran (`running: cargo metadata`) or its kept answer stood (`reusing the answer of`)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from cli_in_process import run_in_process
from support import WORKSPACES

from featcheck.cargo import last_answer as last_answer_module
from featcheck.cargo.last_answer import MAX_KEPT, LastAnswer

FLAGGED = "regex-without-perf"
"""A project with one finding (FC011: regex without its `perf` features), small enough that cargo
and the audit take little time: what is kept between runs does not depend on the size."""
GLOB_MEMBERS = "repeated-cut"
"""A workspace whose members are `members/*`: ten members that inherit one trimmed line."""

RAN = "featcheck: running: cargo metadata"
KEPT = "featcheck: reusing the answer of: cargo metadata"


def _copy(workspace: str, into: Path) -> Path:
    project = into / workspace
    shutil.copytree(WORKSPACES / workspace, project, ignore=shutil.ignore_patterns("target"))
    return project


def _ready(workspace: str, into: Path, offline_cargo_for: Callable[..., Path]) -> Path:
    """A copy of the fixture, cargo pointed at its view of the registry, settled."""
    project = _copy(workspace, into)
    offline_cargo_for(project)
    _settle()
    return project


def _settle() -> None:
    """Wait until files written now count as written before the next cargo starts: an answer
    is not kept where cargo may have read a file as it was or as it is (last_answer.py)."""
    time.sleep(last_answer_module._SETTLING_NS / 1e9 + 0.01)


def _kept(cache: Path) -> list[Path]:
    return sorted((cache / "featcheck" / "metadata").glob("*.json"))


def _audit(project: Path) -> subprocess.CompletedProcess[str]:
    """`featcheck -v PROJECT --format json`: the report on stdout, cargo's commands on stderr."""
    done = run_in_process("-v", str(project), "--format", "json")
    assert done.returncode in (0, 1), done.stderr
    assert (RAN in done.stderr) != (KEPT in done.stderr), done.stderr
    return done


@pytest.fixture
def user_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    cache = tmp_path / "cache"
    monkeypatch.setenv("XDG_CACHE_HOME", str(cache))
    return cache


def test_an_unchanged_project_is_audited_without_cargo_and_reported_the_same(
    tmp_path: Path, offline_cargo_for: Callable[..., Path], user_cache: Path
) -> None:
    project = _ready(FLAGGED, tmp_path, offline_cargo_for)
    first = _audit(project)
    assert RAN in first.stderr
    [kept] = _kept(user_cache)
    second = _audit(project)
    assert KEPT in second.stderr
    assert (second.returncode, second.stdout) == (first.returncode, first.stdout)
    assert [f["code"] for f in json.loads(second.stdout)["findings"]] == ["FC011"]
    # A text file in a crate is not among what cargo reads: still unchanged.
    (project / "src" / "main.rs").write_text('fn main() { println!("edited"); }\n')
    assert KEPT in _audit(project).stderr
    assert _kept(user_cache) == [kept]


def _touch(path: Path) -> None:
    """Written again with the same bytes and its modification time put back: only the change
    time says so, which no program can set back."""
    status = path.stat()
    path.write_bytes(path.read_bytes())
    os.utime(path, ns=(status.st_atime_ns, status.st_mtime_ns))


def _comment(path: Path) -> None:
    path.write_text(path.read_text() + "# an edit\n")


def _new_binary(project: Path) -> None:
    (project / "src" / "bin").mkdir()
    (project / "src" / "bin" / "tool.rs").write_text("fn main() {}\n")


def _new_example_with_a_directory(project: Path) -> None:
    (project / "examples" / "demo").mkdir(parents=True)
    _settle()
    _audit(project)  # cargo finds no target in an empty directory; the answer is kept again
    (project / "examples" / "demo" / "main.rs").write_text("fn main() {}\n")


def _new_member(project: Path) -> None:
    member = project / "members" / "example-10"
    shutil.copytree(project / "members" / "example-9", member)
    _comment(member / "Cargo.toml")
    manifest = member / "Cargo.toml"
    manifest.write_text(manifest.read_text().replace("example-9", "example-10"))


def _package_above(directory: Path) -> None:
    """A package above the project: cargo reads its manifest, looking for a `[workspace]`."""
    (directory / "Cargo.toml").write_text('[package]\nname = "above"\nversion = "0.1.0"\n')
    (directory / "src").mkdir()
    (directory / "src" / "lib.rs").write_text("")


CHANGES: dict[str, tuple[str, Callable[[Path], object]]] = {
    "manifest-edited": (FLAGGED, lambda p: _comment(p / "Cargo.toml")),
    "manifest-touched": (FLAGGED, lambda p: _touch(p / "Cargo.toml")),
    "lockfile-touched": (FLAGGED, lambda p: _touch(p / "Cargo.lock")),
    "binary-added": (FLAGGED, _new_binary),
    "example-directory-filled": (FLAGGED, _new_example_with_a_directory),
    "manifest-above": (FLAGGED, lambda p: _package_above(p.parent)),
    "member-manifest-touched": (GLOB_MEMBERS, lambda p: _touch(p / "members/example-3/Cargo.toml")),
    "member-added-by-the-glob": (GLOB_MEMBERS, _new_member),
}


@pytest.mark.parametrize("change", sorted(CHANGES))
def test_a_change_to_what_cargo_reads_makes_cargo_answer_again(
    change: str, tmp_path: Path, offline_cargo_for: Callable[..., Path], user_cache: Path
) -> None:
    """Each change cargo could answer otherwise for (most here it does) runs cargo again, and
    the report is the one an empty cache gives; the answer after it is kept again."""
    workspace, make = CHANGES[change]
    project = _ready(workspace, tmp_path / "checkout", offline_cargo_for)
    _audit(project)
    assert KEPT in _audit(project).stderr
    make(project)
    _settle()
    changed = _audit(project)
    assert RAN in changed.stderr
    kept_again = _audit(project)
    # A new member makes Cargo.lock stale: cargo writes it on each run, featcheck puts it back,
    # and an answer read from a lockfile that is gone again is never kept.
    stale = change == "member-added-by-the-glob"
    assert (RAN if stale else KEPT) in kept_again.stderr
    fresh = run_in_process(
        "-v", str(project), "--format", "json", environment={"XDG_CACHE_HOME": str(tmp_path)}
    )
    for done in (changed, kept_again):
        assert (done.returncode, done.stdout) == (fresh.returncode, fresh.stdout)


def test_a_change_of_settings_or_home_configuration_makes_cargo_answer_again(
    tmp_path: Path,
    offline_cargo_for: Callable[..., Path],
    user_cache: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """cargo's environment (here a variable it reads, not one the shell sets for every command)
    and its home's configuration file."""
    project = _copy(FLAGGED, tmp_path)
    home = tmp_path / "cargo-home"
    shutil.copytree(offline_cargo_for(project), home, symlinks=True)
    monkeypatch.setenv("CARGO_HOME", str(home))
    _settle()
    _audit(project)
    assert KEPT in _audit(project).stderr
    # What a shell sets for each command it starts (`_`: the program's path) is not cargo's.
    monkeypatch.setenv("_", "/usr/bin/time")
    monkeypatch.setenv("SHLVL", "7")
    assert KEPT in _audit(project).stderr
    monkeypatch.setenv("CARGO_NET_RETRY", "3")
    assert RAN in _audit(project).stderr
    assert KEPT in _audit(project).stderr
    _comment(home / "config.toml")
    _settle()
    assert RAN in _audit(project).stderr
    assert KEPT in _audit(project).stderr
    # A configuration that includes other files: cargo's answer is not kept.
    config = home / "config.toml"
    config.write_text(config.read_text() + 'include = ["more.toml"]\n')
    (home / "more.toml").write_text("[net]\nretry = 2\n")
    assert RAN in _audit(project).stderr
    assert RAN in _audit(project).stderr


def test_a_lockfile_cargo_writes_keeps_no_answer(
    tmp_path: Path, offline_cargo_for: Callable[..., Path], user_cache: Path
) -> None:
    """Where cargo writes Cargo.lock (featcheck puts the old one back), what it read is not
    what the files say afterwards: no answer is kept, and cargo answers on every run."""
    project = _copy(FLAGGED, tmp_path)
    offline_cargo_for(project)
    (project / "Cargo.lock").unlink()
    for _ in range(3):
        _settle()
        assert RAN in _audit(project).stderr
        assert not (project / "Cargo.lock").exists()
    assert _kept(user_cache) == []


def test_a_file_changed_while_cargo_works_keeps_no_answer(
    tmp_path: Path,
    offline_cargo_for: Callable[..., Path],
    user_cache: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The manifest is written again just as cargo starts: cargo may have read either, so the
    answer is not kept with the manifest's new status."""
    project = _ready(FLAGGED, tmp_path, offline_cargo_for)
    kept = LastAnswer.kept

    def kept_then_edited(self: LastAnswer) -> str | None:
        found = kept(self)
        _touch(project / "Cargo.toml")
        return found

    monkeypatch.setattr(LastAnswer, "kept", kept_then_edited)
    assert RAN in _audit(project).stderr
    assert _kept(user_cache) == []
    monkeypatch.setattr(LastAnswer, "kept", kept)
    _settle()
    assert RAN in _audit(project).stderr
    assert KEPT in _audit(project).stderr


def test_an_unreadable_kept_answer_means_cargo(
    tmp_path: Path, offline_cargo_for: Callable[..., Path], user_cache: Path
) -> None:
    project = _ready(FLAGGED, tmp_path, offline_cargo_for)
    first = _audit(project)
    [kept] = _kept(user_cache)
    header = kept.read_text().partition("\n")[0]
    for text in ("", "not json\n{}", '{"version": 1, "inputs": [["a"]]}\n{}', '{"inputs": 1}\n'):
        kept.write_text(text)
        again = _audit(project)
        assert RAN in again.stderr
        assert again.stdout == first.stdout
    # Every file as it was, the answer itself damaged: cargo answers, and its answer is kept.
    kept.write_text(header + "\n" + '{"packages": [')
    damaged = run_in_process("-v", str(project), "--format", "json")
    assert KEPT in damaged.stderr
    assert RAN in damaged.stderr
    assert (damaged.returncode, damaged.stdout) == (first.returncode, first.stdout)
    assert KEPT in _audit(project).stderr


def test_a_kept_answer_others_may_write_is_not_taken(
    tmp_path: Path, offline_cargo_for: Callable[..., Path], user_cache: Path
) -> None:
    """A cache directory shared with other users could hold an answer one of them wrote."""
    project = _ready(FLAGGED, tmp_path, offline_cargo_for)
    _audit(project)
    [kept] = _kept(user_cache)
    assert KEPT in _audit(project).stderr
    kept.chmod(0o622)
    assert RAN in _audit(project).stderr


def test_only_the_answers_written_last_are_kept(tmp_path: Path) -> None:
    for index in range(MAX_KEPT + 3):
        (tmp_path / f"{index:02}.json").write_text(f"answer {index}\n")
        os.utime(tmp_path / f"{index:02}.json", (1_000_000 + index, 1_000_000 + index))
    (tmp_path / ".abandoned-writer").write_text("")
    os.utime(tmp_path / ".abandoned-writer", (1_000_000, 1_000_000))
    last_answer_module._forget_all_but_the_last(tmp_path)
    kept = sorted(p.name for p in tmp_path.iterdir())
    assert kept == [f"{index:02}.json" for index in range(3, MAX_KEPT + 3)]


def test_an_audit_that_needs_cargo_again_asks_it(
    tmp_path: Path, offline_cargo_for: Callable[..., Path], user_cache: Path
) -> None:
    """With cargo's answer kept, a fix whose new dependency cargo confirms in a copy is still
    confirmed by cargo: the same diff, not an unconfirmed one."""
    project = tmp_path / "app"
    shutil.copytree(WORKSPACES / "shape-g-new-dependency", project)
    offline_cargo_for(project)
    _settle()
    # app is a library: its finding is info, and so is the fix's level here.
    first = run_in_process(str(project), "--diff", "--fix-level", "info")
    assert first.returncode == 1, first.stderr
    assert "+matrixmultiply = " in first.stdout
    again = run_in_process("-v", str(project), "--diff", "--fix-level", "info")
    assert KEPT in again.stderr
    assert "featcheck: running: cargo" in again.stderr  # the copy's
    assert (again.returncode, again.stdout) == (1, first.stdout)


def test_without_a_usable_user_cache_the_audit_is_the_same(
    tmp_path: Path, offline_cargo_for: Callable[..., Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Where featcheck's cache cannot be made (here the cache home is a file), cargo keeps
    nothing and no answer is kept: the audit is the same, twice, and cargo runs each time."""
    project = _ready(FLAGGED, tmp_path, offline_cargo_for)
    cache_home = tmp_path / "not-a-directory"
    cache_home.write_text("")
    monkeypatch.setenv("XDG_CACHE_HOME", str(cache_home))
    runs = [_audit(project) for _ in range(2)]
    for done in runs:
        assert done.returncode == 1, done.stderr
        assert RAN in done.stderr
        assert "Traceback" not in done.stderr
    assert runs[0].stdout == runs[1].stdout
    assert [f["code"] for f in json.loads(runs[0].stdout)["findings"]] == ["FC011"]
    assert not (project / "target").exists()


def test_a_cache_inside_the_checkout_is_neither_read_nor_written(
    tmp_path: Path, offline_cargo_for: Callable[..., Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A user cache the checkout holds could hold an answer the checkout wrote: featcheck keeps
    no cache there, so cargo answers every time."""
    project = _ready(FLAGGED, tmp_path, offline_cargo_for)
    monkeypatch.setenv("XDG_CACHE_HOME", str(project / ".cache"))
    for _ in range(2):
        assert RAN in _audit(project).stderr
    assert not (project / ".cache" / "featcheck" / "metadata").exists()


def test_a_change_time_in_whole_seconds_counts_as_maybe_during_cargos_run(tmp_path: Path) -> None:
    """A file system that keeps whole seconds dates a change made while cargo worked up to 2 s
    before cargo started; one that keeps nanoseconds, within the kernel's tick."""
    last = LastAnswer(tmp_path / "answer.json", (), tmp_path, {}, None)
    last.started = 1_000 * 10**9 + 500_000_000
    second = 10**9
    assert last._maybe_since(1_000 * second)  # whole seconds: maybe during the run
    assert not last._maybe_since(998 * second)
    assert last._maybe_since(last.started - 5_000_000)  # 5 ms before: within a tick
    assert not last._maybe_since(last.started - 700_000_001)
