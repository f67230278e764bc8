"""`--each-feature` places a finding once for the builds that reach the crate the same way.

argmin-math's `ndarray_0_15` and `ndarray_0_16` are two versions of ndarray behind two features;
both build the same matrixmultiply without `threading`. The builds were one finding, and the
only fix serving both was a new direct matrixmultiply line, which every build of the library
would get, with or without ndarray. Each path is its own finding now, fixed on its own line.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from cli_in_process import run_in_process
from synthetic_registry import PACKAGE, use_registry, write_project

pytestmark = [pytest.mark.usefixtures("remembered_cargo"), pytest.mark.cargo]

_ARRAY = {
    "features": {"default": [], "threading": ["gemmish/rayon"]},
    "dependencies": {"gemmish": {"version": "0.1", "default-features": False}},
}
REGISTRY = {
    "gemmish": {"0.1.0": {"features": {"default": [], "rayon": []}}},
    "arr": {"0.15.0": _ARRAY, "0.16.0": _ARRAY},
}
MANIFEST = PACKAGE.format("mathlib") + (
    "[dependencies]\n"
    'arr_15 = { package = "arr", version = "0.15", optional = true }\n'
    'arr_16 = { package = "arr", version = "0.16", optional = true }\n'
    "\n[features]\n"
    'old = ["arr_15"]\n'
    'new = ["arr_16"]\n'
)


def _gemmish(project: Path, feature: str) -> str:
    tree = ["cargo", "tree", "-e", "normal", "-i", "gemmish", "-f", "{p} [{f}]", "--offline"]
    flags = ["--no-default-features", "--features", feature]
    run = subprocess.run([*tree, *flags], cwd=project, capture_output=True, text=True, check=True)
    return run.stdout.splitlines()[0]


def test_builds_reaching_the_crate_through_other_dependencies_are_fixed_apart(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    use_registry(tmp_path_factory.mktemp("registry"), REGISTRY, monkeypatch)
    files = {"src/lib.rs": "", "Cargo.toml": MANIFEST}
    project = write_project(tmp_path / "mathlib", files)

    report = run_in_process(str(project), "--each-feature", "--format", "json")
    assert report.returncode == 0, report.stdout + report.stderr  # a library's are infos
    findings = json.loads(report.stdout)["findings"]
    placed = {
        f["location"]["line"]: (
            [c["features"] for c in f["configurations"]],
            f["fix"]["description"],
            f["fix"]["safe"],
        )
        for f in findings
    }
    assert placed == {
        7: ([["arr_15"], ["old"]], 'add "threading" to the features of arr_15', True),
        8: ([["arr_16"], ["new"]], 'add "threading" to the features of arr_16', True),
    }

    fixed = run_in_process(str(project), "--each-feature", "--fix", "--fix-level", "info")
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr
    assert _gemmish(project, "old") == "gemmish v0.1.0 [rayon]"
    assert _gemmish(project, "new") == "gemmish v0.1.0 [rayon]"
    # No build gets gemmish it did not have: the fix went on the optional lines.
    assert "gemmish" not in (project / "Cargo.toml").read_text()
    again = run_in_process(str(project), "--each-feature", "--format", "json")
    assert json.loads(again.stdout)["findings"] == []


# argmin's finitediff builds ndarray behind its `ndarray` feature, and its examples, binaries,
# turn that on and have the same finding in their default builds. finitediff's fix counted them
# as builds that lack what it adds: they ask for it, in the configuration they have it in.
ASKING_REGISTRY = {
    "rayonish": {"1.0.0": {}},
    "gemmish": {
        "0.1.0": {
            "features": {"default": [], "rayon": ["dep:rayonish"]},
            "dependencies": {"rayonish": {"version": "1", "optional": True}},
        }
    },
    "arr": {"0.16.0": _ARRAY},
}
WORKSPACE = '[workspace]\nresolver = "2"\nmembers = ["diff", "example"]\n'
DIFF = PACKAGE.format("diff") + '[dependencies]\narr = { version = "0.16", optional = true }\n'
EXAMPLE = PACKAGE.format("example") + (
    '[dependencies]\ndiff = { path = "../diff", features = ["arr"] }\narr = "0.16"\n'
)


def test_members_with_the_finding_in_another_configuration_ask_for_the_fix(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    use_registry(tmp_path_factory.mktemp("registry"), ASKING_REGISTRY, monkeypatch)
    files = {
        "Cargo.toml": WORKSPACE,
        "diff/Cargo.toml": DIFF,
        "diff/src/lib.rs": "",
        "example/Cargo.toml": EXAMPLE,
        "example/src/main.rs": "fn main() {}\n",
    }
    project = write_project(tmp_path / "argmin", files)
    report = run_in_process(str(project), "--each-feature", "--format", "json")
    findings = {f["member"]: f for f in json.loads(report.stdout)["findings"]}
    library = findings["diff"]
    assert [c["features"] for c in library["configurations"]] == [["arr"]]
    assert findings["example"]["configurations"][0]["features"] == []
    assert library["fix"]["description"] == 'add "threading" to the features of arr'
    assert library["fix"]["safe"], library["fix"]["note"]
