"""A no_std library keeps its builds without std.

`nostdlib` builds `arr` without defaults and asks for arr's `std` with its own `std` feature (as
ort and gemm do with their dependencies). gemmish's `rayon` needs gemmish's `std`
(matrixmultiply's `threading` does). The fix was "add `threading` to the features of arr", on
arr's line: every build got gemmish's std, `--no-default-features --features arr` too, which a
no_std user then cannot build. It goes behind the library's `std` now. And a build without the
library's `std` is no_std on purpose: gemmish without rayon there is no finding (`--each-feature`
flagged it, with a fix that could only bring std).
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from cargo_tree_oracle import run_in_process_resolved_by
from cli_in_process import run_in_process
from synthetic_registry import PACKAGE, use_registry, write_project

pytestmark = [pytest.mark.usefixtures("remembered_cargo"), pytest.mark.cargo]

REGISTRY = {
    "gemmish": {"0.1.0": {"features": {"default": ["std"], "std": [], "rayon": ["std"]}}},
    "arr": {
        "0.1.0": {
            "features": {
                "default": ["std"],
                "std": ["gemmish/std"],
                "threading": ["gemmish/rayon"],
            },
            "dependencies": {"gemmish": {"version": "0.1", "default-features": False}},
        }
    },
}


def _manifest(optional: bool) -> str:
    if optional:
        features = 'default = ["std", "arr"]\nstd = ["arr?/std"]\narr = ["dep:arr"]\n'
        line = 'arr = { version = "0.1", default-features = false, optional = true }\n'
    else:
        features = 'default = ["std"]\nstd = ["arr/std"]\n'
        line = 'arr = { version = "0.1", default-features = false }\n'
    return PACKAGE.format("nostdlib") + f"[features]\n{features}\n[dependencies]\n{line}"


def _gemmish(project: Path, *flags: str) -> str:
    tree = ["cargo", "tree", "-e", "normal", "-i", "gemmish", "-f", "{p} [{f}]", "--offline"]
    run = subprocess.run([*tree, *flags], cwd=project, capture_output=True, text=True, check=True)
    return run.stdout.splitlines()[0]


@pytest.mark.parametrize("optional", [True, False], ids=["optional", "required"])
def test_a_fix_that_needs_std_goes_behind_the_librarys_std(
    optional: bool,
    tmp_path_factory: pytest.TempPathFactory,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    use_registry(tmp_path_factory.mktemp("registry"), REGISTRY, monkeypatch)
    files = {"src/lib.rs": "", "Cargo.toml": _manifest(optional)}
    project = write_project(tmp_path / "nostdlib", files)
    without_std = ["--no-default-features", "--features", "arr"] if optional else []
    without_std = without_std or ["--no-default-features"]

    report = run_in_process(str(project), "--each-feature", "--format", "json")
    assert report.returncode == 0, report.stdout + report.stderr  # a library's are infos
    [finding] = json.loads(report.stdout)["findings"]
    # Only builds with the library's std: none without it is flagged.
    assert all(
        "std" in c["features"] or not c["no_default_features"] for c in finding["configurations"]
    )
    value = "arr?/threading" if optional else "arr/threading"
    assert finding["fix"]["description"] == f'add "{value}" to `std` in [features]'
    assert finding["fix"]["safe"]

    fixed = run_in_process(str(project), "--each-feature", "--fix", "--fix-level", "info")
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr
    assert _gemmish(project) == "gemmish v0.1.0 [rayon,std]"
    assert _gemmish(project, *without_std) == "gemmish v0.1.0 []"
    again = run_in_process(str(project), "--each-feature", "--format", "json")
    assert json.loads(again.stdout)["findings"] == []


def test_a_new_line_that_needs_std_goes_behind_the_librarys_std(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """`front` turns nothing of gemmish's on: the fix is a line of the library's own, optional
    and turned on by its `std` (models' mobilenetv2-burn, `std = []`, with burn's memchr)."""
    registry = {
        **REGISTRY,
        "front": {
            "0.1.0": {"dependencies": {"gemmish": {"version": "0.1", "default-features": False}}}
        },
    }
    use_registry(tmp_path_factory.mktemp("registry"), registry, monkeypatch)
    manifest = PACKAGE.format("nostdlib") + (
        '[features]\ndefault = ["std"]\nstd = []\n\n[dependencies]\nfront = "0.1"\n'
    )
    project = write_project(tmp_path / "nostdlib", {"src/lib.rs": "", "Cargo.toml": manifest})

    report = run_in_process(str(project), "--each-feature", "--format", "json")
    [finding] = json.loads(report.stdout)["findings"]
    assert [c["no_default_features"] for c in finding["configurations"]] == [False, True]
    assert finding["fix"]["description"] == (
        'add gemmish = { version = "0.1.0", optional = true, default-features = false, '
        'features = ["rayon"] } to [dependencies] and add "dep:gemmish" to `std` in [features]'
    )
    fixed = run_in_process(str(project), "--each-feature", "--fix", "--fix-level", "info")
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr
    assert _gemmish(project) == "gemmish v0.1.0 [rayon,std]"
    assert _gemmish(project, "--no-default-features") == "gemmish v0.1.0 []"


def test_a_librarys_line_is_not_given_std_by_a_build_that_leaves_its_std_off(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The application builds the workspace's no_std library without its `std` (burn's wgpu
    examples build burn-autodiff so). The library's line, or a new plain line there, would force
    gemmish's std into every no_std build of the library: the fix is the application's own line
    (burn's workspace `half` entry was given `std` this way, with every crate that inherits it)."""
    use_registry(tmp_path_factory.mktemp("registry"), REGISTRY, monkeypatch)
    files = {
        "Cargo.toml": '[workspace]\nresolver = "2"\nmembers = ["nostdlib", "app"]\n',
        "nostdlib/Cargo.toml": _manifest(optional=False),
        "nostdlib/src/lib.rs": "",
        "app/Cargo.toml": PACKAGE.format("app")
        + '[dependencies]\nnostdlib = { path = "../nostdlib", default-features = false }\n',
        "app/src/main.rs": "fn main() {}\n",
    }
    project = write_project(tmp_path / "ws", files)

    report = run_in_process(str(project), "--format", "json", "-p", "app")
    [finding] = json.loads(report.stdout)["findings"]
    assert [edit["file"] for edit in finding["fix"]["edits"]] == ["app/Cargo.toml"]
    # Said as it is: a change in the library would need its std ("no change there clears it"
    # was said of bimm, whose own line clears it but gives it std).
    assert finding["placement"] == (
        "in app's own manifest: nostdlib is built without `std` here, which gemmish's `rayon` needs"
    )
    # cargo tree's builds (the oracle) name the library by name and version only: the same words.
    oracle = run_in_process_resolved_by("cargo", str(project), "--format", "json", "-p", "app")
    assert json.loads(oracle.stdout)["findings"] == [finding]
    fixed = run_in_process(str(project), "--fix", "-p", "app")
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr
    assert _gemmish(project, "-p", "app") == "gemmish v0.1.0 [rayon,std]"
    assert _gemmish(project, "-p", "nostdlib", "--no-default-features") == "gemmish v0.1.0 []"
