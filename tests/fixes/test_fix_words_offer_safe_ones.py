"""The words of a fix that CI reads (GitHub annotations, SARIF, JSON's `suggestion`) offer another
kind of change only where it is safe: removing the workspace entry's `default-features = false`
clears app's finding too, but gives tool, which has none, the entry's defaults (`heavy`)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_in_process import run_in_process
from synthetic_registry import PACKAGE, use_registry, write_project

pytestmark = [pytest.mark.usefixtures("remembered_cargo"), pytest.mark.cargo]

REGISTRY = {
    "heavy": {"1.0.0": {}},
    "gemmish": {"0.1.0": {"features": {"default": [], "rayon": []}}},
    "mid": {
        "0.1.0": {
            "features": {
                "default": ["fast", "big"],
                "fast": ["gemmish?/rayon"],
                "big": ["dep:heavy"],
                "names": ["dep:gemmish"],
            },
            "dependencies": {
                "gemmish": {"version": "0.1", "optional": True},
                "heavy": {"version": "1.0.0", "optional": True},
            },
        }
    },
}
ROOT = (
    '[workspace]\nmembers = ["app", "tool"]\nresolver = "2"\n\n[workspace.dependencies]\n'
    'mid = { version = "0.1", default-features = false }\n'
)


def test_an_unsafe_alternative_is_not_offered_beside_the_fix(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    use_registry(tmp_path_factory.mktemp("registry"), REGISTRY, monkeypatch)
    files = {
        "Cargo.toml": ROOT,
        "app/Cargo.toml": PACKAGE.format("app")
        + '[dependencies]\nmid = { workspace = true, features = ["names"] }\n',
        "app/src/main.rs": "",
        "tool/Cargo.toml": PACKAGE.format("tool") + "[dependencies]\nmid = { workspace = true }\n",
        "tool/src/main.rs": "",
    }
    project = write_project(tmp_path / "ws", files)

    report = run_in_process(str(project), "--format", "json")
    [finding] = json.loads(report.stdout)["findings"]
    assert finding["fix"]["safe"] and "fast" in finding["fix"]["description"]
    removing = [a for a in finding["alternatives"] if "default-features" in a["description"]]
    assert removing and not removing[0]["safe"] and "tool" in removing[0]["note"]
    assert "remove `default-features" not in finding["suggestion"]
    github = run_in_process(str(project), "--format", "github").stdout
    assert "fix: " in github and "remove `default-features" not in github
