"""The pre-commit hook (.pre-commit-hooks.yaml), run by the real pre-commit.

`pre-commit run`, configured as the README tells a user (a `repos:` entry naming a repository
and a commit), installs featcheck from a committed copy of this repository into its own virtual
environment (pip needs PyPI for featcheck's dependencies: marked `network`), then runs the hook
in a small git repository holding one of the example crates.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml
from actions_support import clear_actions_environment, markers_written, plant_python
from cli_in_process import run_in_process
from support import CRATES, REPO

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


VERDICT_FILES = (
    "Cargo.toml",
    "crates/app/Cargo.lock",
    "featcheck.toml",
    "featcheck-baseline.txt",  # the name the README gives the baseline `featcheck.toml` names
    ".cargo/config.toml",
    ".cargo/config",
    "crates/app/.cargo/config.toml",
    "rust-toolchain.toml",
    "rust-toolchain",
)
OTHER_FILES = (
    "src/main.rs",
    "xCargo.toml",
    "README.md",
    "cargo/config.toml",
    "rust-toolchain.md",
    "featcheck-baseline.txt.orig",
)


def _hooks() -> dict[str, dict[str, object]]:
    return {h["id"]: h for h in yaml.safe_load((REPO / ".pre-commit-hooks.yaml").read_text())}


def test_hook_definition() -> None:
    hook = _hooks()["featcheck"]
    assert hook["entry"] == "featcheck"
    assert hook["language"] == "python"
    assert hook["pass_filenames"] is False
    assert hook["require_serial"] is True
    assert "stages" not in hook  # runs on every commit


def test_hook_runs_when_any_file_that_changes_the_verdict_changes() -> None:
    # pre-commit selects a hook's files with re.search on repository-relative paths.
    for hook in _hooks().values():
        pattern = str(hook["files"])
        assert [p for p in VERDICT_FILES if re.search(pattern, p)] == list(VERDICT_FILES)
        assert [p for p in OTHER_FILES if re.search(pattern, p)] == []


def test_fix_hook_runs_only_when_asked_for() -> None:
    hook = _hooks()["featcheck-fix"]
    assert hook["entry"] == "featcheck --fix"
    assert hook["stages"] == ["manual"]
    assert hook["pass_filenames"] is False and hook["require_serial"] is True
    done = subprocess.run(
        [*PRE_COMMIT, "validate-manifest", str(REPO / ".pre-commit-hooks.yaml")],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.mark.usefixtures("remembered_cargo")
def test_hints_under_pre_commit_name_commands_that_run_there(
    offline_cargo_for: Callable[..., Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    # pre-commit sets PRE_COMMIT=1 for its hooks and runs them at the repository root; the
    # featcheck it runs is its own environment's, not one on the developer's PATH.
    crate = CRATES / "pitb-exec-cpu"
    offline_cargo_for(crate)
    plain = run_in_process(str(crate)).stdout
    assert "`--fix` applies it" in plain and "`featcheck rule FC001` explains" in plain
    assert "pre-commit" not in plain
    monkeypatch.setenv("PRE_COMMIT", "1")
    hooked = run_in_process("crates/pitb-exec-cpu", cwd=REPO, columns=400)  # lines unwrapped
    assert hooked.returncode == 1
    assert "`--fix` applies it" in hooked.stdout
    assert hooked.stdout.splitlines()[-2:] == [
        "--fix under pre-commit: `pre-commit run featcheck-fix --hook-stage manual --all-files` "
        "with the featcheck-fix hook configured, or `featcheck --fix crates/pitb-exec-cpu` with "
        "featcheck installed",
        "with featcheck installed, `featcheck -v crates/pitb-exec-cpu` shows each finding's "
        "chain and measurements; `featcheck rule FC001` explains a rule",
    ]
    assert "pipx" not in hooked.stdout


def test_no_hint_or_page_runs_a_featcheck_from_a_package_index() -> None:
    # featcheck is not published on PyPI: `pipx run featcheck` would run whatever someone
    # registers under that name.
    shipped = [REPO / "README.md", REPO / ".pre-commit-hooks.yaml", REPO / "action.yml"]
    shipped += [*(REPO / "docs").rglob("*.md"), *(REPO / "src").rglob("*.py")]
    named = [
        path for path in shipped if re.search(r"(pipx|uvx)\s+(run\s+)?featcheck", path.read_text())
    ]
    assert named == []


def test_the_hook_imports_nothing_the_checkout_plants(
    offline_cargo_for: Callable[..., Path], tmp_path: Path
) -> None:
    """The hook as pre-commit runs a `language: python` hook: its entry, found on PATH in the
    hook's environment (here the tests' own), started at the repository root. The entry is
    featcheck's console script, which puts its own directory first on sys.path, not the
    current one: a `featcheck/` or `hashlib.py` the checkout commits is never imported."""
    crate = CRATES / "pitb-exec-cpu"
    offline_cargo_for(crate)
    project = tmp_path / "project"
    project.mkdir()
    _git("init", "-q", cwd=project)
    _put_crate(project, crate)
    markers = tmp_path / "markers"
    plant_python(project, markers)
    program, *arguments = shlex.split(str(_hooks()["featcheck"]["entry"]))
    environment = Path(sys.executable).parent
    done = subprocess.run(
        [str(environment / program), *arguments],
        cwd=project,
        env={
            **os.environ,
            "PRE_COMMIT": "1",
            "NO_COLOR": "1",
            "PATH": f"{environment}:{os.environ['PATH']}",
        },
        capture_output=True,
        text=True,
        check=False,
    )
    assert markers_written(markers) == []
    assert done.returncode == 1, done.stdout + done.stderr
    assert "error[FC001] burn-flex 0.22.1 is built without `rayon`" in done.stdout
    assert "--> Cargo.toml:9:31" in done.stdout
    assert "Traceback" not in done.stderr


def _git(*args: str, cwd: Path) -> None:
    subprocess.run(["git", *GIT_IDENTITY, *args], cwd=cwd, check=True, capture_output=True)


def _commit_all(repo: Path, message: str) -> None:
    _git("add", "-A", cwd=repo)
    _git("commit", "-q", "-m", message, cwd=repo)


def _hook_repository(destination: Path) -> Path:
    """This repository's package and hook file, committed (a `rev` names a commit)."""
    destination.mkdir()
    for name in (
        "pyproject.toml",
        ".pre-commit-hooks.yaml",
        "README.md",
        "LICENSE-MIT",
        "LICENSE-APACHE",
    ):
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
    """`crate`'s manifest and lockfile, and the program all the example crates build."""
    for name in ("Cargo.toml", "Cargo.lock"):
        shutil.copy2(crate / name, project / name)
    (project / "src").mkdir(exist_ok=True)
    shutil.copy2(CRATES / "pitb-exec-cpu" / "src" / "main.rs", project / "src" / "main.rs")


def _pre_commit_config(hooks: Path, destination: Path) -> Path:
    """The configuration the README gives, naming `hooks` at its commit."""
    commit = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=hooks, capture_output=True, text=True, check=True
    ).stdout.strip()
    repos = [{"repo": str(hooks), "rev": commit, "hooks": [{"id": "featcheck"}]}]
    destination.write_text(yaml.safe_dump({"repos": repos}))
    return destination


def _run_hook(project: Path, config: Path, home: Path) -> subprocess.CompletedProcess[str]:
    """`pre-commit run`: the first run installs the hook's environment into `home` (as on a
    developer's machine), a later one runs that install (`try-repo` would install it again)."""
    env = {**os.environ, "PRE_COMMIT_HOME": str(home), "NO_COLOR": "1"}
    return subprocess.run(
        [
            *PRE_COMMIT,
            "run",
            "featcheck",
            "--config",
            str(config),
            "--all-files",
            "--color",
            "never",
        ],
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
    config = _pre_commit_config(hooks, tmp_path / "pre-commit-config.yaml")

    failing = _run_hook(project, config, home)
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

    passing = _run_hook(project, config, home)
    output = passing.stdout + passing.stderr
    assert passing.returncode == 0, output
    assert "Passed" in output
    assert "FC001" not in output
