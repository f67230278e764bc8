"""Fixes checked against Cargo.lock, and `--fix` all or nothing.

Two fixtures reproduce how a fix that delivers the feature in memory still fails in cargo:
`lock-pinned-conflict` pins rayon exactly below what burn-flex's `rayon` asks for, and
`lock-kept-dependency` re-enables burn 0.21.0's defaults, which pull gix-tempfile (not in the
lock) needing `tempfile ^3.26` while the app's own `tempfile = "3.20"` is locked at 3.24.0 and
cargo keeps a member's locked direct dependency. Real cargo is asked each time what it says.
(That every confirmed fix `--fix` applies holds in cargo, on every fixture with a lockfile, is
checked in tests/fixes/test_fix_shapes.py, with the other checks of the same `--fix` runs.)
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from cli_in_process import run_in_process
from fixed_checkouts import cargo_built
from support import WORKSPACES, run_featcheck, trust_of

from featcheck.cargo.runner import CargoRunner
from featcheck.fixes.lockcheck import cargo_reason


def _copy(name: str, tmp_path: Path) -> Path:
    project = tmp_path / name
    shutil.copytree(WORKSPACES / name, project)
    return project


def _files(root: Path) -> dict[str, str]:
    """Every file of the checkout with a digest of its bytes."""
    return {
        str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file() and "target" not in p.relative_to(root).parts
    }


def _report(
    project: Path, *args: str, run: Callable[..., subprocess.CompletedProcess[str]] = run_featcheck
) -> tuple[dict[str, Any], subprocess.CompletedProcess[str]]:
    result = run(str(project), "--format", "json", *args)
    assert result.returncode in (0, 1), result.stderr
    return json.loads(result.stdout), result


def _cargo(project: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["cargo", *args], cwd=project, capture_output=True, text=True, check=False
    )


def test_a_fix_the_locked_versions_refuse_is_no_fix_and_says_why(
    tmp_path: Path, offline_cargo_for: Callable[..., Path]
) -> None:
    project = _copy("lock-pinned-conflict", tmp_path)
    offline_cargo_for(project)
    report, _ = _report(project, run=run_in_process)
    (finding,) = report["findings"]
    assert finding["code"] == "FC001"
    assert finding["fix"] is None
    reason = "rayon ^1.12.0 required by burn-flex vs locked 1.11.0 (app requires rayon =1.11.0)"
    assert finding["suggestion"] == (
        f'add "rayon", "simd" to the features of burn: cargo cannot resolve it: {reason}'
    )
    assert all(not a["confirmed"] for a in finding["alternatives"])
    # cargo says the same of the edit featcheck refused.
    manifest = project / "Cargo.toml"
    before = manifest.read_text()
    manifest.write_text(before.replace('"flex"]', '"flex", "rayon"]'))
    refused = _cargo(project, "metadata", "--format-version", "1")
    assert refused.returncode == 101
    assert cargo_reason(refused.stderr) == reason
    manifest.write_text(before)
    (project / "Cargo.lock").write_bytes((WORKSPACES / project.name / "Cargo.lock").read_bytes())

    files = _files(project)
    fixed = run_in_process(str(project), "--fix")
    assert fixed.returncode == 1, fixed.stderr
    assert "app: FC001 burn-flex: no fix applied: " in fixed.stderr
    assert reason in fixed.stderr
    assert _files(project) == files
    diff = run_in_process(str(project), "--diff")
    assert (diff.returncode, diff.stdout) == (0, "")
    assert reason in diff.stderr and "0 files would change" in diff.stderr


def test_the_fix_cargo_can_resolve_wins_over_defaults_that_conflict(
    tmp_path: Path, offline_cargo_for: Callable[..., Path]
) -> None:
    project = _copy("lock-kept-dependency", tmp_path)
    offline_cargo_for(project)
    report, _ = _report(project, run=run_in_process)
    (finding,) = report["findings"]
    fix = finding["fix"]
    assert fix["safe"] and fix["confirmed"]
    assert [(e["action"], e["declaration"], e["features"]) for e in fix["edits"]] == [
        ("add-dependency", ["dependencies", "burn-flex"], ["rayon", "simd"])
    ]
    assert fix["added_packages"] > 0
    removing = next(
        a for a in finding["alternatives"] if a["edits"][0]["action"] == "remove-default-features"
    )
    assert not removing["confirmed"]

    # What cargo says of the edit featcheck did not choose: the user's locked tempfile stays.
    manifest = project / "Cargo.toml"
    before = manifest.read_text()
    manifest.write_text(before.replace("default-features = false, ", ""))
    refused = _cargo(project, "metadata", "--format-version", "1")
    assert refused.returncode == 101
    assert cargo_reason(refused.stderr) == (
        "tempfile ^3.26.0 required by gix-tempfile vs locked 3.24.0 "
        "(app requires tempfile ^3.20); `cargo update -p tempfile` first"
    )
    manifest.write_text(before)

    diff = run_in_process(str(project), "--diff")
    assert diff.returncode == 1, diff.stderr
    assert "+++ b/Cargo.lock" in diff.stdout and '+ "burn-flex",' in diff.stdout
    fixed = run_in_process(str(project), "--fix", "--format", "json")
    assert fixed.returncode == 0, fixed.stderr
    assert json.loads(fixed.stdout)["findings"] == []
    # The written lockfile is the one --diff showed: cargo agrees with it, locked.
    assert {"rayon", "simd"} <= cargo_built(project, "app", "burn-flex")


def _cargo_that_breaks_in_the_copy(tmp_path: Path, how: str) -> Path:
    """A plain cargo on PATH that runs the real one, except over featcheck's fixed copy of
    the workspace, where it is killed or fails (the rustc beside it is the real one)."""
    toolchain = CargoRunner(tmp_path, trust=trust_of(tmp_path)).toolchain
    assert toolchain is not None
    bin_dir = tmp_path / "breaking-bin"
    bin_dir.mkdir()
    action = "kill -9 $$" if how == "killed" else 'echo "error: the index is gone" >&2; exit 101'
    script = bin_dir / "cargo"
    script.write_text(
        "#!/bin/sh\n"
        'case "$*" in *featcheck-fix-*) ' + action + " ;; esac\n"
        f'exec "{toolchain.cargo}" "$@"\n'
    )
    script.chmod(0o755)
    (bin_dir / "rustc").symlink_to(toolchain.rustc)
    return bin_dir


@pytest.mark.parametrize("how", ["killed", "failing"])
def test_cargo_killed_or_failing_during_fix_leaves_every_file_as_it_was(
    how: str,
    tmp_path: Path,
    offline_cargo_for: Callable[..., Path],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    project = _copy("shape-b-bin-through-lib", tmp_path)
    offline_cargo_for(project)
    bin_dir = _cargo_that_breaks_in_the_copy(tmp_path, how)
    monkeypatch.setenv("PATH", os.pathsep.join([str(bin_dir), os.environ.get("PATH", "")]))
    monkeypatch.delenv("RUSTUP_TOOLCHAIN", raising=False)
    files = _files(project)
    # In this process: cargo is the one on PATH for each run (what a subprocess inherits is
    # not the subject; the cargo killed is featcheck's child either way).
    report, _ = _report(project, run=run_in_process)
    assert any(f["fix"] and f["fix"]["safe"] for f in report["findings"])
    for flag in ("--fix", "--diff"):
        result = run_in_process(str(project), flag)
        assert result.returncode == 2, result.stderr
        (line,) = result.stderr.strip().splitlines()
        assert line.startswith(
            "featcheck: error: --fix changed nothing: cargo cannot resolve the fixed workspace"
        ), line
        assert "Traceback" not in result.stderr
        assert _files(project) == files


def test_a_fix_adding_a_backend_or_dozens_of_packages_is_not_safe() -> None:
    from featcheck.fixes.reach import MANY_PACKAGES, Cost, backends_of, safety
    from featcheck.rules import builtin_rules
    from featcheck.rules.load import parse_rule

    def one_build(*added: str) -> Cost:
        return Cost(added, (), len(added))

    backends = backends_of(builtin_rules())
    assert {"burn-flex", "burn-ndarray", "burn-cpu", "burn-wgpu"} <= backends
    assert "memchr" not in backends
    # The shape seen on real projects: memchr's std through burn's `cpu` backend.
    assert safety(one_build("burn-cpu 0.22.1", "hyper 1.8.1"), backends) == (
        "not applied by --fix: it adds a new backend (burn-cpu)"
    )
    # A backend's rule may spell its name either way; the note says it as cargo does.
    spec = {"code": "FC099", "name": "x", "crates": ["Parking-Lot"], "feature": "f"}
    odd = backends_of([parse_rule({**spec, "used-when": {"built": True}}, builtin=True)])
    assert safety(one_build("parking_lot 0.12.5"), odd) == (
        "not applied by --fix: it adds a new backend (parking_lot)"
    )
    many = [f"crate-{i} 1.0.0" for i in range(MANY_PACKAGES)]
    assert (
        safety(one_build(*many), backends)
        == f"not applied by --fix: it adds {MANY_PACKAGES} packages to the build"
    )
    assert safety(one_build(*many[:-1]), backends) == ""
