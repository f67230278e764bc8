"""A fix is judged over every member's build, and written as the workspace declares the crate.

Real cargo is asked, before and after `--fix`, which packages each member builds
(`cargo tree -e normal -p MEMBER`).
"""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from cli_in_process import run_in_process
from support import WORKSPACES

pytestmark = pytest.mark.usefixtures("remembered_cargo")
"""featcheck's cargo answers an identical question (a workspace audited again by `--fix`, a
fix's copy confirmed again) from its first real answer (tests/cargo_memo.py); `cargo tree` of
each member, before and after, is real cargo's."""

MEMBERS = ("lib", "cpu-app", "gpu-app")


def _copy(name: str, tmp_path: Path, offline_cargo_for: Callable[..., Path]) -> Path:
    project = tmp_path / name
    shutil.copytree(WORKSPACES / name, project)
    # The view holds what the fixes turn on: cargo resolves the fixed workspace with it.
    offline_cargo_for(project)
    return project


def _audit(project: Path, *args: str) -> tuple[dict[str, Any], subprocess.CompletedProcess[str]]:
    result = run_in_process(str(project), "--format", "json", "--root", str(project), *args)
    assert result.returncode in (0, 1), result.stderr
    return json.loads(result.stdout), result


def _cargo_tree(project: Path, member: str, *args: str) -> str:
    return subprocess.run(
        ["cargo", "tree", "-e", "normal", "-p", member, *args],
        cwd=project,
        capture_output=True,
        text=True,
        check=True,
    ).stdout


def _packages(project: Path, member: str) -> set[str]:
    """`name vX` of every package real cargo builds for `member`."""
    tree = _cargo_tree(project, member, "--prefix", "none", "-f", "{p}")
    return {" ".join(line.split()[:2]) for line in tree.splitlines() if line.strip()}


def _features(project: Path, member: str, crate: str) -> str:
    return _cargo_tree(project, member, "-i", crate, "-f", "{f}", "--depth", "0").strip()


def _edits(fix: dict[str, Any]) -> list[tuple[Any, ...]]:
    return [
        (e["file"], tuple(e["declaration"]), e["action"], tuple(e["features"]), e["version"])
        for e in fix["edits"]
    ]


def test_a_librarys_backend_fix_goes_behind_the_feature_that_selects_it(
    tmp_path: Path, offline_cargo_for: Callable[..., Path]
) -> None:
    project = _copy("library-backend-feature", tmp_path, offline_cargo_for)
    before = {m: _packages(project, m) for m in MEMBERS}
    assert not any(p.startswith("burn-ndarray ") for p in before["gpu-app"])
    report, _ = _audit(project)
    by_member = {f["member"]: f for f in report["findings"]}
    assert {f["code"] for f in report["findings"]} == {"FC002"}
    fix = by_member["lib"]["fix"]
    assert fix["safe"] and fix["confirmed"]
    assert _edits(fix) == [
        (
            "lib/Cargo.toml",
            ("dependencies", "burn-ndarray"),
            "add-optional-dependency",
            ("multi-threads",),
            "=0.20.1",
        ),
        (
            "lib/Cargo.toml",
            ("features", "backend_ndarray"),
            "add-feature-values",
            ("dep:burn-ndarray",),
            None,
        ),
    ]
    # The same line without the feature would reach gpu-app: not safe, and the report says why.
    (plain,) = [a for a in by_member["lib"]["alternatives"] if _edits(a)[0][2] == "add-dependency"]
    assert not plain["safe"]
    assert "burn-ndarray" in plain["note"] and "gpu-app" in plain["note"]
    text = run_in_process(str(project), "--root", str(project))
    assert 'add "dep:burn-ndarray" to `backend_ndarray` in [features]' in " ".join(
        text.stdout.split()
    )

    fixed = run_in_process(str(project), "--fix", "--fix-level", "info", "--root", str(project))
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr
    lib = (project / "lib" / "Cargo.toml").read_text()
    assert 'backend_ndarray = ["burn/ndarray", "dep:burn-ndarray"]' in lib
    after = {m: _packages(project, m) for m in MEMBERS}
    assert after["gpu-app"] == before["gpu-app"]
    gained = set().union(*(after[m] - before[m] for m in MEMBERS))
    assert not any(p.startswith("burn") for p in gained), gained
    assert fix["added_packages"] == len(after["lib"] - before["lib"])
    for member in ("lib", "cpu-app"):
        assert "multi-threads" in _features(project, member, "burn-ndarray")


def test_the_packages_a_fix_adds_are_counted_over_every_members_build(
    tmp_path: Path, offline_cargo_for: Callable[..., Path]
) -> None:
    """burn's defaults back on in the workspace entry: `app` gains 16 packages, `tool` (with
    `autodiff`) 44. The figure app's finding gives is what the workspace's builds gain, as
    cargo builds them with the edit made."""
    project = _copy("shape-d-workspace-repeat", tmp_path, offline_cargo_for)
    report, _ = _audit(project)
    (app,) = [f for f in report["findings"] if f["member"] == "app"]
    (removing,) = [a for a in app["alternatives"] if _edits(a)[0][2] == "remove-default-features"]
    members = ("app", "tool")
    before = {m: _packages(project, m) for m in members}
    for manifest in ("Cargo.toml", "app/Cargo.toml", "tool/Cargo.toml"):
        path = project / manifest
        text = path.read_text().replace("default-features = false, ", "")
        path.write_text(text.replace(", default-features = false", ""))
    after = {m: _packages(project, m) for m in members}
    gained = set().union(*(after[m] - before[m] for m in members))
    assert len(after["app"] - before["app"]) < len(gained)
    assert removing["added_packages"] == len(gained)
    # Unsafe, and unconfirmed: burn's defaults name `burn-train?/default`, which Cargo.lock must
    # then take in though no build does (only cargo can say whether it can).
    assert not removing["safe"] and not removing["confirmed"]


_DECLARED: dict[str, Any] = {}
"""workspace-declared-backend's JSON report and text output as committed, made once for the
two tests below that read them (places are relative to the copy's root, so any copy's)."""


def _declared_backend(project: Path) -> tuple[dict[str, Any], str]:
    if not _DECLARED:
        _DECLARED["report"], _ = _audit(project)
        _DECLARED["text"] = run_in_process(str(project), "--root", str(project)).stdout
    return _DECLARED["report"], _DECLARED["text"]


def test_a_new_dependency_inherits_the_workspace_entry_of_the_crate(
    tmp_path: Path, offline_cargo_for: Callable[..., Path]
) -> None:
    project = _copy("workspace-declared-backend", tmp_path, offline_cargo_for)
    report, text = _declared_backend(project)
    found = {f["member"]: f for f in report["findings"] if f["crate"] == "burn-ndarray"}
    assert sorted(found) == ["app", "trainer"]
    for member, finding in found.items():
        assert finding["fix"]["safe"] and finding["fix"]["confirmed"]
        assert _edits(finding["fix"]) == [
            (
                f"{member}/Cargo.toml",
                ("dependencies", "burn-ndarray"),
                "inherit-dependency",
                ("multi-threads",),
                None,
            )
        ]
    line = 'burn-ndarray = { workspace = true, features = ["multi-threads"] }'
    assert f"add {line} to [dependencies]" in " ".join(text.split())

    fixed = run_in_process(str(project), "--fix", "--fix-level", "info", "--root", str(project))
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr
    for member in ("app", "trainer"):
        manifest = (project / member / "Cargo.toml").read_text()
        assert line in manifest and "0.20.1" not in manifest
        assert "multi-threads" in _features(project, member, "burn-ndarray")


def test_one_cut_is_one_finding_whatever_each_members_edit(
    tmp_path: Path, offline_cargo_for: Callable[..., Path]
) -> None:
    """app and trainer share the cut (the workspace's burn line); the fix is a line in each
    one's manifest. One finding is printed, naming both members and both files; JSON keeps an
    entry per member with one group."""
    project = _copy("workspace-declared-backend", tmp_path, offline_cargo_for)
    report, text = _declared_backend(project)
    lines = text.splitlines()
    assert sum(line.startswith("error[FC002]") for line in lines) == 1
    assert "  = builds: 2 members: app, trainer; target x86_64-unknown-linux-gnu" in lines
    said = " ".join(text.split())
    assert (
        'add burn-ndarray = { workspace = true, features = ["multi-threads"] } to [dependencies] '
        "(app/Cargo.toml, trainer/Cargo.toml)"
    ) in said
    shared = [f for f in report["findings"] if f["code"] == "FC002"]
    assert [f["member"] for f in shared] == ["app", "trainer"]
    assert shared[0]["group"] == shared[1]["group"]
    # The finding points at the workspace's line; its suggestion names where the new line goes.
    for finding in shared:
        assert finding["location"]["file"] == "Cargo.toml"
        assert f"to [dependencies] ({finding['member']}/Cargo.toml), or" in finding["suggestion"]
    assert shared[0]["location"] == shared[1]["location"]
