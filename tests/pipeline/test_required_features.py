"""A binary with `required-features` is built only where they are all on: arrow's `parquet`
has tools that need `cli`, so its default build makes only the library, whose findings are
infos (its users choose its features). It was a warning, and failed CI."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_in_process import run_in_process
from synthetic_registry import PACKAGE, use_registry, write_project

MAIN = "fn main() {}\n"

pytestmark = [pytest.mark.usefixtures("remembered_cargo"), pytest.mark.cargo]

REGISTRY = {"gemmish": {"0.1.0": {"features": {"default": [], "rayon": []}}}}

# The binary cargo discovers is the one `[[bin]]` names, by its name (src/main.rs is the
# package's) or by its path.
BINARIES = {
    "main": ("src/main.rs", 'name = "app"'),
    "bin-dir": ("src/bin/cli.rs", 'name = "app-cli"\npath = "src/bin/cli.rs"'),
}


@pytest.mark.parametrize("mode", [[], ["--no-exec"]], ids=["cargo", "no-exec"])
@pytest.mark.parametrize("layout", BINARIES)
@pytest.mark.parametrize(
    ("features", "severity", "returncode"),
    [([], "info", 0), (["--features", "cli"], "error", 1)],
    ids=["default-build-is-a-library", "cli-builds-the-binary"],
)
def test_a_binary_that_requires_features_counts_only_where_they_are_on(
    layout: str,
    features: list[str],
    severity: str,
    returncode: int,
    mode: list[str],
    tmp_path_factory: pytest.TempPathFactory,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    use_registry(tmp_path_factory.mktemp("registry"), REGISTRY, monkeypatch)
    binary, declared = BINARIES[layout]
    manifest = PACKAGE.format("app") + (
        f'[features]\ncli = []\n\n[[bin]]\n{declared}\nrequired-features = ["cli"]\n\n'
        '[dependencies]\ngemmish = "0.1.0"\n'
    )
    files = {"src/lib.rs": "", binary: MAIN, "Cargo.toml": manifest}
    project = write_project(tmp_path / "app", files)
    report = run_in_process(str(project), "--format", "json", *features, *mode)
    assert report.returncode == returncode, report.stdout + report.stderr
    [finding] = json.loads(report.stdout)["findings"]
    assert (finding["crate"], finding["severity"]) == ("gemmish", severity)
