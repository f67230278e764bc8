"""cargo, rustc and a C linker, or one clear error (probe/compile.py)."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest
from probe_support import copy_project
from support import trust_of

from featcheck.cargo.runner import CargoRunner
from featcheck.errors import FeatcheckError
from featcheck.probe.build import ProbeBuilder


def test_missing_c_toolchain_is_one_clear_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    if shutil.which("cargo") is None:
        pytest.skip("cargo is not installed")
    monkeypatch.setenv("CC", "featcheck-no-such-cc")
    with pytest.raises(FeatcheckError, match="no C toolchain: `featcheck-no-such-cc`"):
        ProbeBuilder(
            CargoRunner(tmp_path, trust=trust_of(tmp_path), timeout=10),
            offline=True,
            timeout=10,
            say=print,
            root=tmp_path / "c",
        )


def test_missing_cargo_is_one_clear_error(tmp_path: Path) -> None:
    project = copy_project(tmp_path, "crate-feature")
    python_only = tmp_path / "bin"
    python_only.mkdir()
    result = run_featcheck_with_path("probe", str(project), path=str(python_only))
    assert result.returncode == 2
    assert len(result.stderr.strip().splitlines()) == 1
    assert "cargo" in result.stderr and "not found" in result.stderr


def run_featcheck_with_path(*args: str, path: str) -> Any:
    import subprocess

    return subprocess.run(
        [sys.executable, "-m", "featcheck", *args],
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, "PATH": path, "NO_COLOR": "1", "RUSTUP_HOME": "/nonexistent"},
    )
