"""The pre-commit hook (.pre-commit-hooks.yaml), run by the real pre-commit.

`pre-commit try-repo` installs featcheck from a committed copy of this repository into its own
virtual environment (pip needs PyPI for featcheck's dependencies: marked `network`), then runs
the hook in a small git repository holding one of the example crates.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from actions_support import clear_actions_environment
from conftest import CRATES, REPO

PRE_COMMIT = (sys.executable, "-m", "pre_commit")
GIT_IDENTITY = (
    "-c",
    "user.name=featcheck tests",
    "-c",
    "user.email=tests@featcheck.invalid",
    "-c",
    "commit.gpgsign=false",
)


@pytest.fixture(autouse=True)
def _outside_actions(monkeypatch: pytest.MonkeyPatch) -> None:
    clear_actions_environment(monkeypatch)


def test_hook_definition() -> None:
    [hook] = yaml.safe_load((REPO / ".pre-commit-hooks.yaml").read_text())
    assert hook["id"] == "featcheck"
    assert hook["entry"] == "featcheck"
    assert hook["language"] == "python"
    assert hook["pass_filenames"] is False
    assert hook["require_serial"] is True
    pattern = hook["files"]
    matches = [
        path
        for path in ("Cargo.toml", "crates/app/Cargo.lock", "src/main.rs", "xCargo.toml")
        if re.search(pattern, path)
    ]
    assert matches == ["Cargo.toml", "crates/app/Cargo.lock"]


def _git(*args: str, cwd: Path) -> None:
    subprocess.run(["git", *GIT_IDENTITY, *args], cwd=cwd, check=True, capture_output=True)


def _commit_all(repo: Path, message: str) -> None:
    _git("add", "-A", cwd=repo)
    _git("commit", "-q", "-m", message, cwd=repo)


def _hook_repository(destination: Path) -> Path:
    """This repository's package and hook file, committed (try-repo needs a commit)."""
    destination.mkdir()
    for name in ("pyproject.toml", ".pre-commit-hooks.yaml", "README.md", "LICENSE"):
        if (REPO / name).exists():
            shutil.copy2(REPO / name, destination / name)
    shutil.copytree(
        REPO / "src",
        destination / "src",
        ignore=shutil.ignore_patterns("*.egg-info", "__pycache__"),
    )
    _git("init", "-q", cwd=destination)
    _commit_all(destination, "featcheck")
    return destination


def _put_crate(project: Path, crate: Path) -> None:
    for name in ("Cargo.toml", "Cargo.lock", "src/main.rs"):
        (project / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(crate / name, project / name)


def _try_repo(project: Path, hooks: Path, home: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PRE_COMMIT_HOME": str(home), "NO_COLOR": "1"}
    return subprocess.run(
        [*PRE_COMMIT, "try-repo", str(hooks), "featcheck", "--all-files", "--color", "never"],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        check=False,
        timeout=600,
    )


@pytest.mark.network
def test_hook_fails_on_flex_without_rayon_and_passes_once_fixed(
    offline_cargo: Path, tmp_path: Path
) -> None:
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    hooks = _hook_repository(tmp_path / "hooks")
    project = tmp_path / "project"
    project.mkdir()
    _git("init", "-q", cwd=project)
    _put_crate(project, CRATES / "pitb-exec-cpu")
    _commit_all(project, "burn without rayon")
    home = tmp_path / "pre-commit-home"

    failing = _try_repo(project, hooks, home)
    output = failing.stdout + failing.stderr
    assert failing.returncode == 1, output
    assert "featcheck (Cargo feature audit)" in output
    assert "Failed" in output
    assert "error[FC001] burn-flex 0.22.1 is built without `rayon`" in output
    assert "--> Cargo.toml:9:31" in output

    # The fix: rayon in burn's features (pitb-exec-cpu-simd is that manifest, with its lockfile).
    for name in ("Cargo.toml", "Cargo.lock"):
        (project / name).unlink()
    _put_crate(project, CRATES / "pitb-exec-cpu-simd")
    _commit_all(project, "burn with rayon")

    passing = _try_repo(project, hooks, home)
    output = passing.stdout + passing.stderr
    assert passing.returncode == 0, output
    assert "Passed" in output
    assert "FC001" not in output
