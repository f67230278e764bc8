"""`cargo featcheck`: cargo finds `cargo-featcheck` on PATH and passes `featcheck` first."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from actions_support import clear_actions_environment
from conftest import CRATES

from featcheck import __version__

SCRIPTS = Path(sys.executable).parent


@pytest.fixture(autouse=True)
def _outside_actions(monkeypatch: pytest.MonkeyPatch) -> None:
    clear_actions_environment(monkeypatch)


def _cargo(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    if not (SCRIPTS / "cargo-featcheck").exists():
        pytest.fail(
            f"no cargo-featcheck next to {sys.executable}: reinstall featcheck "
            "(pip install -e .) to get the console script"
        )
    cargo = shutil.which("cargo")
    if cargo is None:
        pytest.skip("cargo is not installed")
    env = {
        **os.environ,
        "PATH": os.pathsep.join([str(SCRIPTS), os.environ.get("PATH", "")]),
        "NO_COLOR": "1",
    }
    return subprocess.run(
        [cargo, "featcheck", *args], cwd=cwd, capture_output=True, text=True, env=env, check=False
    )


def test_cargo_featcheck_audits_the_crate(offline_cargo_for: Callable[..., Path]) -> None:
    offline_cargo_for(CRATES / "pitb-exec-cpu")
    done = _cargo(str(CRATES / "pitb-exec-cpu"))
    assert done.returncode == 1, done.stderr
    assert "error[FC001] burn-flex 0.22.1 is built without `rayon`" in done.stdout
    assert "--> crates/pitb-exec-cpu/Cargo.toml:9:31" in done.stdout


def test_cargo_featcheck_defaults_to_the_current_directory(
    offline_cargo_for: Callable[..., Path],
) -> None:
    offline_cargo_for(CRATES / "pitb-exec-cpu-simd")
    done = _cargo(cwd=CRATES / "pitb-exec-cpu-simd")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("no findings (1 member, ")


def test_cargo_featcheck_version_and_help() -> None:
    assert _cargo("--version").stdout == f"featcheck {__version__}\n"
    help_text = _cargo("--help").stdout
    assert help_text.startswith("Usage: cargo featcheck ")
    assert "cargo featcheck" in help_text.split("Examples:")[1]
