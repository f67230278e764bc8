"""A report that shows each finding's fix alone (text without `-v`) gets the fix a report listing
the alternatives (JSON, `-v`) gets, with fewer what-if builds: a candidate that cannot come
before the best one found is not resolved, in the builds of the other members it changes
either."""

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

from featcheck.resolution.session import TargetSession


def test_the_text_report_gets_the_json_reports_fix_from_fewer_builds(
    offline_cargo_for: Callable[..., Path], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # The fix adds a feature to flate2's line; removing its `default-features = false` and
    # depending on crc32fast directly clear the finding too, and rank after it. Real cargo each
    # time (not `remembered_cargo`): only an answer cargo kept is audited ahead of its answer.
    project = WORKSPACES / "flate2-without-runtime-detection"
    offline_cargo_for(project)
    audit = _counting_audits(project, 0, monkeypatch, tmp_path)
    text, alone, report, listing, verbose = _three_reports(audit)
    (finding,) = json.loads(report)["findings"]
    (edit,) = finding["fix"]["edits"]
    assert edit["action"] == "add-features"
    assert f"= fix: {finding['fix']['description']} ({edit['file']}:{edit['line']});" in text
    assert len(finding["alternatives"]) == 2
    assert verbose.count("= or: ") == 2
    assert alone < listing, (alone, listing)
    # Audited ahead over the text run's kept answer, the JSON report still lists them all.
    assert audit("text", "--format", "json")[0] == report


def test_a_candidate_adding_a_backend_to_a_library_is_not_resolved_for_its_other_users(
    offline_cargo: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # app builds burn-wgpu through the library core's `gpu` feature; cli and server use core
    # without it. The best fix adds "fusion", "autotune" to app's own burn line. Adding
    # burn-wgpu to core's [dependencies] adds as much to app's build and is a new dependency,
    # so it ranks after that fix on app's build alone: it must not be resolved in the builds
    # of cli, core and server (the cost a report listing it shows: a new backend for each).
    project = tmp_path / "project"
    _write_gpu_library_workspace(project)
    text, alone, report, listing, verbose = _three_reports(
        _counting_audits(project, 1, monkeypatch, tmp_path)
    )
    findings = json.loads(report)["findings"]
    assert [f["code"] for f in findings] == ["FC004", "FC005"]
    for finding in findings:
        (edit,) = finding["fix"]["edits"]
        assert (edit["file"], edit["line"], edit["action"]) == (
            "app/Cargo.toml",
            8,
            "add-features",
        )
        assert f"= fix: {finding['fix']['description']} ({edit['file']}:{edit['line']})" in text
        backend = [a for a in finding["alternatives"] if "new backend (burn-wgpu)" in a["note"]]
        assert backend, finding["alternatives"]
    new_backend = "adds a new backend (burn-wgpu) to the build of cli, core, server,"
    assert " ".join(verbose.split()).count(new_backend) == 2
    assert alone < listing, (alone, listing)


def _counting_audits(
    project: Path, exit_code: int, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> Callable[..., tuple[str, int]]:
    """`audit(cache, *flags)`: the report of the project and the what-if builds it took."""
    builds = 0
    graph = TargetSession.graph

    def counting_graph(session: TargetSession, *args: Any) -> Any:
        nonlocal builds
        builds += 1
        return graph(session, *args)

    monkeypatch.setattr(TargetSession, "graph", counting_graph)

    def audit(cache: str, *flags: str) -> tuple[str, int]:
        nonlocal builds
        builds = 0
        # The audit ahead of cargo's answer reads the answer kept in this cache by the last run.
        monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / cache))
        result = run_in_process(str(project), "--root", str(project), *flags)
        assert result.returncode == exit_code, result.stderr
        return result.stdout, builds

    return audit


def _three_reports(audit: Callable[..., tuple[str, int]]) -> tuple[str, int, str, int, str]:
    """The text report and its what-if builds, the JSON report and its, and `-v`'s report."""
    text, alone = audit("text")
    report, listing = audit("json", "--format", "json")
    verbose, _ = audit("verbose", "-v")
    return text, alone, report, listing, verbose


def _write_gpu_library_workspace(root: Path) -> None:
    burn = '{ version = "=0.22.1", default-features = false, features = ["std"] }'
    manifests = {
        "": '[workspace]\nresolver = "3"\nmembers = ["app", "core", "cli", "server"]\n',
        "app": f'burn = {burn}\ncore = {{ path = "../core", features = ["gpu"] }}\n',
        "core": f'burn = {burn}\n\n[features]\ngpu = ["burn/wgpu"]\n',
        "cli": 'core = { path = "../core" }\n',
        "server": 'core = { path = "../core" }\n',
    }
    for member, dependencies in manifests.items():
        directory = root / member
        directory.mkdir(parents=True, exist_ok=True)
        if not member:
            (directory / "Cargo.toml").write_text(dependencies)
            continue
        package = f'[package]\nname = "{member}"\nversion = "0.1.0"\nedition = "2024"\n'
        (directory / "Cargo.toml").write_text(
            f"{package}publish = false\n\n[dependencies]\n{dependencies}"
        )
        source = "lib.rs" if member == "core" else "main.rs"
        (directory / "src").mkdir()
        (directory / "src" / source).write_text("" if member == "core" else "fn main() {}\n")
    # burn 0.22.1's versions, as the GPU-only example locks them, with the members added.
    shutil.copy(WORKSPACES / "gpu-only" / "Cargo.lock", root / "Cargo.lock")
    subprocess.run(
        ["cargo", "metadata", "--format-version=1", "--offline"],
        cwd=root,
        check=True,
        capture_output=True,
    )
