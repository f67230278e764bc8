"""A fix need not deliver what a library leaves to its users.

`lib` offers gemmish's `rayon` through its own `fast`, left off: that finding is its users'
choice and not reported (`offered_by_library`). Its `simd` finding is reported, and its fix
was checked against every rule for gemmish, `rayon`'s too: "add `simd`" left `rayon` missing,
so no fix held (burn leaves burn-cpu's `autotune` to its users, and FC004's `fusion` found no
fix in `burn --features burn-cpu`).
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from cli_in_process import run_in_process
from synthetic_registry import GEMMISH_RULE, PACKAGE, use_registry, write_project

pytestmark = [pytest.mark.usefixtures("remembered_cargo"), pytest.mark.cargo]

REGISTRY = {"gemmish": {"0.1.0": {"features": {"default": [], "rayon": [], "simd": []}}}}
SIMD_RULE = GEMMISH_RULE.replace("ACME001", "ACME002").replace("rayon", "simd")
MANIFEST = PACKAGE.format("lib") + (
    '[features]\nfast = ["gemmish/rayon"]\n\n[dependencies]\n'
    'gemmish = { version = "0.1", default-features = false }\n'
)


def test_a_fix_is_not_held_to_what_the_library_leaves_to_its_users(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    use_registry(tmp_path_factory.mktemp("registry"), REGISTRY, monkeypatch)
    project = write_project(tmp_path / "lib", {"src/lib.rs": "", "Cargo.toml": MANIFEST})
    rules = (project / "featcheck.toml").read_text()
    (project / "featcheck.toml").write_text(rules + "\n" + SIMD_RULE)

    report = run_in_process(str(project), "--format", "json")
    assert report.returncode == 0, report.stdout + report.stderr  # a library's are infos
    [finding] = json.loads(report.stdout)["findings"]
    assert (finding["code"], finding["feature"]) == ("ACME002", "simd")
    assert finding["fix"]["description"] == 'add "simd" to the features of gemmish'
    assert finding["fix"]["safe"]

    fixed = run_in_process(str(project), "--fix", "--fix-level", "info")
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr
    tree = ["cargo", "tree", "-e", "normal", "-i", "gemmish", "-f", "{p} [{f}]", "--offline"]
    done = subprocess.run(tree, cwd=project, capture_output=True, text=True, check=True)
    assert done.stdout.splitlines()[0] == "gemmish v0.1.0 [simd]"
