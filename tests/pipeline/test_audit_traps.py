"""Every trap of the core audit, end to end: real cargo (offline, stub registry), real CLI.

Each case lists the findings a user must see — member, crate, version, missing feature, severity
and the manifest place to edit — and nothing else: a silence is a verdict too.
"""

from __future__ import annotations

import functools
import json
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from cargo_tree_oracle import run_in_process_resolved_by
from cli_in_process import run_in_process
from support import CRATES, WORKSPACES

pytestmark = pytest.mark.usefixtures("remembered_cargo")
"""featcheck runs in this process, and its cargo answers an identical question (the same
fixture audited with either resolver, or for other targets) from the first real answer;
the cargo tree oracle's `cargo tree` of each member is always real cargo's."""


def _host() -> str:
    try:
        output = subprocess.run(["rustc", "-vV"], capture_output=True, text=True).stdout
    except OSError:
        return "unknown"  # the cargo fixtures skip these tests then
    hosts = [line[5:].strip() for line in output.splitlines() if line.startswith("host:")]
    return hosts[0] if hosts else "unknown"


HOST = _host()


@dataclass(frozen=True)
class Expected:
    member: str
    code: str
    crate_version: str
    feature: str
    severity: str
    place: str  # file:line:column


def _found(report: dict[str, Any]) -> set[Expected]:
    return {
        Expected(
            f["member"],
            f["code"],
            f["crate_version"],
            f["feature"],
            f["severity"],
            "{file}:{line}:{column}".format(**f["location"]),
        )
        for f in report["findings"]
    }


CASES: dict[str, set[Expected]] = {
    # dev-dependencies turn rayon on for tests only; `cargo build` gets [std].
    "dev-only-rayon": {Expected("app", "FC001", "0.22.1", "rayon", "error", "Cargo.toml:8:31")},
    # bench (defaults) enables rayon at the workspace root; app alone does not get it.
    "workspace-unification": {
        Expected("app", "FC001", "0.22.1", "rayon", "error", "app/Cargo.toml:8:31")
    },
    # The cut lives in [workspace.dependencies]; server adds rayon through dotted keys.
    "workspace-inheritance": {
        Expected("trainer", "FC001", "0.22.1", "rayon", "error", "Cargo.toml:6:31"),
        Expected("server", "FC003", "0.22.1", "simd", "warning", "Cargo.toml:6:31"),
    },
    "renamed": {Expected("app", "FC001", "0.22.1", "rayon", "error", "Cargo.toml:8:47")},
    # [dependencies.burn] table with `# "rayon",` commented out: point at default-features.
    "table-form": {Expected("app", "FC001", "0.22.1", "rayon", "error", "Cargo.toml:9:1")},
    # Only the cfg(target_os = "linux") table applies on the host.
    "target-specific": {Expected("app", "FC001", "0.22.1", "rayon", "error", "Cargo.toml:8:31")},
    # Build-dependency features do not reach the normal build (resolver 2/3).
    "build-dependency": {Expected("app", "FC001", "0.22.1", "rayon", "error", "Cargo.toml:8:31")},
    # Resolver 1 unifies dev-dependency features into the build: rayon is on (simd is not).
    "resolver-1": {Expected("app", "FC003", "0.22.1", "simd", "warning", "Cargo.toml:8:31")},
    # burn-flex 0.22.1 lacks rayon; burn 0.21.0 with defaults brings its own burn-flex with it.
    "two-versions": {Expected("app", "FC001", "0.22.1", "rayon", "error", "Cargo.toml:8:31")},
    # burn >= 0.19 needs multi-threads; before 0.19 threading came with std.
    "old-burn-ndarray": {
        Expected(
            "burn020-ndarray",
            "FC002",
            "0.20.1",
            "multi-threads",
            "error",
            "burn020-ndarray/Cargo.toml:8:31",
        ),
        Expected(
            "burn018-ndarray-nostd",
            "FC002",
            "0.18.0",
            "std",
            "error",
            "burn018-ndarray-nostd/Cargo.toml:8:31",
        ),
        # burn 0.18 without std leaves half (through burn-core) without its F16C detection;
        # only burn brings half, so the finding is info.
        Expected(
            "burn018-ndarray-nostd",
            "FC026",
            "2.7.1",
            "std",
            "info",
            "burn018-ndarray-nostd/Cargo.toml:8:31",
        ),
    }
    # Without burn's std, memchr loses std too: no run-time AVX2 detection (x86_64 only);
    # info, since only burn brings memchr in.
    | (
        {
            Expected(
                "burn018-ndarray-nostd",
                "FC012",
                "2.8.3",
                "std",
                "info",
                "burn018-ndarray-nostd/Cargo.toml:8:31",
            )
        }
        if HOST.startswith("x86_64-")
        else set()
    ),
    # burn-flex is linked into every 0.22 build, but no backend is selected here.
    "library-no-backend": set(),
    # No CPU backend is selected here either; the GPU backend lost fusion and autotune
    # with burn's defaults.
    "gpu-only": {
        Expected("app", "FC004", "0.22.1", "fusion", "warning", "Cargo.toml:8:31"),
        Expected("app", "FC005", "0.22.1", "autotune", "warning", "Cargo.toml:8:31"),
    },
    # A library's features are chosen by its binaries: info, not a failure.
    "library-with-flex": {Expected("model", "FC001", "0.22.1", "rayon", "info", "Cargo.toml:8:31")},
    # A cdylib (Python extension, wasm module) and a package whose only binary is
    # src/bin/tool.rs are final artifacts: nobody downstream chooses their features.
    "cdylib-flex": {
        Expected("cdylib-flex", "FC001", "0.22.1", "rayon", "error", "Cargo.toml:8:31")
    },
    "bin-dir": {Expected("bin-dir", "FC001", "0.22.1", "rayon", "error", "Cargo.toml:8:31")},
    # Examples are not shipped: a library with an example stays a library.
    "examples-only": {
        Expected("examples-only", "FC001", "0.22.1", "rayon", "info", "Cargo.toml:8:31")
    },
    "direct-flex": {Expected("app", "FC001", "0.22.1", "rayon", "error", "Cargo.toml:9:36")},
    # The backend comes from a crate feature; the cut is still default-features on burn.
    "crate-feature": {Expected("app", "FC001", "0.22.1", "rayon", "error", "Cargo.toml:8:31")},
    # The same loss one level down, for crates used without burn.
    "gemm-direct": {Expected("app", "FC008", "0.19.0", "rayon", "warning", "Cargo.toml:8:28")},
    "ndarray-direct": {
        Expected("app", "FC009", "0.3.11", "threading", "warning", "Cargo.toml:8:1")
    },
    "faer-direct": {Expected("app", "FC010", "0.24.4", "rayon", "warning", "Cargo.toml:8:28")},
    # The binary inherits the library's cut: the place to edit is in model's manifest.
    "lib-chain": {
        Expected("cli", "FC001", "0.22.1", "rayon", "error", "model/Cargo.toml:8:31"),
        Expected("model", "FC001", "0.22.1", "rayon", "info", "model/Cargo.toml:8:31"),
    },
}


@functools.cache
def _audit(workspace: str, resolver: str = "featcheck") -> subprocess.CompletedProcess[str]:
    """`featcheck WORKSPACE --format json` in this process, resolved by R (cargo_tree_oracle.py),
    over an unchanged fixture, run once per test process: several tests read different parts
    of the same report. Places are relative to the fixture (`--root`), not to the repository it
    lies in."""
    path = str(WORKSPACES / workspace)
    return run_in_process_resolved_by(resolver, path, "--format", "json", "--root", path)


@pytest.mark.parametrize("resolver", ["featcheck", "cargo"])
@pytest.mark.parametrize("workspace", sorted(CASES))
def test_trap_gives_cargos_answer_member_by_member(
    workspace: str, resolver: str, offline_cargo_for: Callable[..., Path]
) -> None:
    # featcheck's own resolver (the default) and cargo tree per member must agree.
    offline_cargo_for(WORKSPACES / workspace)
    result = _audit(workspace, resolver)
    assert result.returncode in (0, 1), result.stderr
    report = json.loads(result.stdout)
    assert _found(report) == CASES[workspace]
    failing = any(e.severity != "info" for e in CASES[workspace])
    assert result.returncode == (1 if failing else 0)
    assert report["targets"] == [HOST]


def test_other_target_uses_that_targets_tables(offline_cargo_for: Callable[..., Path]) -> None:
    offline_cargo_for(WORKSPACES / "target-specific")
    windows = "x86_64-pc-windows-msvc"
    path = str(WORKSPACES / "target-specific")
    result = run_in_process(path, "--target", windows, "--format", "json", "--root", path)
    # The cfg(windows) table has rayon (no FC001) but not simd: the finding points at it.
    assert _found(json.loads(result.stdout)) == {
        Expected("app", "FC003", "0.22.1", "simd", "warning", "Cargo.toml:11:31")
    }


def test_several_targets_are_audited_each_on_its_own(
    offline_cargo_for: Callable[..., Path],
) -> None:
    offline_cargo_for(WORKSPACES / "target-specific")
    result = run_in_process(
        str(WORKSPACES / "target-specific"),
        "--target",
        "x86_64-pc-windows-msvc",
        "--target",
        HOST,
        "--target",
        "aarch64-apple-darwin",
        "--format",
        "json",
    )
    report = json.loads(result.stdout)
    by_target = {(f["target"], f["code"]) for f in report["findings"]}
    # Neither cfg table applies to macOS: no burn at all there.
    assert by_target == {("x86_64-pc-windows-msvc", "FC003"), (HOST, "FC001")}
    assert report["targets"] == ["x86_64-pc-windows-msvc", HOST, "aarch64-apple-darwin"]


def test_package_flag_narrows_to_one_member(offline_cargo_for: Callable[..., Path]) -> None:
    offline_cargo_for(WORKSPACES / "workspace-unification")
    result = run_in_process(
        str(WORKSPACES / "workspace-unification"), "-p", "bench", "--format", "json"
    )
    assert result.returncode == 0
    assert json.loads(result.stdout)["members"] == ["bench"]


def test_a_member_directory_audits_that_member_with_the_workspace(
    offline_cargo_for: Callable[..., Path],
) -> None:
    offline_cargo_for(WORKSPACES / "workspace-inheritance")
    result = run_in_process(
        str(WORKSPACES / "workspace-inheritance" / "trainer"), "--format", "json"
    )
    report = json.loads(result.stdout)
    assert report["members"] == ["trainer"]
    # Locations are relative to the repository root: the cut is in the workspace root.
    files = [f["location"]["file"] for f in report["findings"]]
    assert files == ["fixtures/workspaces/workspace-inheritance/Cargo.toml"]
    trainer = str(WORKSPACES / "workspace-inheritance" / "trainer")
    chosen = json.loads(run_in_process(trainer, "--format", "json", "--root", trainer).stdout)
    assert [f["location"]["file"] for f in chosen["findings"]] == ["../Cargo.toml"]


def test_fixes_are_computed_from_feature_tables(offline_cargo_for: Callable[..., Path]) -> None:
    offline_cargo_for(WORKSPACES / "old-burn-ndarray")
    result = _audit("old-burn-ndarray")
    findings = json.loads(result.stdout)["findings"]
    found = {(f["member"], f["code"]): f for f in findings}
    offered = {
        key: [f["suggestion"], *(a["description"] for a in f["alternatives"])]
        for key, f in found.items()
    }
    # burn 0.20.1 has no multi-threads passthrough: only its defaults, or a direct dependency,
    # which adds fewer packages to the build and so is the fix.
    burn020 = offered[("burn020-ndarray", "FC002")]
    assert 'features = ["multi-threads"]' in burn020[0]
    assert any("remove `default-features = false`" in text for text in burn020[1:])
    # burn 0.18 passes `std` on; the direct burn-ndarray dependency adds fewer packages.
    nostd = offered[("burn018-ndarray-nostd", "FC002")]
    assert 'features = ["std"]' in nostd[0]
    assert 'add "std" to the features of burn' in nostd[1:]


@pytest.mark.parametrize(
    ("crate", "code"),
    [
        ("pitb-exec-cpu", 1),
        ("pitb-exec-cpu-simd", 0),
        ("pitb-exec-cpu-default", 0),
        ("pitb-exec-cpu-amx", 0),
    ],
)
def test_example_crates(crate: str, code: int, offline_cargo_for: Callable[..., Path]) -> None:
    offline_cargo_for(CRATES / crate)
    result = run_in_process(str(CRATES / crate))
    assert result.returncode == code, result.stdout + result.stderr
    if code:
        assert "error[FC001] burn-flex 0.22.1 is built without `rayon`" in result.stdout
        manifest = f"crates/{crate}/Cargo.toml"
        assert f"--> {manifest}:9:31" in result.stdout
        assert '9 | burn = { version = "=0.22.1", default-features = false' in result.stdout
        assert f'fix: add "rayon", "simd" to the features of burn ({manifest}:9)' in result.stdout
        assert result.stdout.count("error[") == 1
    else:
        assert "no findings" in result.stdout


CHAIN_0_22 = (
    "would arrive through burn default → burn-core/default → burn-tensor/default → "
    "burn-dispatch/default → burn-flex/default → rayon"
)


@pytest.mark.parametrize(
    ("workspace", "member", "expected"),
    [
        (
            "dev-only-rayon",
            "app",
            [
                CHAIN_0_22,
                "cut at Cargo.toml:8: `default-features = false` on burn",
                "enabled only for tests and benches, through [dev-dependencies] burn (line 11): "
                "the build itself does not get it",
            ],
        ),
        (
            "workspace-unification",
            "app",
            [
                CHAIN_0_22,
                "cut at app/Cargo.toml:8: `default-features = false` on burn",
                "enabled in the workspace-wide build by member bench, not when app is built "
                "alone (cargo build -p app, cargo install)",
            ],
        ),
        (
            # burn's defaults reach burn-cubecl through burn-vision too, but burn-vision is
            # not in this build: the chain names the backend that is.
            "gpu-only",
            "app",
            [
                "would arrive through burn default → burn-core/default → burn-wgpu/default → "
                "autotune → burn-cubecl/autotune",
                "cut at Cargo.toml:8: `default-features = false` on burn",
            ],
        ),
        (
            "old-burn-ndarray",
            "burn020-ndarray",
            [
                "would arrive through burn default → burn-ndarray/default → multi-threads",
                "cut at burn020-ndarray/Cargo.toml:8: `default-features = false` on burn",
            ],
        ),
    ],
)
def test_every_finding_shows_its_why_chain(
    workspace: str, member: str, expected: list[str], offline_cargo_for: Callable[..., Path]
) -> None:
    offline_cargo_for(WORKSPACES / workspace)
    result = _audit(workspace)
    findings = [f for f in json.loads(result.stdout)["findings"] if f["member"] == member]
    # One finding each, but gpu-only's FC005 beside its FC004 (same cut, another chain).
    (finding,) = [f for f in findings if workspace != "gpu-only" or f["code"] == "FC005"]
    assert finding["chain"] == expected


@pytest.mark.parametrize(
    ("target", "code", "feature"),
    [
        ("aarch64-apple-darwin", "FC006", "apple-amx"),
        ("x86_64-unknown-linux-gnu", "FC007", "x86-v4"),
    ],
)
def test_hints_are_opt_in_info_for_their_target_only(
    target: str, code: str, feature: str, offline_cargo_for: Callable[..., Path]
) -> None:
    offline_cargo_for(CRATES / "pitb-exec-cpu-simd")
    crate = str(CRATES / "pitb-exec-cpu-simd")
    quiet = run_in_process(crate, "--target", target, "--format", "json")
    assert json.loads(quiet.stdout)["findings"] == []
    hinted = run_in_process(crate, "--target", target, "--select", code, "--format", "json")
    assert hinted.returncode == 0  # info never fails
    (finding,) = json.loads(hinted.stdout)["findings"]
    assert (finding["code"], finding["severity"], finding["feature"]) == (code, "info", feature)
    other = "x86_64-unknown-linux-gnu" if code == "FC006" else "aarch64-apple-darwin"
    elsewhere = run_in_process(crate, "--target", other, "--select", code, "--format", "json")
    assert json.loads(elsewhere.stdout)["findings"] == []


@pytest.mark.parametrize("workspace", sorted(CASES))
def test_the_whole_report_is_the_same_with_cargos_builds(
    workspace: str, offline_cargo_for: Callable[..., Path]
) -> None:
    """Every word of each finding, not only its verdict and place: a placement note looked
    up the workspace's libraries by cargo's package ids, which `cargo tree` text has none of."""
    offline_cargo_for(WORKSPACES / workspace)
    ours = json.loads(_audit(workspace).stdout)["findings"]
    assert ours == json.loads(_audit(workspace, "cargo").stdout)["findings"]
