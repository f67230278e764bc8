"""`--new-since REV` on a repository an attacker made: its git configuration, its trees and its
objects are theirs. Reading REV runs none of the repository's programs, touches no network,
writes nothing outside featcheck's own directory, stays within its bounds and its --timeout,
and caches only content that matches its object ids, per repository."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from git_objects import (
    FILE,
    LINK,
    TREE,
    forge_loose,
    loose_path,
    tree_of,
    write_blob,
    write_commit,
    write_tree,
    write_zero_blob,
)
from history_support import (
    TRIMMED_MEMCHR,
    TRIMMED_REGEX,
    commit,
    featcheck,
    git,
    member,
    new_repository,
    registry_home,
    write_member,
)
from hostile_support import in_process_with

MANIFEST = '[package]\nname = "tiny"\nversion = "0.1.0"\nedition = "2021"\n'
LOCK = 'version = 4\n\n[[package]]\nname = "tiny"\nversion = "0.1.0"\n'


def tiny_repository(path: Path) -> Path:
    """A package without dependencies in two commits (HEAD~1 and HEAD differ in every file)."""
    path.mkdir()
    git(path, "init", "-q", "-b", "main")
    (path / "src").mkdir()
    (path / "Cargo.lock").write_text(LOCK)
    for number in (1, 2):
        (path / "Cargo.toml").write_text(f"{MANIFEST}# {number}\n")
        (path / "src" / "main.rs").write_text(f"fn main() {{}} // {number}\n")
        commit(path, f"commit {number}")
    return path


def run_audit(
    repository: Path, cache: Path, *arguments: str, extra: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """featcheck --no-exec (no cargo needed: the package has no dependencies) with its cache
    in `cache`; a run past two minutes fails the test."""
    environment = {**os.environ, "XDG_CACHE_HOME": str(cache), "NO_COLOR": "1", **(extra or {})}
    return subprocess.run(
        [sys.executable, "-m", "featcheck", str(repository), "--no-exec", *arguments],
        capture_output=True,
        text=True,
        check=False,
        env=environment,
        timeout=120,
    )


def audit_in_process(
    repository: Path, cache: Path, *arguments: str
) -> subprocess.CompletedProcess[str]:
    """`run_audit` in this process, for the tests whose subject is what featcheck reads from
    the repository and the git it starts (a real process); those of a hanging git, of memory
    and of the environment git inherits run featcheck as a process of its own."""
    return in_process_with(
        [str(repository), "--no-exec", *arguments], {"XDG_CACHE_HOME": str(cache)}
    )


def one_line_error(done: subprocess.CompletedProcess[str]) -> str:
    assert done.returncode == 2, done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    [line] = done.stderr.strip().splitlines()
    assert line.startswith("featcheck: error: --new-since: "), line
    return line


def cached_trees(cache: Path) -> list[str]:
    revisions = cache / "featcheck" / "revisions"
    return sorted(p.name for p in revisions.iterdir()) if revisions.is_dir() else []


def test_a_partial_clone_fetches_nothing_and_a_missing_manifest_is_one_line(
    tmp_path: Path,
) -> None:
    repository = tiny_repository(tmp_path / "repo")
    marker = tmp_path / "ssh-ran"
    ssh = tmp_path / "ssh"
    ssh.write_text(f'#!/bin/sh\necho "$@" >> {marker}\nexit 1\n')
    ssh.chmod(0o755)
    for key, value in [
        ("core.repositoryformatversion", "1"),
        ("extensions.partialClone", "origin"),
        ("remote.origin.url", "ssh://example.invalid/repo"),
        ("remote.origin.promisor", "true"),
        ("core.sshCommand", str(ssh)),
    ]:
        git(repository, "config", key, value)
    # A source file's content is never read: its missing blob changes nothing.
    loose_path(repository, git(repository, "rev-parse", "HEAD~1:src/main.rs").strip()).unlink()
    done = audit_in_process(repository, tmp_path / "cache-1", "--new-since", "HEAD~1")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "0 new, 0 also on HEAD~1" in done.stdout
    # A manifest's blob is needed: missing, it is named in one line, and nothing is fetched.
    manifest = git(repository, "rev-parse", "HEAD~1:Cargo.toml").strip()
    loose_path(repository, manifest).unlink()
    done = audit_in_process(repository, tmp_path / "cache-2", "--new-since", "HEAD~1")
    assert not marker.exists(), marker.read_text()
    line = one_line_error(done)
    assert f"Cargo.toml ({manifest[:12]}) is not in this repository" in line
    assert "partial clone" in line
    assert cached_trees(tmp_path / "cache-2") == []


_GUARDED_ENVIRONMENT = {
    "GIT_NO_LAZY_FETCH": "1",
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_NO_REPLACE_OBJECTS": "1",
    "GIT_TERMINAL_PROMPT": "0",
    "GIT_ALLOW_PROTOCOL": "",
    "GIT_PROTOCOL_FROM_USER": "0",
    "GIT_ASKPASS": "",
    "GIT_OPTIONAL_LOCKS": "0",
    "GIT_ATTR_NOSYSTEM": "1",
    "LC_ALL": "C",
}
_GUARD_ARGUMENTS = [
    "--no-pager",
    *("-c", "protocol.allow=never"),
    *("-c", "core.fsmonitor=false"),
    *("-c", "core.hooksPath=" + os.devnull),
    *("-c", "core.sshCommand=false"),
    *("-c", "core.askPass="),
    *("-c", "credential.helper="),
]


def test_every_git_process_runs_in_the_guarded_environment(tmp_path: Path) -> None:
    repository = tiny_repository(tmp_path / "repo")
    decoy = tmp_path / "decoy"
    decoy.mkdir()
    git(decoy, "init", "-q")
    log = tmp_path / "git-calls.jsonl"
    real_git = shutil.which("git")
    assert real_git is not None
    bin_directory = tmp_path / "bin"
    bin_directory.mkdir()
    recorder = bin_directory / "git"
    recorder.write_text(
        f"#!{sys.executable}\nimport json, os, sys\n"
        f"with open({str(log)!r}, 'a') as log:\n"
        "    log.write(json.dumps({'argv': sys.argv[1:], 'env': dict(os.environ)}) + '\\n')\n"
        f"os.execv({real_git!r}, [{real_git!r}, *sys.argv[1:]])\n"
    )
    recorder.chmod(0o755)
    # What a user's shell or a git hook may have set: none of it reaches git.
    inherited = {
        "PATH": f"{bin_directory}{os.pathsep}{os.environ['PATH']}",
        "GIT_DIR": str(decoy / ".git"),
        "GIT_CONFIG_PARAMETERS": "'core.sshcommand'='touch /tmp/pwned'",
        "GIT_CONFIG_COUNT": "1",
        "GIT_CONFIG_KEY_0": "core.fsmonitor",
        "GIT_CONFIG_VALUE_0": "touch /tmp/pwned",
        "GIT_SSH_COMMAND": "touch /tmp/pwned",
        "GIT_ALTERNATE_OBJECT_DIRECTORIES": str(decoy / ".git" / "objects"),
        "SSH_ASKPASS": "touch",
        "GIT_ASKPASS": "touch",
    }
    done = run_audit(repository, tmp_path / "cache", "--new-since", "HEAD~1", extra=inherited)
    calls = [json.loads(line) for line in log.read_text().splitlines()]
    assert len(calls) >= 3, calls  # the revision, the objects' sizes, their contents
    for call in calls:
        argv, environment = call["argv"], call["env"]
        assert argv[: len(_GUARD_ARGUMENTS)] == _GUARD_ARGUMENTS, argv
        for name, value in _GUARDED_ENVIRONMENT.items():
            assert environment.get(name) == value, (name, argv)
        leaked = [
            name
            for name in environment
            if name.startswith("GIT_") and name not in _GUARDED_ENVIRONMENT
        ]
        assert leaked == [] and "SSH_ASKPASS" not in environment, (leaked, argv)
    # After the guards: `-c safe.directory=REPOSITORY -C REPOSITORY`, then the command.
    assert {call["argv"][len(_GUARD_ARGUMENTS) + 4] for call in calls} == {
        "rev-parse",
        "cat-file",
    }
    assert done.returncode == 0, done.stdout + done.stderr
    assert "0 new, 0 also on HEAD~1" in done.stdout


def test_a_link_beside_a_directory_of_its_name_writes_nothing_through_it(
    tmp_path: Path,
) -> None:
    repository = tiny_repository(tmp_path / "repo")
    victim = tmp_path / "victim"  # stands for the user's home
    victim.mkdir()
    cache = tmp_path / "cache"
    # From featcheck's directory for the tree (cache/featcheck/revisions/<tree>/h) to victim.
    link = write_blob(repository, b"../../../../victim")
    config = write_blob(repository, b'[build]\nrustc-wrapper = "/tmp/evil"\n')
    dot_cargo = write_tree(repository, [(FILE, "config.toml", config)])
    beside = write_tree(repository, [(TREE, ".cargo", dot_cargo)])
    root = [*tree_of(repository, "HEAD"), (LINK, "h", link), (TREE, "h", beside)]
    hostile = write_commit(repository, write_tree(repository, root), "HEAD")
    done = audit_in_process(repository, cache, "--new-since", hostile)
    assert [str(p.relative_to(victim)) for p in victim.rglob("*")] == []
    assert "`h` twice" in one_line_error(done)
    assert cached_trees(cache) == []


def test_a_tree_bomb_is_refused_at_the_entry_bound_in_seconds(tmp_path: Path) -> None:
    repository = tiny_repository(tmp_path / "repo")
    cache = tmp_path / "cache"
    # 16^5 = 1,048,576 files from a few KB of objects: each level holds the one below 16 times.
    level = write_tree(
        repository, [(FILE, f"f{n:x}", write_blob(repository, b"")) for n in range(16)]
    )
    for _ in range(4):
        level = write_tree(repository, [(TREE, f"d{n:x}", level) for n in range(16)])
    bomb = write_commit(
        repository,
        write_tree(repository, [*tree_of(repository, "HEAD"), (TREE, "bomb", level)]),
        "HEAD",
    )
    started = time.monotonic()
    line = one_line_error(run_audit(repository, cache, "--new-since", bomb, "--timeout", "20"))
    assert time.monotonic() - started < 20
    assert "more than 200,000 entries" in line
    assert cached_trees(cache) == []


def test_a_huge_lockfile_blob_is_refused_by_its_size_unread(tmp_path: Path) -> None:
    repository = tiny_repository(tmp_path / "repo")
    cache = tmp_path / "cache"
    lock = write_zero_blob(repository, 256 << 20)
    huge = write_commit(
        repository,
        write_tree(repository, [*_without("Cargo.lock", repository), (FILE, "Cargo.lock", lock)]),
        "HEAD",
    )
    # Peak memory of featcheck and the git it starts, measured by a process of their own.
    measure = (
        "import resource, subprocess, sys\n"
        "done = subprocess.run(sys.argv[1:], capture_output=True, text=True)\n"
        "print(done.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n"
        "print(done.stderr, end='')\n"
    )
    environment = {**os.environ, "XDG_CACHE_HOME": str(cache), "NO_COLOR": "1"}
    audit = [sys.executable, "-m", "featcheck", str(repository), "--no-exec", "--new-since", huge]
    done = subprocess.run(
        [sys.executable, "-c", measure, *audit],
        capture_output=True,
        text=True,
        env=environment,
        timeout=120,
        check=False,
    )
    status, _, stderr = done.stdout.partition("\n")
    code, peak_kib = (int(word) for word in status.split())
    line = one_line_error(subprocess.CompletedProcess([], code, "", stderr))
    assert f"Cargo.lock ({lock[:12]}) is larger than 64 MiB" in line
    assert peak_kib < 160 << 10, f"{peak_kib} KiB"  # the blob is 256 MiB
    assert cached_trees(cache) == []


def _without(name: str, repository: Path) -> list[tuple[str, str, str]]:
    return [entry for entry in tree_of(repository, "HEAD") if entry[1] != name]


def test_a_git_that_hangs_is_ended_at_the_audits_timeout(tmp_path: Path) -> None:
    repository = tiny_repository(tmp_path / "repo")
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    # git opens what the configuration includes, and waits on a FIFO for a writer forever.
    with (repository / ".git" / "config").open("a") as config:
        config.write(f"[include]\n\tpath = {fifo}\n")
    started = time.monotonic()
    line = one_line_error(
        run_audit(repository, tmp_path / "cache", "--new-since", "HEAD~1", "--timeout", "3")
    )
    assert time.monotonic() - started < 20
    assert "took longer than --timeout (3 s)" in line


@pytest.mark.parametrize("forged", ["blob", "tree"])
def test_an_object_whose_content_is_not_its_id_is_refused(tmp_path: Path, forged: str) -> None:
    repository = tiny_repository(tmp_path / "repo")
    if forged == "blob":
        target = git(repository, "rev-parse", "HEAD~1:Cargo.toml").strip()
        content = f"{MANIFEST}# forged\n".encode()
    else:
        target = git(repository, "rev-parse", "HEAD~1^{tree}").strip()
        content = b"".join(  # a real tree: the one of HEAD
            mode.encode() + b" " + name.encode() + b"\0" + bytes.fromhex(object_id)
            for mode, name, object_id in tree_of(repository, "HEAD")
        )
    forge_loose(repository, target, forged, content)
    cache = tmp_path / "cache"
    line = one_line_error(audit_in_process(repository, cache, "--new-since", "HEAD~1"))
    assert f"the {forged} {target[:12]} does not match its id" in line
    assert cached_trees(cache) == []


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return registry_home(tmp_path_factory.mktemp("registry"))


@pytest.mark.cargo
def test_one_repositorys_forged_object_hides_nothing_in_another(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Two repositories with one same first commit (same content, same dates: same id).
    monkeypatch.setenv("GIT_AUTHOR_DATE", "2026-01-01T00:00:00Z")
    monkeypatch.setenv("GIT_COMMITTER_DATE", "2026-01-01T00:00:00Z")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    victim, attacker = (
        new_repository(tmp_path / name, home, member("a", TRIMMED_REGEX), member("b", ""))
        for name in ("victim", "attacker")
    )
    first = git(victim, "rev-parse", "HEAD").strip()
    assert git(attacker, "rev-parse", "HEAD").strip() == first
    write_member(victim, "b", member("b", TRIMMED_MEMCHR))
    commit(victim, "b trims memchr")
    # The attacker's copy of the first commit says b trimmed memchr already.
    blob = git(attacker, "rev-parse", "HEAD:b/Cargo.toml").strip()
    forge_loose(attacker, blob, "blob", member("b", TRIMMED_MEMCHR).encode())
    done = featcheck(attacker, home, "--new-since", first)
    assert done.returncode == 2 and "does not match its id" in done.stderr, done.stderr
    done = featcheck(victim, home, "--new-since", first)
    assert done.returncode == 1, done.stdout + done.stderr
    assert f"1 new, 1 also on {first[:8]}" in done.stdout


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="needs root to chown")
def test_a_repository_of_another_user_is_read_as_the_user_asked(tmp_path: Path) -> None:
    """A CI container's checkout often belongs to another user than the one featcheck runs
    as; the user's own `safe.directory` (global configuration, not read) allowed it. The user
    asked to audit this repository, so featcheck's git may read it — and obeys nothing of it."""
    repository = tiny_repository(tmp_path / "theirs")
    for path in (repository, *repository.rglob("*")):
        os.lchown(path, 65534, 65534)
    done = run_audit(repository, tmp_path / "cache", "--new-since", "HEAD~1")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "0 new, 0 also on HEAD~1" in done.stdout
