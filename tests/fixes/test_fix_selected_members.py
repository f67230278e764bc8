"""With `-p` (or a member's directory), a fix that changes the build of a member the run does
not audit is judged on that build too, resolved for the purpose. Found on rerun:
`-p animated_urdf --diff` edited the workspace's ndarray entry, which the whole run refused
for the packages it added to re_server.

app1 and app2 both inherit helper from `[workspace.dependencies]`; helper's `fast` passes
rayon on to gemmish and turns on pool. app1 builds pool already and lacks rayon; app2 has
rayon and no pool: `fast` on the workspace's entry would give app2 pool unasked, and `fast` on
app1's own line gives app1 rayon and nothing else."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from cli_in_process import run_in_process
from synthetic_registry import GEMMISH_RULE as RULE
from synthetic_registry import POOLED_REGISTRY, use_registry

pytestmark = [pytest.mark.usefixtures("remembered_cargo"), pytest.mark.cargo]

REGISTRY = {
    "gemmish": {"0.1.0": {"features": {"default": [], "rayon": []}}},
    "pool": {"0.1.0": {}},
    "helper": {
        "0.1.0": {
            "features": {"fast": ["gemmish/rayon", "dep:pool"]},
            "dependencies": {
                "gemmish": {"version": "0.1", "default-features": False},
                "pool": {"version": "0.1", "optional": True},
            },
        }
    },
}
MEMBERS = {
    "app1": 'helper = { workspace = true }\npool = "0.1"\n',
    "app2": 'helper = { workspace = true }\ngemmish = { version = "0.1", features = ["rayon"] }\n',
}


@pytest.mark.parametrize("selected", [(), ("-p", "app1")])
def test_a_fix_gives_no_member_packages_unasked_whether_the_run_audits_it_or_not(
    selected: tuple[str, ...],
    tmp_path_factory: pytest.TempPathFactory,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    use_registry(tmp_path_factory.mktemp("registry"), REGISTRY, monkeypatch)
    project = tmp_path / "workspace"
    for name, dependencies in MEMBERS.items():
        (project / name / "src").mkdir(parents=True)
        (project / name / "src" / "main.rs").write_text("fn main() {}\n")
        (project / name / "Cargo.toml").write_text(
            f'[package]\nname = "{name}"\nversion = "0.1.0"\nedition = "2021"\n\n'
            f"[dependencies]\n{dependencies}"
        )
    (project / "Cargo.toml").write_text(
        '[workspace]\nresolver = "2"\nmembers = ["app1", "app2"]\n\n'
        '[workspace.dependencies]\nhelper = "0.1"\n'
    )
    (project / "featcheck.toml").write_text(RULE)
    subprocess.run(["cargo", "generate-lockfile", "--offline"], cwd=project, check=True)
    report = run_in_process(str(project), "--format", "json", *selected)
    assert report.returncode == 1, report.stderr
    [finding] = json.loads(report.stdout)["findings"]
    assert finding["member"] == "app1"
    assert finding["fix"]["safe"]
    assert [(e["file"], e["features"]) for e in finding["fix"]["edits"]] == [
        ("app1/Cargo.toml", ["fast"])
    ]
    before = (project / "app2" / "Cargo.toml").read_text(), (project / "Cargo.toml").read_text()
    fixed = run_in_process(str(project), "--fix", *selected)
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr
    tree = ["cargo", "tree", "-e", "normal", "-f", "{p} [{f}]", "--offline", "--prefix", "none"]
    for member, gemmish in (
        ("app1", "gemmish v0.1.0 [rayon]"),
        ("app2", "gemmish v0.1.0 [default,rayon]"),
    ):
        shown = subprocess.run([*tree, "-p", member], cwd=project, capture_output=True, text=True)
        assert gemmish in shown.stdout.splitlines(), shown.stdout
        assert ("pool v0.1.0 []" in shown.stdout.splitlines()) == (member == "app1")
    after = (project / "app2" / "Cargo.toml").read_text(), (project / "Cargo.toml").read_text()
    assert after == before


def test_a_fix_is_placed_where_the_whole_workspaces_run_places_it(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """git-cliff's shape: app builds gemmish through the library lib, whose own build has the
    same finding. The whole run edits lib's line, which clears both; `-p app` looked at app
    alone, counted one finding cleared either way, and put a new line in app's own manifest
    "to keep lib lean", though the edit adds nothing to lib's build but the feature it lacks."""
    use_registry(tmp_path_factory.mktemp("registry"), REGISTRY, monkeypatch)
    project = tmp_path / "workspace"
    _libraries(project, {"lib": 'helper = "0.1"\n', "app": 'lib = { path = "../lib" }\n'})
    whole = json.loads(run_in_process(str(project), "--format", "json").stdout)["findings"]
    [alone] = json.loads(run_in_process(str(project), "--format", "json", "-p", "app").stdout)[
        "findings"
    ]
    assert [f["member"] for f in whole] == ["app", "lib"]
    assert alone == whole[0]
    assert alone["location"]["file"] == "lib/Cargo.toml" and alone["placement"] == ""
    assert [e["file"] for e in alone["fix"]["edits"]] == ["lib/Cargo.toml"]


@pytest.mark.parametrize("selected", [(), ("-p", "nn")])
def test_a_library_that_offers_the_feature_is_asked_nothing_whether_audited_or_not(
    selected: tuple[str, ...],
    tmp_path_factory: pytest.TempPathFactory,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    """rwkv-rs: the library app depends on nn and offers gemmish's rayon through a feature of
    its own, left off. nn's fix turns rayon on and gives app's build pool: the whole run
    refused it, while `-p nn` judged app's build by nn's finding, called it safe, and `--fix`
    changed app's build."""
    use_registry(tmp_path_factory.mktemp("registry"), POOLED_REGISTRY, monkeypatch)
    project = tmp_path / "workspace"
    members = {
        "nn": 'gemmish = { version = "0.1", default-features = false }\n',
        "app": 'nn = { path = "../nn" }\ngemmish = "0.1"\n\n[features]\nrayon = ["gemmish/rayon"]\n',
    }
    _libraries(project, members)
    report = run_in_process(str(project), "--format", "json", *selected)
    [finding] = json.loads(report.stdout)["findings"]
    assert finding["member"] == "nn"
    assert finding["fix"] is None or not finding["fix"]["safe"]
    assert "to the build of app" in json.dumps(finding)


def _libraries(project: Path, members: dict[str, str]) -> None:
    """A workspace of library members, each with its `[dependencies]` text, the project rule,
    locked by cargo over the registry."""
    for name, dependencies in members.items():
        (project / name / "src").mkdir(parents=True)
        (project / name / "src" / "lib.rs").write_text("")
        (project / name / "Cargo.toml").write_text(
            f'[package]\nname = "{name}"\nversion = "0.1.0"\nedition = "2021"\n\n'
            f"[dependencies]\n{dependencies}"
        )
    listed = ", ".join(f'"{name}"' for name in members)
    (project / "Cargo.toml").write_text(f'[workspace]\nresolver = "2"\nmembers = [{listed}]\n')
    (project / "featcheck.toml").write_text(RULE)
    subprocess.run(["cargo", "generate-lockfile", "--offline"], cwd=project, check=True)
