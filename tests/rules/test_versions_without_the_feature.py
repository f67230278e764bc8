"""A crate version that has no such feature is no finding: regex 1.2 has no `perf` (its lazy
DFA and prefilters need none), memchr 2.0 calls its `std` `use_std`. Found on ripgrep at
0e2f8f7b (2018): 21 findings whose fixes `--fix` could only fail to apply."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from cli_in_process import run_in_process
from synthetic_registry import GEMMISH_RULE as RULE
from synthetic_registry import use_registry

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
    project = tmp_path / "app"
    (project / "src").mkdir(parents=True)
    (project / "src" / "main.rs").write_text("fn main() {}\n")
    (project / "Cargo.toml").write_text(
        '[package]\nname = "app"\nversion = "0.1.0"\nedition = "2021"\n\n'
        f'[dependencies]\ngemmish = "{requirement}"\n'
    )
    (project / "featcheck.toml").write_text(RULE)
    subprocess.run(["cargo", "generate-lockfile", "--offline"], cwd=project, check=True)
    report = run_in_process(str(project), "--format", "json", *mode)
    assert report.returncode == (1 if flagged else 0), report.stdout + report.stderr
    found = [(f["crate_version"], f["feature"]) for f in json.loads(report.stdout)["findings"]]
    assert found == ([(requirement[1:], "rayon")] if flagged else [])
