"""A member that is itself the crate a rule names is built with the features its user asked
for: gemm's own workspace, `-p gemm --no-default-features`, was flagged "gemm is built without
`rayon`" with a fix telling gemm to depend on gemm. Its users' builds are still audited."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_in_process import run_in_process
from synthetic_registry import PACKAGE, use_registry, write_project

MAIN = "fn main() {}\n"

pytestmark = [pytest.mark.usefixtures("remembered_cargo"), pytest.mark.cargo]


@pytest.mark.parametrize("mode", [[], ["--no-exec"]], ids=["cargo", "no-exec"])
def test_the_crate_itself_is_no_finding_and_its_users_are(
    mode: list[str],
    tmp_path_factory: pytest.TempPathFactory,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    # Its `rayon` brings a package, as gemm's does: no feature that only passes one on.
    use_registry(tmp_path_factory.mktemp("registry"), {"pool": {"1.0.0": {}}}, monkeypatch)
    gemmish = PACKAGE.format("gemmish") + (
        '[features]\ndefault = []\nrayon = ["dep:pool"]\n\n'
        '[dependencies]\npool = { version = "1.0.0", optional = true }\n'
    )
    app = PACKAGE.format("app") + '[dependencies]\ngemmish = { path = "../gemmish" }\n'
    files = {
        "Cargo.toml": '[workspace]\nmembers = ["gemmish", "app"]\nresolver = "2"\n',
        "gemmish/Cargo.toml": gemmish,
        "gemmish/src/lib.rs": "",
        "app/Cargo.toml": app,
        "app/src/main.rs": MAIN,
    }
    project = write_project(tmp_path / "ws", files)
    report = run_in_process(str(project), "--format", "json", *mode)
    assert report.returncode == 1, report.stdout + report.stderr
    found = [(f["member"], f["crate"]) for f in json.loads(report.stdout)["findings"]]
    assert found == [("app", "gemmish")]
