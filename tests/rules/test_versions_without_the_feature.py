"""A crate version that has no such feature is no finding: regex 1.2 has no `perf` (its lazy
DFA and prefilters need none), memchr 2.0 calls its `std` `use_std`. Found on ripgrep at
0e2f8f7b (2018): 21 findings whose fixes `--fix` could only fail to apply."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_in_process import run_in_process
from synthetic_registry import PACKAGE, use_registry, write_project

MAIN = "fn main() {}\n"

pytestmark = [pytest.mark.usefixtures("remembered_cargo"), pytest.mark.cargo]

REGISTRY = {
    "gemmish": {
        "0.0.9": {"features": {"default": []}},
        "0.1.0": {"features": {"default": [], "rayon": []}},
    }
}


@pytest.mark.parametrize("mode", [[], ["--no-exec"]])
@pytest.mark.parametrize(("requirement", "flagged"), [("=0.0.9", False), ("=0.1.0", True)])
def test_a_version_without_the_feature_is_no_finding(
    requirement: str,
    flagged: bool,
    mode: list[str],
    tmp_path_factory: pytest.TempPathFactory,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    use_registry(tmp_path_factory.mktemp("registry"), REGISTRY, monkeypatch)
    manifest = PACKAGE.format("app") + f'[dependencies]\ngemmish = "{requirement}"\n'
    project = write_project(tmp_path / "app", {"src/main.rs": MAIN, "Cargo.toml": manifest})
    report = run_in_process(str(project), "--format", "json", *mode)
    assert report.returncode == (1 if flagged else 0), report.stdout + report.stderr
    found = [(f["crate_version"], f["feature"]) for f in json.loads(report.stdout)["findings"]]
    assert found == ([(requirement[1:], "rayon")] if flagged else [])
