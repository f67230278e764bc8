"""The session's memo of cargo's answers (cargo_memo.py) gives back real cargo's answer, and
only for the same question: a test that replays sees what it would have seen from cargo."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

from cargo_memo import CargoMemo
from cli_in_process import run_in_process
from support import WORKSPACES

FIXTURE = "ndarray-direct"
"""Small (16 packages), with a finding whose fix cargo confirms in a copy."""


def _copy(tmp_path: Path, name: str) -> Path:
    return Path(shutil.copytree(WORKSPACES / FIXTURE, tmp_path / name))


def test_the_same_workspace_elsewhere_gets_real_cargos_answer_back(
    tmp_path: Path, offline_cargo_for: Callable[..., Path]
) -> None:
    first, second = _copy(tmp_path, "first"), _copy(tmp_path, "second")
    offline_cargo_for(first)
    memo = CargoMemo()
    with memo.answering():
        real = run_in_process(str(first), "--format", "json")
        asked = memo.real
        replayed = run_in_process(str(second), "--format", "json")
    assert real.returncode == 1, real.stderr
    # The audit and each fix's copy: every question asked once of cargo, then given back.
    assert asked >= 2
    assert (memo.real, memo.replayed) == (asked, asked)
    assert (replayed.returncode, replayed.stdout, replayed.stderr) == (
        real.returncode,
        real.stdout,
        real.stderr,
    )
    # Nothing of the first tree leaks into the second's answer.
    assert str(first) not in replayed.stdout


def test_a_changed_manifest_asks_cargo_again(
    tmp_path: Path, offline_cargo_for: Callable[..., Path]
) -> None:
    project = _copy(tmp_path, "project")
    offline_cargo_for(project)
    memo = CargoMemo()
    with memo.answering():
        run_in_process(str(project), "--format", "json")
        asked = memo.real
        manifest = project / "Cargo.toml"
        # Not the fix: the first run's check of the fix on a copy asked cargo about that one.
        manifest.write_text(manifest.read_text().replace('features = ["rayon"] }', "}", 1))
        changed = run_in_process(str(project), "--format", "json")
    assert memo.real > asked
    # What cargo itself answers for the changed manifest, with no memo in between.
    assert changed.stdout == run_in_process(str(project), "--format", "json").stdout
