"""A member that is itself the crate a rule names is built with the features its user asked
for: gemm's own workspace, `-p gemm --no-default-features`, was flagged "gemm is built without
`rayon`" with a fix telling gemm to depend on gemm. Its users' builds are still audited."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from cli_in_process import run_in_process
from synthetic_registry import GEMMISH_RULE as RULE
from synthetic_registry import use_registry

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
    project = tmp_path / "ws"
    for member, source in (("gemmish", "lib.rs"), ("app", "main.rs")):
        (project / member / "src").mkdir(parents=True)
        (project / member / "src" / source).write_text(
            "fn main() {}\n" if source == "main.rs" else ""
        )
    (project / "Cargo.toml").write_text(
        '[workspace]\nmembers = ["gemmish", "app"]\nresolver = "2"\n'
    )
    (project / "gemmish" / "Cargo.toml").write_text(
        '[package]\nname = "gemmish"\nversion = "0.1.0"\nedition = "2021"\n\n'
        '[features]\ndefault = []\nrayon = ["dep:pool"]\n\n'
        '[dependencies]\npool = { version = "1.0.0", optional = true }\n'
    )
    (project / "app" / "Cargo.toml").write_text(
        '[package]\nname = "app"\nversion = "0.1.0"\nedition = "2021"\n\n'
        '[dependencies]\ngemmish = { path = "../gemmish" }\n'
    )
    (project / "featcheck.toml").write_text(RULE)
    subprocess.run(["cargo", "generate-lockfile", "--offline"], cwd=project, check=True)
    report = run_in_process(str(project), "--format", "json", *mode)
    assert report.returncode == 1, report.stdout + report.stderr
    found = [(f["member"], f["crate"]) for f in json.loads(report.stdout)["findings"]]
    assert found == [("app", "gemmish")]
