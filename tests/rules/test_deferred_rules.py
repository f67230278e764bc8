"""FC003 (`simd`) on a burn-flex that also lacks `rayon`: FC001 speaks first, and its fix adds
`simd` too; where FC001 does not stand (ignored, suppressed), FC003 reports `simd` itself, at
its own location with a fix of its own. Real cargo over the synthetic registry."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from cli_in_process import run_in_process
from rule_fixtures import RULE_FIXTURES
from support import TREES

pytestmark = pytest.mark.usefixtures("remembered_cargo")

HOST = ("--target", "x86_64-unknown-linux-gnu")
DECLARATION = 'burn = { version = "0.22.1", default-features = false, features = ["std", "flex"] }'


@pytest.fixture
def project(tmp_path: Path, synthetic_cargo: Path) -> Path:
    """A package whose burn-flex is built `[std]` only: neither `rayon` nor `simd`."""
    copy = tmp_path / "app"
    shutil.copytree(RULE_FIXTURES / "fc003" / "ok-without-rayon", copy)
    assert DECLARATION in (copy / "Cargo.toml").read_text()
    return copy


def _report(project: Path, *options: str) -> tuple[int, dict[str, Any]]:
    done = run_in_process(str(project), *HOST, "--format", "json", *options)
    assert done.returncode in (0, 1), done.stderr
    return done.returncode, json.loads(done.stdout)


def _codes(report: dict[str, Any]) -> list[str]:
    return [f["code"] for f in report["findings"]]


def _assert_fc003_alone(report: dict[str, Any], severity: str = "warning") -> None:
    [finding] = report["findings"]
    assert (finding["code"], finding["severity"], finding["feature"]) == ("FC003", severity, "simd")
    assert (finding["location"]["line"], finding["location"]["column"]) == (9, 30)
    assert finding["fix"]["edits"][0]["features"] == ["simd"]  # its own fix: no `rayon`
    assert finding["fix"]["confirmed"]


def test_fc001_reported_keeps_fc003_out_and_its_fix_adds_simd(project: Path) -> None:
    code, report = _report(project)
    assert code == 1 and _codes(report) == ["FC001"]
    assert report["findings"][0]["fix"]["edits"][0]["features"] == ["rayon", "simd"]
    text = run_in_process(str(project), *HOST, columns=100).stdout
    assert "FC003" not in text.replace("featcheck rule FC001", "")
    assert '= fix: add "rayon", "simd" to the features of burn (Cargo.toml:9)' in text


def test_fc001_ignored_on_the_command_line_leaves_simd_to_fc003(project: Path) -> None:
    code, report = _report(project, "--ignore", "FC001")
    assert code == 1
    _assert_fc003_alone(report)
    text = run_in_process(str(project), *HOST, "--ignore", "FC001", columns=100).stdout
    assert "warning[FC003] burn-flex 0.22.1 is built without `simd`" in text
    assert "  --> Cargo.toml:9:30" in text
    assert '= fix: add "simd" to the features of burn (Cargo.toml:9)' in text


def test_fc001_ignored_in_the_configuration_and_fc003_raised_to_error(project: Path) -> None:
    (project / "featcheck.toml").write_text('ignore = ["FC001"]\n\n[severity]\nFC003 = "error"\n')
    code, report = _report(project, "--fail-on", "error")
    assert code == 1
    _assert_fc003_alone(report, "error")


def test_fc001_suppressed_inline_leaves_simd_to_fc003(project: Path) -> None:
    manifest = project / "Cargo.toml"
    allow = "  # featcheck: allow(FC001) rayon measured slower for our 64x64 matrices"
    manifest.write_text(manifest.read_text().replace(DECLARATION, DECLARATION + allow))
    code, report = _report(project)
    assert code == 1 and report["suppressed"] == {"FC001": 1}
    _assert_fc003_alone(report)


def test_fc001_suppressed_by_an_allow_entry_leaves_simd_to_fc003(project: Path) -> None:
    (project / "featcheck.toml").write_text(
        '[[allow]]\ncode = "FC001"\ncrate = "burn-flex"\nreason = "single-threaded service"\n'
    )
    code, report = _report(project)
    assert code == 1 and report["suppressed"] == {"FC001": 1}
    _assert_fc003_alone(report)


def test_both_suppressed_is_clean_and_no_suppression_is_unused(project: Path) -> None:
    manifest = project / "Cargo.toml"
    allow = "  # featcheck: allow(FC001, FC003) no_std build"
    manifest.write_text(manifest.read_text().replace(DECLARATION, DECLARATION + allow))
    code, report = _report(project)
    assert code == 0 and report["findings"] == []
    assert report["suppressed"] == {"FC001": 1, "FC003": 1}


def test_an_allow_for_fc003_where_fc001_is_reported_stays_unused(project: Path) -> None:
    manifest = project / "Cargo.toml"
    allow = "  # featcheck: allow(FC003) bit-for-bit results"
    manifest.write_text(manifest.read_text().replace(DECLARATION, DECLARATION + allow))
    _, report = _report(project)
    assert sorted(_codes(report)) == [
        "FC001",
        "FC900",
    ]  # FC003 never stood: its allow matched nothing
    assert report["suppressed"] == {}


def test_fc001_ignored_changes_nothing_on_a_target_without_threads(project: Path) -> None:
    done = run_in_process(
        str(project), "--target", "wasm32-unknown-unknown", "--ignore", "FC001", columns=100
    )
    assert done.returncode == 0, done.stdout
    assert done.stdout.startswith("no findings")


def test_the_fix_for_fc003_adds_only_simd(project: Path) -> None:
    done = run_in_process(str(project), *HOST, "--ignore", "FC001", "--fix")
    assert done.returncode in (0, 1), done.stderr
    written = (project / "Cargo.toml").read_text()
    assert 'features = ["std", "flex", "simd"] }' in written


def test_saved_tree_text_with_fc001_ignored_reports_fc003() -> None:
    tree = str(TREES / "pitb-exec-cpu.normal.indent.txt")
    assert [
        f["code"]
        for f in json.loads(run_in_process("--tree", tree, "--format", "json").stdout)["findings"]
    ] == ["FC001"]
    ignored = run_in_process("--tree", tree, "--ignore", "FC001", "--format", "json")
    assert [f["code"] for f in json.loads(ignored.stdout)["findings"]] == ["FC003"]
