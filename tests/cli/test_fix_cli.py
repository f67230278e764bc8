"""`--fix` and `--diff` on every flagged fixture, checked by cargo itself afterwards."""

from __future__ import annotations

import difflib
import json
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
from cli_in_process import run_in_process
from support import CRATES, WORKSPACES

from featcheck.cargo.tree_text import parse_tree_text

pytestmark = pytest.mark.usefixtures("remembered_cargo")
"""featcheck's cargo answers an identical question (a fixture audited again by `--fix`,
`--diff` and the tests after them, a fix's copy confirmed again) from its first real answer
(tests/cargo_memo.py); what cargo says of a fixed checkout is always asked of cargo."""

FLAGGED = [
    "build-dependency",
    "crate-feature",
    "dev-only-rayon",
    "direct-flex",
    "gpu-only",
    "lib-chain",
    "old-burn-ndarray",
    "renamed",
    "table-form",
    "target-specific",
    "workspace-inheritance",
    "gemm-direct",
    "ndarray-direct",
]


def _manifests(root: Path) -> dict[Path, str]:
    return {p.relative_to(root): p.read_text() for p in root.rglob("Cargo.toml")}


def _changed_lines(before: str, after: str) -> tuple[list[str], list[str]]:
    removed, added = [], []
    for line in difflib.unified_diff(before.splitlines(), after.splitlines(), lineterm="", n=0):
        if line.startswith("-") and not line.startswith("---"):
            removed.append(line[1:])
        elif line.startswith("+") and not line.startswith("+++"):
            added.append(line[1:])
    return removed, added


@pytest.mark.parametrize("workspace", FLAGGED)
def test_fix_edits_only_the_declaration_and_cargo_agrees(
    workspace: str, tmp_path: Path, offline_cargo_for: Callable[..., Path]
) -> None:
    project = tmp_path / workspace
    shutil.copytree(WORKSPACES / workspace, project)
    # The view holds what the fixes turn on: cargo resolves the fixed copy below with it.
    offline_cargo_for(project)
    before = _manifests(project)
    report = json.loads(run_in_process(str(project), "--format", "json").stdout)
    assert report["findings"]

    # Every finding's fix, the info findings' too (old-burn-ndarray's library).
    result = run_in_process(str(project), "--fix", "--fix-level", "info", "--format", "json")
    after_report = json.loads(result.stdout)
    # Every fix holds, burn 0.20.1's included: its defaults bring crates the stub registry does
    # not hold, and the direct burn-ndarray dependency that adds fewer packages is chosen.
    assert after_report["findings"] == [], result.stderr
    assert result.returncode == 0
    assert "featcheck: fixed" in result.stderr

    after = _manifests(project)
    fixed_places = {
        (e["file"], e["line"])
        for f in report["findings"]
        for e in (f["fix"] or {"edits": []})["edits"]
    }
    for path, text in before.items():
        removed, added = _changed_lines(text, after[path])
        if not removed and not added:
            continue
        assert any(file == path.as_posix() for file, _ in fixed_places), path
        # Every comment survives; what was removed is only a line that was rewritten.
        for line in text.splitlines():
            if line.strip().startswith("#"):
                assert line in after[path].splitlines()
        assert len(removed) <= 1 and len(added) <= 3

    # cargo itself now resolves every missing feature (one `cargo tree` per member asked about,
    # the fixed checkout unchanged between them).
    trees = {
        member: _cargo_tree(project, member) for member in {f["member"] for f in report["findings"]}
    }
    for finding in report["findings"]:
        nodes = parse_tree_text(trees[finding["member"]]).graph.named(finding["crate"])
        assert any(finding["feature"] in n.features for n in nodes), finding


def _cargo_tree(project: Path, member: str) -> str:
    """cargo's own resolution of `member`'s normal dependencies, with their features."""
    return subprocess.run(
        [
            "cargo",
            "tree",
            "-e",
            "normal",
            "-p",
            member,
            "-f",
            "{p} [{f}]",
            "--prefix",
            "depth",
            "--offline",
        ],
        cwd=project,
        capture_output=True,
        text=True,
        check=True,
    ).stdout


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


def test_fix_keeps_the_file_mode(tmp_path: Path, offline_cargo_for: Callable[..., Path]) -> None:
    project = tmp_path / "app"
    shutil.copytree(CRATES / "pitb-exec-cpu", project)
    offline_cargo_for(project)
    manifest = project / "Cargo.toml"
    manifest.chmod(0o640)
    assert run_in_process(str(project), "--fix").returncode == 0
    assert manifest.stat().st_mode & 0o777 == 0o640
    assert '"rayon", "simd"]' in manifest.read_text()


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
