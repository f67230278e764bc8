"""Shared test setup: real cargo, offline, against the stub registry in fixtures/registry.

fixtures/registry is a cargo directory source whose crates carry the real manifests' features
and dependency declarations with empty sources, so `cargo tree`/`cargo metadata` resolve the
true feature graph in ~0.1 s without the network (see fixtures/README.md).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
FIXTURES = REPO / "fixtures"
WORKSPACES = FIXTURES / "workspaces"
TREES = FIXTURES / "trees"
CRATES = REPO / "crates"


def pytest_configure(config: pytest.Config) -> None:
    """The tests run featcheck in a thousand subprocesses, as a user runs it: compile it once,
    as `pip install` does, so that none of them pays for Python's compiler again
    (PYTHONDONTWRITEBYTECODE, set on some machines, keeps each from saving what it compiled)."""
    import compileall

    import featcheck

    compileall.compile_dir(Path(featcheck.__file__).parent, quiet=1)


def write_offline_cargo_home(cargo_home: Path) -> None:
    """A CARGO_HOME whose config replaces crates.io with the stub registry, offline."""
    cargo_home.mkdir(parents=True, exist_ok=True)
    registry = (FIXTURES / "registry").as_posix()
    (cargo_home / "config.toml").write_text(
        "[source.crates-io]\n"
        'replace-with = "featcheck-fixtures"\n'
        "[source.featcheck-fixtures]\n"
        f'directory = "{registry}"\n'
        "[net]\n"
        "offline = true\n"
    )


@pytest.fixture(autouse=True, scope="session")
def _outside_github_actions() -> Iterator[None]:
    """Run as on a developer's machine even when the suite itself runs inside GitHub Actions:
    featcheck picks its default format from GITHUB_ACTIONS. Tests that need these set them."""
    saved = {k: os.environ.pop(k) for k in list(os.environ) if k.startswith("GITHUB_")}
    yield
    os.environ.update(saved)


@pytest.fixture(scope="session")
def offline_cargo_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One offline CARGO_HOME for the whole session."""
    if shutil.which("cargo") is None:
        pytest.skip("cargo is not installed")
    home = tmp_path_factory.mktemp("cargo-home")
    write_offline_cargo_home(home)
    return home


@pytest.fixture
def offline_cargo(offline_cargo_home: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Point every cargo that featcheck starts at the stub registry (offline)."""
    # rustup finds its toolchains through RUSTUP_HOME, which defaults to ~/.rustup; keep it.
    rustup_home = os.environ.get("RUSTUP_HOME") or str(Path.home() / ".rustup")
    monkeypatch.setenv("RUSTUP_HOME", rustup_home)
    monkeypatch.setenv("CARGO_HOME", str(offline_cargo_home))
    return offline_cargo_home


@pytest.fixture(scope="session")
def synthetic_cargo_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One CARGO_HOME over the rule fixtures' synthetic registry (fixtures/rules/registry.toml)."""
    from synthetic_registry import write_cargo_home, write_registry

    if shutil.which("cargo") is None:
        pytest.skip("cargo is not installed")
    base = tmp_path_factory.mktemp("synthetic")
    return write_cargo_home(base / "cargo-home", write_registry(base / "registry"))


@pytest.fixture
def synthetic_cargo(synthetic_cargo_home: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Point every cargo that featcheck starts at the synthetic registry (offline)."""
    rustup_home = os.environ.get("RUSTUP_HOME") or str(Path.home() / ".rustup")
    monkeypatch.setenv("RUSTUP_HOME", rustup_home)
    monkeypatch.setenv("CARGO_HOME", str(synthetic_cargo_home))
    return synthetic_cargo_home


@pytest.fixture
def workspace_copy(tmp_path: Path) -> Iterator[object]:
    """Copy a fixture workspace into a temporary directory (for tests that edit files)."""

    def copy(name: str, source: Path = WORKSPACES) -> Path:
        destination = tmp_path / name
        shutil.copytree(source / name, destination, ignore=shutil.ignore_patterns("target"))
        return destination

    yield copy


def run_featcheck(
    *args: str, cwd: Path | None = None, stdin: str | None = None
) -> subprocess.CompletedProcess[str]:
    """Run the CLI as a user would, in a subprocess (inherits the test's environment)."""
    return subprocess.run(
        [sys.executable, "-m", "featcheck", *args],
        cwd=cwd,
        input=stdin,
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, "NO_COLOR": "1", "COLUMNS": "200"},
    )
