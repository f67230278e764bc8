"""`--each-feature` in the terminal: a table of builds by rule, then each edit once, its
findings together (one heading per member, each block naming its builds), not a page of
findings repeated per configuration."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from cli_in_process import run_in_process
from support import WORKSPACES
from synthetic_registry import PACKAGE, use_registry, write_project

from featcheck.render.text_lines import wrap

pytestmark = pytest.mark.usefixtures("remembered_cargo")

FIXTURE = WORKSPACES / "each-feature-backends"
HOST = ("--target", "x86_64-unknown-linux-gnu")


def _run(tmp_path: Path, *options: str) -> tuple[int, str]:
    project = tmp_path / FIXTURE.name
    if not project.exists():
        shutil.copytree(FIXTURE, project)
    done = run_in_process(str(project), *HOST, "--each-feature", *options, columns=100)
    assert done.returncode == 1, done.stderr
    return done.returncode, done.stdout


def test_each_feature_prints_a_table_and_each_edit_once(
    tmp_path: Path, offline_cargo_for: Callable[..., Path]
) -> None:
    offline_cargo_for(FIXTURE)
    _, text = _run(tmp_path)
    lines = text.splitlines()
    assert lines[:8] == [
        "findings by build configuration and rule:",
        "  FC001  FC002  FC004  FC005  build",
        "      .      .      .      .  default features",
        "      .      .      .      .  --no-default-features",
        "      .      .      1      1  --features cuda --no-default-features",
        "      1      .      .      .  --features flex --no-default-features",
        "      .      1      .      .  --features ndarray --no-default-features",
        "      .      .      1      1  --features wgpu --no-default-features",
    ]
    # A row is one line however long its build's name (kord's: a feature of 40 characters).
    long_name = "--features " + "x" * 120
    row = [("      1  " + long_name, "")]
    assert wrap(row, 100) == [row]
    assert wrap([("  FC001  member: build", "dim")], 10) == [[("  FC001  member: build", "dim")]]
    # One heading for the member: the blocks name their builds.
    assert [line for line in lines if line.startswith("app ")] == ["app (x86_64-unknown-linux-gnu)"]
    # Each backend's `fusion`, and burn-ndarray's `multi-threads` (through burn's `rayon`), is
    # asked of burn by the feature that selects the backend (the other builds gain nothing). `autotune` is burn-cubecl's, whose kernels both GPU builds
    # run: one finding of both builds, and one fix (burn passes it on weakly to each backend).
    fixes = [line for line in lines if line.startswith("  = fix:")]
    assert fixes == [
        '  = fix: add "burn/rayon", "burn/simd" to `flex` in [features] (Cargo.toml:14); with it '
        "the build",
        '  = fix: add "burn/rayon" to `ndarray` in [features] (Cargo.toml:15); with it the build '
        "gets",
        '  = fix: add "burn/fusion" to `cuda` in [features] (Cargo.toml:17); with it the build '
        "gets `fusion`",
        '  = fix: add "burn/fusion" to `wgpu` in [features] (Cargo.toml:16); with it the build '
        "gets `fusion`",
        '  = fix: add "autotune" to the features of burn (Cargo.toml:10); with it the build gets '
        "`autotune`,",
    ]
    assert sum(line.startswith("  --> Cargo.toml:10:31") for line in lines) == 5
    verdicts = [line.split(" is built")[0] for line in lines if line.startswith(("error[", "warn"))]
    assert verdicts == [
        "error[FC001] burn-flex 0.22.1",
        "error[FC002] burn-ndarray 0.22.1",
        "warning[FC004] burn-cuda 0.22.1",
        "warning[FC004] burn-wgpu 0.22.1",
        "warning[FC005] burn-cubecl 0.22.1",
    ]
    assert (
        "  = builds: --features cuda --no-default-features; --features wgpu --no-default-features"
        in lines
    )
    assert "  = builds: --features cuda --no-default-features" in lines
    assert (
        "  = why: burn-cuda defaults to `fusion` and `autotune`; with its defaults cut on the way "
        "(burn with" in lines
    )
    assert (
        lines[-2] == "2 errors, 3 warnings (1 member, 6 configurations, x86_64-unknown-linux-gnu)"
    )
    # Five edits, five blocks (71 lines before, one block per finding and configuration).
    assert len(lines) <= 76, text


def test_each_feature_keeps_every_finding_in_json_and_with_v(
    tmp_path: Path, offline_cargo_for: Callable[..., Path]
) -> None:
    offline_cargo_for(FIXTURE)
    _, json_text = _run(tmp_path, "--format", "json")
    report = json.loads(json_text)
    assert len(report["findings"]) == 5 and report["summary"]["warning"] == 3
    # -v shows each finding whole, under its build's heading, after the same table.
    _, verbose = _run(tmp_path, "-v")
    assert verbose.startswith("findings by build configuration and rule:\n")
    assert "app (x86_64-unknown-linux-gnu) with --features cuda --no-default-features" in verbose
    assert verbose.count("  = fix:") == 5


DEV_ONLY = PACKAGE.format("search") + (
    '[features]\ndefault = ["fast"]\nfast = ["dep:helper"]\n\n'
    '[dependencies]\ngemmish = { version = "0.1", default-features = false }\n'
    'helper = { version = "0.1", optional = true }\n\n[dev-dependencies]\nhelper = "0.1"\n'
)


def test_a_configurations_chain_reads_that_configurations_build(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Without `fast`, only the tests' helper gives gemmish `rayon`: the chain says so. It was
    judged by the default build, where helper is a normal dependency (lewm-rs's burn-ndarray)."""
    registry = {
        "gemmish": {"0.1.0": {"features": {"default": [], "rayon": []}}},
        "helper": {
            "0.1.0": {
                "features": {"default": ["par"], "par": ["gemmish/rayon"]},
                "dependencies": {"gemmish": {"version": "0.1", "default-features": False}},
            }
        },
    }
    use_registry(tmp_path_factory.mktemp("registry"), registry, monkeypatch)
    project = write_project(
        tmp_path / "search", {"src/main.rs": "fn main() {}", "Cargo.toml": DEV_ONLY}
    )
    done = run_in_process(str(project), "--each-feature", "--format", "json")
    [finding] = json.loads(done.stdout)["findings"]
    assert [c["features"] for c in finding["configurations"]] == [[]]
    assert finding["chain"][-1] == (
        "enabled only for tests and benches, through [dev-dependencies] helper (line 15): the "
        "build itself does not get it"
    )


THROUGH_WRAPPER = PACKAGE.format("app") + (
    '[features]\ndefault = ["gemmish", "wrapper"]\n\n[dependencies]\n'
    'gemmish = { version = "0.1", optional = true }\n'
    'wrapper = { version = "0.1", optional = true }\n'
)


def test_a_build_without_the_line_a_finding_is_placed_at_is_placed_on_its_own(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The default build reaches gemmish through the member's own optional line and through
    wrapper; `--features wrapper` only through wrapper, where the own line is not built. That
    build was folded into the default build's finding, placed at the own line, whose fix cannot
    reach it (ockam_core's regex and tracing-subscriber): it is placed as when audited alone."""
    registry = {
        "gemmish": {"0.1.0": {"features": {"default": [], "rayon": []}}},
        "wrapper": {"0.1.0": {"dependencies": {"gemmish": {"version": "0.1"}}}},
    }
    use_registry(tmp_path_factory.mktemp("registry"), registry, monkeypatch)
    files = {"src/main.rs": "fn main() {}", "Cargo.toml": THROUGH_WRAPPER}
    project = write_project(tmp_path / "app", files)

    def placed(*flags: str) -> dict[str, int]:
        """Where each build's finding is placed, by the build's `--features`."""
        report = json.loads(run_in_process(str(project), *flags, "--format", "json").stdout)
        return {
            ",".join(c["features"]) or "default": f["location"]["line"]
            for f in report["findings"]
            for c in f["configurations"]
        }

    assert placed("--each-feature") == {"default": 10, "gemmish": 10, "wrapper": 11}
    assert placed("--no-default-features", "--features", "wrapper") == {"wrapper": 11}
