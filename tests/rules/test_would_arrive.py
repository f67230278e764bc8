"""How a missing feature would arrive, read off the resolver's own steps.

`frontend`'s feature `fast` turns on its optional `helper`, and helper's own line asks for
gemmish's `rayon`: turning `fast` on builds helper, which switches rayon on (`cargo tree -e
features -i gemmish -p service --features frontend/fast` shows `gemmish feature "rayon"` under
helper). Member `batch` asks for `fast`, so helper is in the resolve; `service` does not. A
walk of the feature tables alone never followed a package being built: it said that no feature
of frontend turns rayon on, and offered no fix through frontend.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from cli_in_process import run_in_process
from synthetic_registry import use_registry

pytestmark = [pytest.mark.usefixtures("remembered_cargo"), pytest.mark.cargo]

REGISTRY = {
    "gemmish": {"0.1.0": {"features": {"default": [], "rayon": []}}},
    "helper": {
        "0.1.0": {
            "dependencies": {
                "gemmish": {"version": "0.1", "default-features": False, "features": ["rayon"]}
            }
        }
    },
    "frontend": {
        "0.1.0": {
            "features": {"default": [], "fast": ["dep:helper"]},
            "dependencies": {
                "helper": {"version": "0.1", "optional": True},
                "gemmish": {"version": "0.1", "default-features": False},
            },
        }
    },
}

WORKSPACE = """\
[workspace]
resolver = "2"
members = ["service", "batch"]
"""

MEMBER = """\
[package]
name = "{name}"
version = "0.1.0"
edition = "2021"

[dependencies]
frontend = {declaration}
"""

RULE = """\
[[rule]]
code = "ACME001"
name = "gemmish-without-rayon"
severity = "error"
crates = ["gemmish"]
feature = "rayon"
used-when = { reachable = true }
"""


@pytest.fixture
def frontend_cargo(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Path]:
    """Every cargo featcheck starts resolves against this test's registry, offline."""
    yield use_registry(tmp_path_factory.mktemp("frontend-registry"), REGISTRY, monkeypatch)


def test_a_feature_that_builds_a_dependency_passes_its_line_on(
    frontend_cargo: Path, tmp_path: Path
) -> None:
    project = tmp_path / "workspace"
    members = {"service": '"0.1"', "batch": '{ version = "0.1", features = ["fast"] }'}
    for name, declaration in members.items():
        (project / name / "src").mkdir(parents=True)
        (project / name / "src" / "main.rs").write_text("fn main() {}\n")
        (project / name / "Cargo.toml").write_text(
            MEMBER.format(name=name, declaration=declaration)
        )
    (project / "Cargo.toml").write_text(WORKSPACE)
    (project / "featcheck.toml").write_text(RULE)
    report = run_in_process(str(project), "--format", "json")
    assert report.returncode == 1, report.stderr
    [finding] = json.loads(report.stdout)["findings"]
    assert finding["chain"][0] == (
        "would arrive through frontend fast → helper → gemmish/rayon, "
        "not enabled at service/Cargo.toml:7"
    )
    alternatives = [fix["description"] for fix in finding["alternatives"]]
    assert 'add "fast" to the features of frontend' in alternatives
