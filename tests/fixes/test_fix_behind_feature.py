"""A new line goes behind a feature only where that feature is what brings the crate in.

`service`'s default feature `fast` turns on its optional `helper`, which depends on gemmish;
`frontend`, a plain dependency, brings gemmish anyway. A line behind `fast` would leave gemmish
without rayon in `cargo build --no-default-features`: the fix is a plain line (bevy_burn_human's
flate2 behind `native`, which bevy builds anyway, was the case found). With frontend gone,
`fast` alone brings gemmish, and the line goes behind it.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from cli_in_process import run_in_process
from synthetic_registry import GEMMISH_RULE as RULE
from synthetic_registry import project_rule, use_registry

pytestmark = [pytest.mark.usefixtures("remembered_cargo"), pytest.mark.cargo]

GEMMISH = {"version": "0.1", "default-features": False}
REGISTRY = {
    "gemmish": {"0.1.0": {"features": {"default": [], "rayon": []}}},
    "helper": {"0.1.0": {"dependencies": {"gemmish": GEMMISH}}},
    "frontend": {"0.1.0": {"dependencies": {"gemmish": GEMMISH}}},
}

MANIFEST = """\
[package]
name = "service"
version = "0.1.0"
edition = "2021"

[features]
default = ["fast"]
fast = ["dep:helper"]

[dependencies]
helper = {{ version = "0.1", optional = true }}
{frontend}
"""


def _gemmish(project: Path, *flags: str) -> str:
    tree = ["cargo", "tree", "-e", "normal", "-i", "gemmish", "-f", "{p} [{f}]", "--offline"]
    run = subprocess.run([*tree, *flags], cwd=project, capture_output=True, text=True, check=True)
    return run.stdout.splitlines()[0]


@pytest.mark.parametrize("frontend", [True, False])
def test_a_line_goes_behind_a_feature_only_where_the_feature_brings_the_crate(
    frontend: bool,
    tmp_path_factory: pytest.TempPathFactory,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    use_registry(tmp_path_factory.mktemp("registry"), REGISTRY, monkeypatch)
    project = tmp_path / "service"
    (project / "src").mkdir(parents=True)
    (project / "src" / "main.rs").write_text("fn main() {}\n")
    line = 'frontend = "0.1"' if frontend else ""
    (project / "Cargo.toml").write_text(MANIFEST.format(frontend=line))
    (project / "featcheck.toml").write_text(RULE)
    report = run_in_process(str(project), "--format", "json")
    assert report.returncode == 1, report.stderr
    [finding] = json.loads(report.stdout)["findings"]
    edits = [(e["action"], e["declaration"]) for e in finding["fix"]["edits"]]
    if frontend:
        assert edits == [("add-dependency", ["dependencies", "gemmish"])]
    else:
        assert edits == [
            ("add-optional-dependency", ["dependencies", "gemmish"]),
            ("add-feature-values", ["features", "fast"]),
        ]
    fixed = run_in_process(str(project), "--fix")
    assert fixed.returncode == 0, fixed.stderr
    assert _gemmish(project) == "gemmish v0.1.0 [rayon]"
    if frontend:  # built without `fast` too, and with rayon there as well
        assert _gemmish(project, "--no-default-features") == "gemmish v0.1.0 [rayon]"


TWO_RULES = RULE + "\n" + project_rule("ACME002", "gemmish", "simd")

TWO_OPTIONAL = """\
[package]
name = "service"
version = "0.1.0"
edition = "2021"

[features]
fast = ["dep:helper"]
extra = [{extra}]

[dependencies]
helper = {{ version = "0.1", optional = true }}
tool = {{ version = "0.1", optional = true }}
"""
"""`fast` turns on helper, `extra` tool (`"tool"`: through tool's implicit feature)."""


def _two_optional(
    factory: pytest.TempPathFactory,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    gemmish: dict[str, Any],
    extra: str,
) -> Path:
    """service with TWO_OPTIONAL's manifest (`extra` its values) and the project rule, over a
    registry of this `gemmish`, helper and tool (each depending on gemmish without defaults)."""
    tool = {"0.1.0": {"dependencies": {"gemmish": GEMMISH}}}
    registry = {"gemmish": gemmish, "helper": REGISTRY["helper"], "tool": tool}
    use_registry(factory.mktemp("registry"), registry, monkeypatch)
    project = tmp_path / "service"
    (project / "src").mkdir(parents=True)
    (project / "src" / "main.rs").write_text("fn main() {}\n")
    (project / "Cargo.toml").write_text(TWO_OPTIONAL.format(extra=extra))
    (project / "featcheck.toml").write_text(RULE)
    return project


def test_each_feature_fixes_write_one_line_per_new_dependency_even_behind_implicit_features(
    tmp_path_factory: pytest.TempPathFactory,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    """Found on burn_depth 0.4.2 with `--each-feature`: FC004 and FC005 each added burn-cpu (their
    own feature first) and `--fix` stopped at "Key burn-cpu already exists"; FC001's line went
    behind `burn-import`, an optional dependency's implicit feature, which [features] did not
    write ("cannot find the feature burn-import"). Here `fast` and `extra` (written) and `tool`
    (implicit, which `extra` names) each bring gemmish without rayon or simd. The line behind
    `tool` writes that feature (`tool = ["dep:tool", "dep:gemmish"]`), and serves `extra` too;
    the default build, which has no gemmish, keeps none."""
    gemmish = {"0.1.0": {"features": {"default": [], "rayon": [], "simd": []}}}
    project = _two_optional(tmp_path_factory, monkeypatch, tmp_path, gemmish, '"tool"')
    (project / "featcheck.toml").write_text(TWO_RULES)
    report = run_in_process(str(project), "--each-feature", "--format", "json")
    assert report.returncode == 1, report.stderr
    fixes = [f["fix"] for f in json.loads(report.stdout)["findings"]]
    assert all(fix["safe"] for fix in fixes), fixes
    behind = {
        (*e["declaration"], *e["features"])
        for fix in fixes
        for e in fix["edits"]
        if e["action"] == "add-feature-values"
    }
    assert behind == {
        ("features", "fast", "dep:gemmish"),
        ("features", "tool", "dep:tool", "dep:gemmish"),
    }
    fixed = run_in_process(str(project), "--each-feature", "--fix")
    assert fixed.returncode in (0, 1), fixed.stderr
    manifest = (project / "Cargo.toml").read_text()
    assert manifest.count("gemmish = ") == 1
    assert 'tool = ["dep:tool", "dep:gemmish"]' in manifest
    for feature in ("fast", "tool", "extra"):
        built = _gemmish(project, "--no-default-features", "--features", feature)
        assert built == "gemmish v0.1.0 [rayon,simd]", feature
    default = subprocess.run(
        ["cargo", "tree", "-e", "normal", "-i", "gemmish", "--offline"],
        cwd=project,
        capture_output=True,
    )
    assert default.returncode != 0  # no build without those features has gemmish


def test_a_finding_of_several_builds_gets_a_fix_that_clears_it_in_each(
    tmp_path_factory: pytest.TempPathFactory,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    """`--features fast` and `--features extra` each bring gemmish without rayon: one finding
    of both builds had its fix searched for the first alone (a line behind `extra`, after which
    `--features fast` still lacked rayon, though the report said `--fix` applies it). They bring
    it through other dependencies (helper, tool), so each build is a finding of its own now,
    and each fix clears its build."""
    project = _two_optional(
        tmp_path_factory, monkeypatch, tmp_path, REGISTRY["gemmish"], '"dep:tool"'
    )
    report = run_in_process(str(project), "--each-feature", "--format", "json")
    assert report.returncode == 1, report.stderr
    findings = json.loads(report.stdout)["findings"]
    behind = {
        tuple(tuple(c["features"]) for c in f["configurations"]): [
            e["declaration"] for e in f["fix"]["edits"] if e["action"] == "add-feature-values"
        ]
        for f in findings
        if f["fix"]["safe"]
    }
    assert behind == {(("extra",),): [["features", "extra"]], (("fast",),): [["features", "fast"]]}
    fixed = run_in_process(str(project), "--each-feature", "--fix")
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr
    for feature in ("fast", "extra"):
        built = _gemmish(project, "--no-default-features", "--features", feature)
        assert built == "gemmish v0.1.0 [rayon]", feature
