"""featcheck never changes the user's Cargo.lock, even when cargo would rewrite it."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

from cli_in_process import run_in_process
from support import CRATES


def _copy_template(tmp_path: Path, offline_cargo_for: Callable[..., Path]) -> Path:
    """A copy of the template crate; cargo pointed at its registry view, which also holds what
    a lockfile made anew or the added features below need."""
    project = tmp_path / "app"
    shutil.copytree(CRATES / "pitb-exec-cpu", project, ignore=shutil.ignore_patterns("target"))
    offline_cargo_for(project)
    return project


def test_missing_lockfile_is_not_left_behind(
    tmp_path: Path, offline_cargo_for: Callable[..., Path]
) -> None:
    project = _copy_template(tmp_path, offline_cargo_for)
    (project / "Cargo.lock").unlink()
    result = run_in_process(str(project), "--format", "json")
    assert result.returncode == 1, result.stderr
    assert json.loads(result.stdout)["findings"][0]["feature"] == "rayon"
    assert not (project / "Cargo.lock").exists()


def test_stale_lockfile_is_audited_as_the_next_build_resolves_it_and_kept(
    tmp_path: Path, offline_cargo_for: Callable[..., Path]
) -> None:
    project = _copy_template(tmp_path, offline_cargo_for)
    manifest = project / "Cargo.toml"
    # Adding rayon pulls new packages in: the lockfile is now out of date.
    manifest.write_text(manifest.read_text().replace('"optim"]', '"optim", "rayon", "simd"]'))
    before = (project / "Cargo.lock").read_bytes()
    result = run_in_process(str(project), "--format", "json")
    assert result.returncode == 0, result.stdout + result.stderr
    assert json.loads(result.stdout)["findings"] == []
    assert (project / "Cargo.lock").read_bytes() == before


def test_locked_refuses_a_stale_lockfile_with_cargos_reason(
    tmp_path: Path, offline_cargo_for: Callable[..., Path]
) -> None:
    project = _copy_template(tmp_path, offline_cargo_for)
    manifest = project / "Cargo.toml"
    manifest.write_text(manifest.read_text().replace('"optim"]', '"optim", "rayon"]'))
    result = run_in_process(str(project), "--locked")
    assert result.returncode == 2
    assert "Cargo.lock is out of date" in result.stderr
    assert "Traceback" not in result.stderr
