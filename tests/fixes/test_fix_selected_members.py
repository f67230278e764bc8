"""With `-p`, a fix may not change a member the run does not audit: its build was never
resolved, so what the fix gives it is unknown. Found on rerun: `-p animated_urdf --diff`
edited the workspace's ndarray entry, which the whole run refuses for what it adds to
re_server. Here app1 and app2 both inherit helper from `[workspace.dependencies]`."""

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
    "gemmish": {"0.1.0": {"features": {"default": [], "rayon": []}}},
    "helper": {
        "0.1.0": {
            "features": {"fast": ["gemmish/rayon"]},
            "dependencies": {"gemmish": {"version": "0.1", "default-features": False}},
        }
    },
}


@pytest.mark.parametrize("selected", [(), ("-p", "app1")])
def test_a_fix_changes_no_member_the_run_does_not_audit(
    selected: tuple[str, ...],
    tmp_path_factory: pytest.TempPathFactory,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    use_registry(tmp_path_factory.mktemp("registry"), REGISTRY, monkeypatch)
    project = tmp_path / "workspace"
    for name in ("app1", "app2"):
        (project / name / "src").mkdir(parents=True)
        (project / name / "src" / "main.rs").write_text("fn main() {}\n")
        (project / name / "Cargo.toml").write_text(
            f'[package]\nname = "{name}"\nversion = "0.1.0"\nedition = "2021"\n\n'
            "[dependencies]\nhelper = { workspace = true }\n"
        )
    (project / "Cargo.toml").write_text(
        '[workspace]\nresolver = "2"\nmembers = ["app1", "app2"]\n\n'
        '[workspace.dependencies]\nhelper = "0.1"\n'
    )
    (project / "featcheck.toml").write_text(RULE)
    subprocess.run(["cargo", "generate-lockfile", "--offline"], cwd=project, check=True)
    report = run_in_process(str(project), "--format", "json", *selected)
    assert report.returncode == 1, report.stderr
    edited = {
        e["file"]
        for f in json.loads(report.stdout)["findings"]
        for e in f["fix"]["edits"]
        if f["fix"]["safe"]
    }
    # Both members ask for rayon: the workspace's entry. app1 alone: its own line.
    assert edited == ({"app1/Cargo.toml"} if selected else {"Cargo.toml"})
    before = (project / "app2" / "Cargo.toml").read_text(), (project / "Cargo.toml").read_text()
    fixed = run_in_process(str(project), "--fix", *selected)
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr
    tree = ["cargo", "tree", "-e", "normal", "-i", "gemmish", "-f", "{p} [{f}]", "--offline"]
    shown = subprocess.run([*tree, "-p", "app1"], cwd=project, capture_output=True, text=True)
    assert shown.stdout.splitlines()[0] == "gemmish v0.1.0 [rayon]"
    if selected:
        after = (project / "app2" / "Cargo.toml").read_text(), (project / "Cargo.toml").read_text()
        assert after == before
