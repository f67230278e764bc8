"""cargo's resolve that writes Cargo.lock takes in every optional dependency a `dep?/feature`
names (cargo issue 10801), though no build turns it on. whisper-burn: removing burn's
`default-features = false` turns on `burn-train?/default`, Cargo.lock must then hold
burn-train, and its ratatui asks for a `unicode-width` the lock holds another version of, so
cargo refuses. featcheck confirmed that fix, and `--fix` stopped at cargo's error."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_in_process import run_in_process
from synthetic_registry import PACKAGE, locked_packages, use_registry, write_project

MAIN = "fn main() {}\n"

pytestmark = [pytest.mark.usefixtures("remembered_cargo"), pytest.mark.cargo]

REGISTRY = {
    "gemmish": {"0.1.0": {"features": {"default": [], "rayon": []}}},
    "width": {"0.2.0": {}, "0.2.2": {}},
    # The trainer pins the width its users must not have locked otherwise.
    "trainer": {"1.0.0": {"dependencies": {"width": "=0.2.0"}}},
    "front": {
        "1.0.0": {
            "features": {"default": ["gemmish/rayon", "trainer?/default"]},
            "dependencies": {
                "gemmish": "0.1.0",
                "trainer": {"version": "1.0.0", "optional": True},
            },
        }
    },
}


def test_a_fix_whose_lock_cargo_cannot_write_is_not_chosen(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    use_registry(tmp_path_factory.mktemp("registry"), REGISTRY, monkeypatch)
    manifest = PACKAGE.format("app") + (
        '[dependencies]\nfront = { version = "1.0.0", default-features = false }\n'
        'width = "=0.2.2"\n'
    )
    project = write_project(tmp_path / "app", {"src/main.rs": MAIN, "Cargo.toml": manifest})

    report = run_in_process(str(project), "--format", "json")
    assert report.returncode == 1, report.stdout + report.stderr
    [finding] = json.loads(report.stdout)["findings"]
    assert finding["fix"]["description"].startswith("add gemmish = ")
    [refused] = [a for a in finding["alternatives"] if "default-features" in a["description"]]
    assert "cargo cannot resolve it" in refused["note"] and not refused["confirmed"]

    fixed = run_in_process(str(project), "--fix")
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr
    assert run_in_process(str(project)).returncode == 0


def test_the_plain_report_offers_the_fix_cargo_accepts_after_the_one_it_refuses(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Without `-v` the search stops at the first fix that only waits for cargo; when cargo
    refuses it, the fixes it ruled out are searched after all: the report says what `--fix`
    does, as `-v` and JSON say it."""
    use_registry(tmp_path_factory.mktemp("registry"), REGISTRY, monkeypatch)
    manifest = PACKAGE.format("app") + (
        '[dependencies]\nfront = { version = "1.0.0", default-features = false }\n'
        'width = "=0.2.2"\n'
    )
    project = write_project(tmp_path / "app", {"src/main.rs": MAIN, "Cargo.toml": manifest})

    plain = run_in_process(str(project))
    verbose = run_in_process(str(project), "-v")
    [fix] = [line for line in plain.stdout.splitlines() if "= fix:" in line]
    assert fix == (
        '  = fix: add gemmish = { version = "0.1.0", default-features = false, features = '
        '["rayon"] } to [dependencies] (Cargo.toml); with it the build gets `rayon`, `--fix` '
        "applies it"
    )
    assert fix in verbose.stdout.splitlines()


def test_what_a_fix_adds_to_cargo_lock_beside_the_build_is_said_and_is_what_fix_writes(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """voxcpm-rs: burn's defaults add 3 packages to the build and 168 to Cargo.lock (weak
    dependencies, other platforms'). Here front's defaults add none to the build, and trainer
    with its width to the lock."""
    trainer = {"features": {"default": []}, "dependencies": {"width": "=0.2.0"}}
    use_registry(
        tmp_path_factory.mktemp("registry"),
        {**REGISTRY, "trainer": {"1.0.0": trainer}},
        monkeypatch,
    )
    manifest = PACKAGE.format("app") + (
        '[dependencies]\nfront = { version = "1.0.0", default-features = false }\n'
    )
    project = write_project(tmp_path / "app", {"src/main.rs": MAIN, "Cargo.toml": manifest})
    before = locked_packages(project)

    report = run_in_process(str(project), "--format", "json")
    [finding] = json.loads(report.stdout)["findings"]
    fix = finding["fix"]
    assert fix["description"] == "remove `default-features = false` from front"
    assert (fix["added_packages"], fix["lockfile_added_packages"]) == (0, 2)
    [memory] = finding["alternatives"]  # the new line cargo need not be asked about
    assert (memory["added_packages"], memory["lockfile_added_packages"]) == (0, 0)
    text = " ".join(run_in_process(str(project)).stdout.split())
    assert (
        "with it the build gets `rayon` and adds 2 packages to Cargo.lock, none to the workspace's "
        "builds, "
        "`--fix` applies it" in text
    )

    assert run_in_process(str(project), "--fix").returncode == 0
    gained = locked_packages(project) - before
    assert sorted(gained) == [("trainer", "1.0.0"), ("width", "0.2.0")]
