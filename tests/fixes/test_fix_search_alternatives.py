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
from synthetic_registry import PACKAGE

from featcheck.fixes.reach import WorkspaceBuilds
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
    # without it. The best fixes add "fusion" and "autotune" to app's own burn line. Adding
    # burn-wgpu (burn-cubecl) to core's [dependencies] adds as much to app's build and is new,
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
        new = (
            "new backend (burn-cubecl, burn-wgpu)"
            if finding["code"] == "FC004"
            else "(burn-cubecl)"
        )
        backend = [a for a in finding["alternatives"] if new in a["note"]]
        assert backend, finding["alternatives"]
    new_backend = ") to the build of cli, core, server, which did not build it"
    assert " ".join(verbose.split()).count("adds a new backend (burn-cubecl") == 2
    assert " ".join(verbose.split()).count(new_backend) == 2
    assert alone < listing, (alone, listing)


def test_a_libraries_line_wins_without_resolving_what_each_member_could_change_alone(
    offline_cargo: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # a, b and c build burn-flex without `rayon`, each through its own burn line, and each
    # depends on lib, whose burn line also cuts the defaults. Adding "rayon", "simd" to lib's
    # line clears all three findings; each member's own line clears only its own, and adds
    # no fewer packages than the features themselves bring: those are not resolved.
    project = tmp_path / "project"
    burn = 'burn = { version = "=0.22.1", default-features = false, features = ["std"%s] }\n'
    members = {name: (burn % ', "flex"') + 'lib = { path = "../lib" }\n' for name in "abc"}
    _write_workspace(project, {"lib": burn % "", **members}, libraries={"lib"})
    audit = _counting_audits(project, 1, monkeypatch, tmp_path)
    text, bounded = audit("text")
    report, _ = audit("json", "--format", "json")
    findings = json.loads(report)["findings"]
    assert [(f["code"], f["member"]) for f in findings] == [("FC001", m) for m in "abc"]
    for finding in findings:
        (edit,) = finding["fix"]["edits"]
        assert (edit["file"], edit["line"], edit["features"]) == (
            "lib/Cargo.toml",
            8,
            ["rayon", "simd"],
        )
        assert f"= fix: {finding['fix']['description']} ({edit['file']}:{edit['line']})" in text
    # Without the least a fix adds, each member's own candidates are resolved again.
    monkeypatch.setattr(WorkspaceBuilds, "least_added", lambda *arguments: 0)
    unbounded_text, unbounded = audit("unbounded")
    assert unbounded_text == text
    assert bounded < unbounded, (bounded, unbounded)


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
        "app": f'burn = {burn}\ncore = {{ path = "../core", features = ["gpu"] }}\n',
        "core": f'burn = {burn}\n\n[features]\ngpu = ["burn/wgpu"]\n',
        "cli": 'core = { path = "../core" }\n',
        "server": 'core = { path = "../core" }\n',
    }
    _write_workspace(root, manifests, libraries={"core"})


def _write_workspace(root: Path, manifests: dict[str, str], libraries: set[str]) -> None:
    """A workspace of the members named in `manifests`, each with those `[dependencies]`
    lines (from line 8 of its Cargo.toml), a library where named in `libraries`."""
    members = ", ".join(f'"{member}"' for member in manifests)
    root.mkdir(parents=True)
    (root / "Cargo.toml").write_text(f'[workspace]\nresolver = "3"\nmembers = [{members}]\n')
    for member, dependencies in manifests.items():
        directory = root / member
        directory.mkdir()
        package = f'[package]\nname = "{member}"\nversion = "0.1.0"\nedition = "2024"\n'
        (directory / "Cargo.toml").write_text(
            f"{package}publish = false\n\n[dependencies]\n{dependencies}"
        )
        source = "lib.rs" if member in libraries else "main.rs"
        (directory / "src").mkdir()
        (directory / "src" / source).write_text("" if member in libraries else "fn main() {}\n")
    # burn 0.22.1's versions, as the GPU-only example locks them, with the members added.
    shutil.copy(WORKSPACES / "gpu-only" / "Cargo.lock", root / "Cargo.lock")
    subprocess.run(
        ["cargo", "metadata", "--format-version=1", "--offline"],
        cwd=root,
        check=True,
        capture_output=True,
    )


def test_a_fix_behind_a_libraries_feature_points_where_the_library_cuts(
    offline_cargo: Path, tmp_path: Path
) -> None:
    """boltr_burn: mid builds burn-ndarray through the library lib's default `backend`, under
    the workspace's `default-features = false` on burn. The fix goes behind `backend` in lib,
    and mid's finding pointed at its own `lib = { path }` line, which the fix leaves as it is,
    or, once the audit's metadata held more packages (`--each-feature`), at the cut."""
    project = tmp_path / "project"
    files = {
        "Cargo.toml": '[workspace]\nresolver = "3"\nmembers = ["lib", "mid"]\n\n'
        "[workspace.dependencies]\n"
        'burn = { version = "0.21.0", default-features = false }\n',
        "lib/Cargo.toml": PACKAGE.format("lib").replace('"2021"', '"2024"')
        + '[features]\ndefault = ["backend"]\nbackend = ["burn/ndarray"]\nwgpu = ["burn/wgpu"]\n\n'
        "[dependencies]\nburn = { workspace = true }\n",
        "lib/src/lib.rs": "",
        "mid/Cargo.toml": PACKAGE.format("mid").replace('"2021"', '"2024"')
        + '[dependencies]\nlib = { path = "../lib" }\nitertools = "0.13"\n',
        "mid/src/lib.rs": "",
    }
    for relative, text in files.items():
        (project / relative).parent.mkdir(parents=True, exist_ok=True)
        (project / relative).write_text(text)
    subprocess.run(["cargo", "generate-lockfile", "--offline"], cwd=project, check=True)
    places = []
    for flags in ([], ["--each-feature"]):
        report = run_in_process(str(project), "--format", "json", *flags)
        [finding] = [
            f
            for f in json.loads(report.stdout)["findings"]
            if f["member"] == "mid"
            and f["code"] == "FC002"
            and f["configuration"]["features"] == []
        ]
        assert [e["file"] for e in finding["fix"]["edits"]] == ["lib/Cargo.toml"] * 2
        location = finding["location"]
        places.append((location["file"], location["line"], finding["chain"][-1]))
    assert (
        places == [("Cargo.toml", 6, "cut at Cargo.toml:6: `default-features = false` on burn")] * 2
    )
