"""`--new-since` reads the checkout's own repository only: a `.git` file, link or `commondir`
naming another repository of the machine is refused before git runs (its manifests were audited
and quoted), while a linked worktree and a submodule, which name the checkout back, are read; a
FIFO where git reads its state is refused at once (git waited on it until --timeout)."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import pytest
from history_support import (
    TRIMMED_MEMCHR,
    TRIMMED_REGEX,
    commit,
    featcheck_in_process,
    git,
    member,
    new_repository,
    registry_home,
)

pytestmark = [pytest.mark.cargo, pytest.mark.usefixtures("remembered_cargo")]

SECRET = "victim-secret-manifest-line"
FOREIGN = "names a repository outside the checkout that does not name this checkout back"


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return registry_home(tmp_path_factory.mktemp("registry"))


def _victim(tmp_path: Path, home: Path) -> Path:
    """Another repository of the user's, whose manifest must never reach a report."""
    victim = new_repository(
        tmp_path / "victim",
        home,
        member("a", f"# {SECRET}\n" + TRIMMED_MEMCHR),
        member("b", TRIMMED_REGEX),
    )
    return victim


@pytest.mark.parametrize("shape", ["gitdir-file", "link", "commondir", "objects-link"])
def test_a_git_directory_of_another_repository_is_refused(
    shape: str, home: Path, tmp_path: Path
) -> None:
    victim = _victim(tmp_path, home)
    checkout = new_repository(
        tmp_path / "checkout", home, member("a", ""), member("b", TRIMMED_REGEX)
    )
    if shape == "commondir":
        (checkout / ".git" / "commondir").write_text(str(victim / ".git") + "\n")
    elif shape == "objects-link":  # and a ref naming the victim's commit
        subprocess.run(["rm", "-rf", str(checkout / ".git" / "objects")], check=True)
        (checkout / ".git" / "objects").symlink_to(victim / ".git" / "objects")
        head = git(victim, "rev-parse", "HEAD").strip()
        (checkout / ".git" / "refs" / "heads" / "main").write_text(head + "\n")
    else:
        subprocess.run(["rm", "-rf", str(checkout / ".git")], check=True)
        if shape == "link":
            (checkout / ".git").symlink_to(victim / ".git")
        else:
            (checkout / ".git").write_text(f"gitdir: {victim / '.git'}\n")
    done = featcheck_in_process(checkout, home, "--new-since", "HEAD")
    assert done.returncode == 2, done.stdout + done.stderr
    assert "outside the checkout that does not name this checkout back" in done.stderr
    assert len(done.stderr.splitlines()) == 1
    assert SECRET not in done.stdout + done.stderr


def test_a_linked_worktree_and_a_submodule_are_read(home: Path, tmp_path: Path) -> None:
    main = new_repository(
        tmp_path / "main", home, member("a", TRIMMED_MEMCHR), member("b", TRIMMED_REGEX)
    )
    git(main, "worktree", "add", "-q", str(tmp_path / "worktree"))
    done = featcheck_in_process(tmp_path / "worktree", home, "--new-since", "HEAD")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "0 new, 2 also on HEAD" in done.stdout

    outer = tmp_path / "outer"
    outer.mkdir()
    git(outer, "init", "-q")
    (outer / "README").write_text("outer\n")
    git(outer, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(main), "sub")
    commit(outer, "with a submodule")
    assert (outer / "sub" / ".git").is_file()  # `gitdir: ../.git/modules/sub`
    done = featcheck_in_process(outer / "sub", home, "--new-since", "HEAD")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "0 new, 2 also on HEAD" in done.stdout


def test_a_fifo_where_git_reads_its_state_is_refused_at_once(home: Path, tmp_path: Path) -> None:
    checkout = new_repository(
        tmp_path / "checkout", home, member("a", ""), member("b", TRIMMED_REGEX)
    )
    (checkout / ".git" / "HEAD").unlink()
    os.mkfifo(checkout / ".git" / "HEAD")
    started = time.monotonic()
    done = featcheck_in_process(checkout, home, "--new-since", "HEAD", "--timeout", "60")
    assert done.returncode == 2, done.stdout + done.stderr
    assert f"{checkout / '.git' / 'HEAD'}: --new-since: not a regular file" in done.stderr
    assert time.monotonic() - started < 30  # not git waiting until the timeout
