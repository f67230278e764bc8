"""`--fix` and `--diff` from the command line: what they write and refuse. (`--fix` on every
flagged fixture, checked by cargo itself afterwards, is in tests/fixes/test_fix_shapes.py,
with the other checks of the same runs.)"""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
from cli_in_process import run_in_process
from support import CRATES, WORKSPACES

pytestmark = pytest.mark.usefixtures("remembered_cargo")
"""featcheck's cargo answers an identical question (a fixture audited again by `--fix`,
`--diff` and the tests after them, a fix's copy confirmed again) from its first real answer
(tests/cargo_memo.py); what cargo says of a fixed checkout is always asked of cargo."""


def test_diff_prints_the_change_and_writes_nothing(
    tmp_path: Path, offline_cargo_for: Callable[..., Path]
) -> None:
    project = tmp_path / "app"
    shutil.copytree(CRATES / "pitb-exec-cpu", project)
    offline_cargo_for(project)
    before = (project / "Cargo.toml").read_bytes()
    result = run_in_process(str(project), "--diff")
    assert result.returncode == 1
    assert result.stdout.startswith("--- a/Cargo.toml\n+++ b/Cargo.toml\n")
    assert (
        '+burn = { version = "=0.22.1", default-features = false, features = ["std", "flex", '
        '"autodiff", "optim", "rayon", "simd"] }'
    ) in result.stdout
    assert (project / "Cargo.toml").read_bytes() == before


def test_a_diff_of_a_manifest_without_a_final_line_break_applies_as_fix_writes_it(
    tmp_path: Path, offline_cargo_for: Callable[..., Path]
) -> None:
    """dl_pytorch_rust_challenge: the changed last line ran into the next file's header, with
    no `\\ No newline at end of file`, and `git apply` called the patch corrupt."""
    projects = []
    for name in ("diffed", "fixed"):
        project = tmp_path / name
        shutil.copytree(CRATES / "pitb-exec-cpu", project)
        manifest = project / "Cargo.toml"
        head, burn = manifest.read_text().split("[dependencies]\n")
        burn, profile = burn.split("\n\n")
        manifest.write_text(f"{head}{profile}\n[dependencies]\n{burn}")  # no line break at the end
        offline_cargo_for(project)
        projects.append(project)
    diffed, fixed = projects
    diff = run_in_process(str(diffed), "--diff").stdout
    assert '"rayon", "simd"] }\n\\ No newline at end of file\n--- a/Cargo.lock' in diff, diff
    subprocess.run(["git", "apply"], input=diff, text=True, cwd=diffed, check=True)
    assert run_in_process(str(fixed), "--fix").returncode == 0
    assert (diffed / "Cargo.toml").read_bytes() == (fixed / "Cargo.toml").read_bytes()
    assert not (fixed / "Cargo.toml").read_bytes().endswith(b"\n")


def test_fix_keeps_the_file_mode(tmp_path: Path, offline_cargo_for: Callable[..., Path]) -> None:
    project = tmp_path / "app"
    shutil.copytree(CRATES / "pitb-exec-cpu", project)
    offline_cargo_for(project)
    manifest = project / "Cargo.toml"
    manifest.chmod(0o640)
    assert run_in_process(str(project), "--fix").returncode == 0
    assert manifest.stat().st_mode & 0o777 == 0o640
    assert '"rayon", "simd"]' in manifest.read_text()


def test_a_lockfile_cargo_creates_is_named_by_fix_and_printed_whole_by_diff(
    tmp_path: Path, offline_cargo_for: Callable[..., Path]
) -> None:
    """A crate without Cargo.lock (a library's, often): --fix writes the one cargo made for the
    fixed workspace, as `cargo add` would, and names it in one line instead of printing
    thousands of cargo's lines; --diff, a patch, holds all of it."""
    project = tmp_path / "app"
    shutil.copytree(CRATES / "pitb-exec-cpu", project)
    (project / "Cargo.lock").unlink()
    offline_cargo_for(project)
    shown = run_in_process(str(project), "--diff")
    assert shown.returncode == 1 and not (project / "Cargo.lock").exists()
    assert "--- /dev/null\n+++ b/Cargo.lock\n" in shown.stdout
    fixed = run_in_process(str(project), "--fix")
    assert fixed.returncode == 0
    written = (project / "Cargo.lock").read_text()
    packages = written.count("[[package]]")
    assert packages > 1 and f"+{written.splitlines()[-1]}" in shown.stdout
    assert fixed.stderr.startswith("--- a/Cargo.toml\n+++ b/Cargo.toml\n")
    assert "Cargo.lock" not in fixed.stderr.split("featcheck: created")[0]
    assert fixed.stderr.endswith(
        f"featcheck: created Cargo.lock: cargo's resolution of the fixed workspace, "
        f"{packages} packages\nfeatcheck: fixed 2 files\n"
    )


def test_every_fix_is_confirmed_by_cargo_before_it_is_called_safe(
    offline_cargo_for: Callable[..., Path],
) -> None:
    offline_cargo_for(CRATES / "pitb-exec-cpu")
    report = json.loads(run_in_process(str(CRATES / "pitb-exec-cpu"), "--format", "json").stdout)
    (finding,) = report["findings"]
    assert finding["fix"]["safe"] and finding["fix"]["confirmed"]
    assert finding["fix"]["edits"] == [
        {
            "file": "crates/pitb-exec-cpu/Cargo.toml",
            "line": 9,
            "action": "add-features",
            "declaration": ["dependencies", "burn"],
            "features": ["rayon", "simd"],
            "version": None,
        }
    ]
    descriptions = [a["description"] for a in finding["alternatives"]]
    assert descriptions[0] == "remove `default-features = false` from burn"
    assert descriptions[1].startswith("add burn-flex = ")


@pytest.mark.parametrize("flag", ["--fix", "--diff"])
def test_no_exec_refuses_to_fix_in_one_line_and_writes_nothing(flag: str, tmp_path: Path) -> None:
    """--no-exec cannot confirm a fix (that takes cargo), so it does not pretend to try."""
    project = tmp_path / "memchr-without-std"
    shutil.copytree(WORKSPACES / "memchr-without-std", project)
    before = {p: p.read_bytes() for p in project.rglob("*") if p.is_file()}
    result = run_in_process(str(project), "--no-exec", flag)
    assert result.returncode == 2
    assert result.stdout == ""
    assert result.stderr.splitlines() == [
        f"featcheck: error: {flag} cannot be used with --no-exec: {flag} confirms the fixes by "
        "resolving the fixed workspace with cargo, and --no-exec starts no process; drop "
        "--no-exec (featcheck then runs cargo, none of the checkout's own programs)"
    ]
    assert {p: p.read_bytes() for p in project.rglob("*") if p.is_file()} == before
