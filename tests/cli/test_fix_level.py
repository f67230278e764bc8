"""`--fix` applies the fixes at or above the failing level; `--fix-level` (or `fix-level` in the
configuration) reaches lower.

ndarray-third-party has two findings of FC009: a warning in the binary-less member `solver`
(fixed by a feature of its own ndarray) and an info in the library `sampler`, whose fix adds a
new direct dependency on matrixmultiply ("binaries that use this library must enable it
themselves")."""

from __future__ import annotations

import re
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from cli_in_process import run_in_process
from support import WORKSPACES

pytestmark = pytest.mark.usefixtures("remembered_cargo")
"""featcheck's cargo answers an identical question (the same project fixed, diffed and audited
by several tests) from its first real answer (tests/cargo_memo.py)."""

SAMPLER, SOLVER = Path("sampler/Cargo.toml"), Path("solver/Cargo.toml")
EVERY = {SAMPLER, SOLVER, Path("Cargo.lock")}
BELOW = (
    "featcheck: sampler: FC009 matrixmultiply: no fix applied: info is below the fix level "
    "warning (`--fix-level info` applies it)"
)


@pytest.fixture
def project(tmp_path: Path, offline_cargo_for: Callable[..., Path]) -> Path:
    copy = tmp_path / "ndarray-third-party"
    shutil.copytree(WORKSPACES / "ndarray-third-party", copy)
    offline_cargo_for(copy)
    return copy


def _files(root: Path) -> dict[Path, bytes]:
    return {p.relative_to(root): p.read_bytes() for p in root.rglob("*") if p.is_file()}


def _changed(before: dict[Path, bytes], root: Path) -> set[Path]:
    after = _files(root)
    return {path for path in before.keys() | after.keys() if before.get(path) != after.get(path)}


def _diffed(stdout: str) -> set[Path]:
    return {Path(name) for name in re.findall(r"^\+\+\+ b/(\S+)$", stdout, re.MULTILINE)}


def test_an_info_fix_is_left_alone_by_default_and_diff_shows_the_same(project: Path) -> None:
    before = _files(project)
    diff = run_in_process(str(project), "--diff")
    assert diff.returncode == 1, diff.stderr
    assert BELOW in diff.stderr.splitlines()
    assert "matrixmultiply = {" not in diff.stdout  # sampler's new dependency

    fixed = run_in_process(str(project), "--fix")
    assert fixed.returncode == 0, fixed.stderr  # the info finding left does not fail the run
    assert BELOW in fixed.stderr.splitlines()
    assert _changed(before, project) == _diffed(diff.stdout) == {SOLVER, Path("Cargo.lock")}
    # The report after the fix says what would apply the fix left.
    assert "`--fix --fix-level info` applies it" in " ".join(fixed.stdout.split())
    assert "info[FC009]" in fixed.stdout and "warning[FC009]" not in fixed.stdout


def test_fix_level_info_applies_it_and_diff_shows_the_same(project: Path) -> None:
    before = _files(project)
    diff = run_in_process(str(project), "--diff", "--fix-level", "info")
    assert diff.returncode == 1, diff.stderr
    assert "no fix applied" not in diff.stderr
    fixed = run_in_process(str(project), "--fix", "--fix-level", "info")
    assert fixed.returncode == 0, fixed.stderr
    assert (
        _changed(before, project) == _diffed(diff.stdout) == {SAMPLER, SOLVER, Path("Cargo.lock")}
    )
    assert "matrixmultiply = { version" in (project / SAMPLER).read_text()
    assert "no findings" in fixed.stdout


@pytest.mark.parametrize(
    ("flags", "configuration", "diffed"),
    [
        ((), 'fix-level = "info"\n', EVERY),  # the configuration's key
        (("--fail-on", "info"), "", EVERY),  # the failing level, when no fix level is given
        ((), 'fail-on = "error"\n', set()),  # the configuration's failing level too
        (("--fail-on", "error"), 'fix-level = "info"\n', EVERY),  # the key wins over that
    ],
)
def test_what_else_sets_the_fix_level(
    project: Path, flags: tuple[str, ...], configuration: str, diffed: set[Path]
) -> None:
    (project / "featcheck.toml").write_text(configuration)
    diff = run_in_process(str(project), "--diff", *flags)
    assert diff.returncode == (1 if diffed else 0), diff.stderr
    assert _diffed(diff.stdout) == diffed


def test_fix_level_error_leaves_a_warning(project: Path) -> None:
    diff = run_in_process(str(project), "--diff", "--fix-level", "error")
    assert diff.returncode == 0, diff.stderr
    assert diff.stdout == ""
    assert diff.stderr.splitlines()[-1] == "featcheck: 0 files would change"


def test_a_fix_level_that_is_no_severity_is_refused(project: Path) -> None:
    (project / "featcheck.toml").write_text('fix-level = "never"\n')
    refused = run_in_process(str(project), "--fix")
    assert refused.returncode == 2
    (line,) = refused.stderr.splitlines()
    assert line.endswith('`fix-level` must be one of "error", "warning", "info"'), line
    assert "featcheck.toml:1:" in line
