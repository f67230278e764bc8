"""A dependency declared twice, plainly and in a `[target.X]` table, where only the target line
asks for the feature that brings the flagged crate: the finding points at that line, and a new
dependency the fix needs goes in that line's table, so no other platform gains the crate.

`mid`'s `names` brings gemmish and passes no `rayon` on, so only a new line on gemmish helps.
Written in plain `[dependencies]`, it built gemmish on wasm32, where the member never had it.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from cli_in_process import run_in_process
from synthetic_registry import PACKAGE, use_registry, write_project

pytestmark = [pytest.mark.usefixtures("remembered_cargo"), pytest.mark.cargo]

REGISTRY = {
    "gemmish": {"0.1.0": {"features": {"default": [], "rayon": []}}},
    "mid": {
        "0.1.0": {
            "features": {"default": [], "names": ["dep:gemmish"]},
            "dependencies": {"gemmish": {"version": "0.1", "optional": True}},
        }
    },
}
UNIX = "cfg(unix)"
MANIFEST = PACKAGE.format("app") + (
    '[dependencies]\nmid = { version = "0.1" }\n\n'
    f"[target.'{UNIX}'.dependencies]\n"
    'mid = { version = "0.1", features = ["names"] }\n'
)


def _gemmish(project: Path, target: str) -> list[str]:
    """What cargo builds of gemmish for the target: its lines, none where it is not built."""
    tree = ["cargo", "tree", "-e", "normal", "--target", target, "-f", "{p} [{f}]", "--locked"]
    done = subprocess.run(tree, cwd=project, capture_output=True, text=True, check=True)
    return [line for line in done.stdout.splitlines() if "gemmish" in line]


def test_the_target_line_that_brings_the_crate_takes_the_finding_and_the_new_line(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    use_registry(tmp_path_factory.mktemp("registry"), REGISTRY, monkeypatch)
    project = write_project(tmp_path / "app", {"src/main.rs": "", "Cargo.toml": MANIFEST})
    assert _gemmish(project, "wasm32-unknown-unknown") == []

    report = run_in_process(str(project), "--format", "json")
    [finding] = json.loads(report.stdout)["findings"]
    assert (finding["code"], finding["location"]["line"]) == ("ACME001", 10)
    [edit] = finding["fix"]["edits"]
    assert (edit["action"], edit["declaration"]) == (
        "add-dependency",
        ["target", UNIX, "dependencies", "gemmish"],
    )
    text = run_in_process(str(project)).stdout
    assert "Cargo.toml:10:" in text and f"to [target.'{UNIX}'.dependencies]" in text

    fixed = run_in_process(str(project), "--fix")
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr
    built = _gemmish(project, "x86_64-unknown-linux-gnu")
    assert built and all("rayon" in line.rsplit("[", 1)[1] for line in built), built
    assert _gemmish(project, "wasm32-unknown-unknown") == []
