"""Counts read as words: `1 file`, `2 files`, never `1 file(s)` or `1 crates`."""

from __future__ import annotations

import io
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from cli_in_process import run_in_process
from support import CRATES, WORKSPACES

from featcheck.probe.compile import BuildProgress

pytestmark = pytest.mark.usefixtures("remembered_cargo")


def _copy(name: str, tmp_path: Path) -> Path:
    project = tmp_path / name
    shutil.copytree(WORKSPACES / name, project)
    return project


def test_one_file_fixed_is_said_in_the_singular(
    tmp_path: Path, offline_cargo_for: Callable[..., Path]
) -> None:
    project = _copy("memchr-without-std", tmp_path)  # one manifest to fix, Cargo.lock unchanged
    offline_cargo_for(project)
    diff = run_in_process(str(project), "--diff")
    assert diff.returncode == 1, diff.stderr
    assert diff.stderr.splitlines()[-1] == "featcheck: 1 file would change"
    fixed = run_in_process(str(project), "--fix")
    assert fixed.returncode == 0, fixed.stderr
    assert "featcheck: fixed 1 file" in fixed.stderr.splitlines()
    assert "(s)" not in diff.stderr + fixed.stderr


def test_one_finding_accepted_into_a_baseline(
    tmp_path: Path, offline_cargo_for: Callable[..., Path]
) -> None:
    project = _copy("memchr-without-std", tmp_path)
    offline_cargo_for(project)
    baseline = tmp_path / "baseline.txt"
    written = run_in_process(str(project), "--write-baseline", str(baseline))
    assert written.returncode == 0, written.stderr
    assert written.stderr.strip() == f"featcheck: wrote {baseline}: 1 finding accepted"


def test_a_baseline_line_of_one_field(
    tmp_path: Path, offline_cargo_for: Callable[..., Path]
) -> None:
    project = _copy("memchr-without-std", tmp_path)
    offline_cargo_for(project)
    baseline = tmp_path / "baseline.txt"
    baseline.write_text("0123456789abcdef\n")
    refused = run_in_process(str(project), "--baseline", str(baseline))
    assert refused.returncode == 2
    assert refused.stderr.strip().endswith("this line has 1 field"), refused.stderr


def test_one_incomplete_build_in_the_singular(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A fresh cargo home: --no-exec reads no registry package, and the one build depends on them.
    home = tmp_path / "cargo-home"
    home.mkdir()
    monkeypatch.setenv("CARGO_HOME", str(home))
    result = run_in_process(str(CRATES / "pitb-exec-cpu"), "--no-exec")
    assert result.returncode == 2
    (line,) = result.stderr.splitlines()
    assert line.startswith("featcheck: incomplete audit: 1 build depends on packages --no-exec"), (
        line
    )


def test_the_probe_build_counts_one_crate_as_one() -> None:
    stream = io.StringIO()
    progress = BuildProgress(1, stream, live=True)
    progress.line("   Compiling featcheck-probe v0.1.0\n")
    assert "1/1 crate (featcheck-probe v0.1.0)" in stream.getvalue()
    progress.done()
    assert stream.getvalue().endswith("(1 crate compiled)\n")
