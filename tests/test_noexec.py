"""`--no-exec`: the audit from files alone (manifests, Cargo.lock, local registry or vendor/).

The stub registry in fixtures/registry plays the local cargo registry: a temporary CARGO_HOME
holds `registry/src/index.crates.io-0000/NAME-VERSION` links to its packages. While featcheck
audits with --no-exec, PATH is empty and `subprocess.Popen` raises, so any process it tried to
start would fail the test. Verdicts are compared with the normal audit (real cargo, offline).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import CRATES, FIXTURES, WORKSPACES
from typer.testing import CliRunner

from featcheck.audit import AuditOptions, audit_project
from featcheck.cli import app
from featcheck.errors import FeatcheckError
from featcheck.noexec import (
    SUPPORTED_TARGETS,
    MissingManifests,
    build_metadata,
    builtin_cfg,
    detect_host_triple,
)
from featcheck.report import AuditResult, Location

REGISTRY = FIXTURES / "registry"


def _link_registry(directory: Path) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    for package in REGISTRY.iterdir():
        (directory / package.name).symlink_to(package, target_is_directory=True)


@pytest.fixture(scope="session")
def registry_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A CARGO_HOME whose unpacked registry holds every stub package (no config: no cargo)."""
    home = tmp_path_factory.mktemp("noexec-cargo-home")
    _link_registry(home / "registry" / "src" / "index.crates.io-0000")
    return home


class _NoProcess(Exception):
    pass


@pytest.fixture
def no_processes(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[None]:
    """No cargo/rustc on PATH, and starting any process raises."""
    empty = tmp_path / "empty-path"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))

    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise _NoProcess(f"--no-exec started a process: {args!r}")

    monkeypatch.setattr(subprocess, "Popen", refuse)
    monkeypatch.setattr(os, "system", refuse)
    if hasattr(os, "posix_spawn"):
        monkeypatch.setattr(os, "posix_spawn", refuse)
    yield


def _where(location: Location | None) -> str | None:
    if location is None:
        return None
    return f"{location.file}:{location.line}:{location.column}"


def _verdicts(result: AuditResult) -> set[tuple[Any, ...]]:
    return {
        (
            f.code,
            f.member,
            f.crate,
            f.crate_version,
            f.feature,
            f.target,
            f.severity,
            _where(f.location),
        )
        for f in result.findings
    }


def _no_exec_audit(
    path: Path, home: Path, monkeypatch: pytest.MonkeyPatch, targets: tuple[str, ...] = ()
) -> AuditResult:
    monkeypatch.setenv("CARGO_HOME", str(home))
    return audit_project(path, AuditOptions(targets=targets, no_exec=True))


CASES = [
    (CRATES / "pitb-exec-cpu", ()),
    (CRATES / "pitb-exec-cpu-simd", ()),
    (CRATES / "pitb-exec-cpu-default", ()),
    (CRATES / "pitb-exec-cpu-amx", ("aarch64-apple-darwin",)),
    (WORKSPACES / "target-specific", ("x86_64-pc-windows-msvc",)),
    (WORKSPACES / "target-specific", ("aarch64-apple-darwin", "wasm32-unknown-unknown")),
    (WORKSPACES / "workspace-inheritance" / "trainer", ()),  # one member: the root is found
    # Every fixture workspace on the host: workspace-unification, workspace-inheritance,
    # dev-only-rayon, renamed, two-versions, resolver-1, path dependencies, ...
    *((w, ()) for w in sorted(WORKSPACES.iterdir()) if (w / "Cargo.toml").is_file()),
]


@pytest.mark.parametrize(("path", "targets"), CASES, ids=lambda v: getattr(v, "name", str(v)))
def test_no_exec_verdicts_equal_the_cargo_audit(
    path: Path,
    targets: tuple[str, ...],
    offline_cargo: Path,
    registry_home: Path,
    monkeypatch: pytest.MonkeyPatch,
    request: pytest.FixtureRequest,
) -> None:
    host = detect_host_triple()
    with_cargo = audit_project(
        path, AuditOptions(targets=targets or (host,), offline=True, confirm_fixes=False)
    )
    request.getfixturevalue("no_processes")
    without = _no_exec_audit(path, registry_home, monkeypatch, targets or (host,))
    assert _verdicts(without) == _verdicts(with_cargo)
    assert without.members == with_cargo.members
    assert all(f.fix is None or not f.fix.confirmed for f in without.findings)


def test_no_exec_finds_fc001_on_the_example_crate(
    registry_home: Path, monkeypatch: pytest.MonkeyPatch, no_processes: None
) -> None:
    result = _no_exec_audit(CRATES / "pitb-exec-cpu", registry_home, monkeypatch)
    assert [(f.code, _where(f.location)) for f in result.findings] == [("FC001", "Cargo.toml:9:31")]
    assert result.targets == [detect_host_triple()]
    simd = _no_exec_audit(CRATES / "pitb-exec-cpu-simd", registry_home, monkeypatch)
    assert simd.findings == []


def test_package_ids_match_cargo_metadata(offline_cargo: Path, registry_home: Path) -> None:
    manifest = CRATES / "pitb-exec-cpu" / "Cargo.toml"
    real = json.loads(
        subprocess.run(
            ["cargo", "metadata", "--format-version", "1", "--offline"],
            cwd=manifest.parent,
            capture_output=True,
            text=True,
            check=True,
        ).stdout
    )
    mine = build_metadata(manifest, {"CARGO_HOME": str(registry_home)})
    assert mine["workspace_members"] == real["workspace_members"]
    assert mine["resolve"]["root"] == real["resolve"]["root"]
    assert {p["id"] for p in mine["packages"]} == {p["id"] for p in real["packages"]}
    assert Path(mine["workspace_root"]) == Path(real["workspace_root"])


def test_vendor_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, no_processes: None
) -> None:
    project = tmp_path / "project"
    shutil.copytree(CRATES / "pitb-exec-cpu", project, ignore=shutil.ignore_patterns("target"))
    vendor = project / "vendor"
    vendor.mkdir()
    for index, package in enumerate(sorted(REGISTRY.iterdir())):
        # Both layouts: `vendor/NAME-VERSION/` and `vendor/NAME/` (checked against its version).
        bare = re.match(r"(.+?)-\d+\.\d+\.\d+", package.name)
        assert bare is not None
        name = package.name if index % 2 else bare.group(1)
        if not (vendor / name).exists():
            (vendor / name).symlink_to(package, target_is_directory=True)
        else:
            (vendor / package.name).symlink_to(package, target_is_directory=True)
    result = _no_exec_audit(project, tmp_path / "empty-cargo-home", monkeypatch)
    assert [(f.code, _where(f.location)) for f in result.findings] == [("FC001", "Cargo.toml:9:31")]


def test_missing_registry_manifests_are_named(tmp_path: Path, no_processes: None) -> None:
    manifest = CRATES / "pitb-exec-cpu" / "Cargo.toml"
    with pytest.raises(MissingManifests) as error:
        build_metadata(manifest, {"CARGO_HOME": str(tmp_path / "empty-cargo-home")})
    assert "burn@0.22.1" in error.value.missing
    assert "cargo fetch" in str(error.value)


def test_manifest_only_fallback_reads_the_members_declarations(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, no_processes: None
) -> None:
    empty_home = tmp_path / "empty-cargo-home"
    result = _no_exec_audit(CRATES / "pitb-exec-cpu", empty_home, monkeypatch)
    assert [(f.code, _where(f.location), f.confidence) for f in result.findings] == [
        ("FC001", "Cargo.toml:9:31", "manifest-only")
    ]
    assert result.notes[0].startswith("manifest-only audit: no manifest in the local cargo")
    # With rayon among burn's features (or defaults on) the manifest alone shows nothing.
    assert _no_exec_audit(CRATES / "pitb-exec-cpu-simd", empty_home, monkeypatch).findings == []
    assert _no_exec_audit(CRATES / "pitb-exec-cpu-default", empty_home, monkeypatch).findings == []


def test_resolved_findings_say_so(
    registry_home: Path, monkeypatch: pytest.MonkeyPatch, no_processes: None
) -> None:
    result = _no_exec_audit(CRATES / "pitb-exec-cpu", registry_home, monkeypatch)
    assert [f.confidence for f in result.findings] == ["resolved"]
    assert result.notes == []


def test_unknown_target_names_the_supported_ones(
    registry_home: Path, monkeypatch: pytest.MonkeyPatch, no_processes: None
) -> None:
    with pytest.raises(FeatcheckError) as error:
        _no_exec_audit(CRATES / "pitb-exec-cpu", registry_home, monkeypatch, ("riscv64gc-x",))
    assert "riscv64gc-x" in str(error.value)
    assert all(t in str(error.value) for t in SUPPORTED_TARGETS)


def test_cli_no_exec(
    registry_home: Path, monkeypatch: pytest.MonkeyPatch, no_processes: None
) -> None:
    monkeypatch.setenv("CARGO_HOME", str(registry_home))
    path = str(CRATES / "pitb-exec-cpu")
    result = CliRunner().invoke(app, ["check", path, "--no-exec", "--format", "json"])
    report = json.loads(result.stdout)
    assert [(f["code"], f["confidence"]) for f in report["findings"]] == [("FC001", "resolved")]
    unknown = CliRunner().invoke(app, ["check", path, "--no-exec", "--target", "mips-x"])
    assert unknown.exit_code == 2


def test_builtin_cfg_tables() -> None:
    windows = builtin_cfg("x86_64-pc-windows-msvc")
    assert windows.applies("cfg(windows)") and not windows.applies("cfg(unix)")
    wasm = builtin_cfg("wasm32-unknown-unknown")
    assert wasm.applies('cfg(target_arch = "wasm32")')
    assert builtin_cfg("aarch64-apple-darwin").applies('cfg(target_os = "macos")')


@pytest.mark.parametrize(
    ("system", "machine", "triple"),
    [
        ("linux", "x86_64", "x86_64-unknown-linux-gnu"),
        ("linux", "aarch64", "aarch64-unknown-linux-gnu"),
        ("darwin", "arm64", "aarch64-apple-darwin"),
        ("darwin", "x86_64", "x86_64-apple-darwin"),
        ("win32", "AMD64", "x86_64-pc-windows-msvc"),
    ],
)
def test_host_triple_detection(system: str, machine: str, triple: str) -> None:
    assert detect_host_triple(system, machine) == triple


def test_unknown_host_asks_for_target() -> None:
    with pytest.raises(FeatcheckError, match="--target"):
        detect_host_triple("freebsd14", "riscv64")


def test_member_globs_and_exclude(
    tmp_path: Path, registry_home: Path, monkeypatch: pytest.MonkeyPatch, no_processes: None
) -> None:
    project = tmp_path / "ws"
    shutil.copytree(WORKSPACES / "workspace-unification", project)
    manifest = project / "Cargo.toml"
    manifest.write_text(manifest.read_text().replace('["app", "bench"]', '["*"]'))
    (project / "scratch").mkdir()  # not a package: skipped
    glob = _no_exec_audit(project, registry_home, monkeypatch)
    assert sorted(glob.members) == ["app", "bench"]
    manifest.write_text(manifest.read_text() + 'exclude = ["bench"]\n')
    metadata = build_metadata(manifest, {"CARGO_HOME": str(registry_home)})
    assert [m.rsplit("/", 1)[-1] for m in metadata["workspace_members"]] == ["app#0.1.0"]


def test_cargo_resolver_is_refused(
    registry_home: Path, monkeypatch: pytest.MonkeyPatch, no_processes: None
) -> None:
    monkeypatch.setenv("CARGO_HOME", str(registry_home))
    with pytest.raises(FeatcheckError, match="--no-exec runs no process"):
        audit_project(CRATES / "pitb-exec-cpu", AuditOptions(no_exec=True, resolver="cargo"))
