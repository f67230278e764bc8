"""A dependency declared twice, plainly and in a `[target.X]` table: the fix edits the target
line, and a new dependency the fix needs goes in that line's table, so no other platform's
build changes.

`mid`'s `names` brings gemmish and passes no `rayon` on, so only a new line on gemmish helps.
Written in plain `[dependencies]`, it built gemmish on wasm32, where the member never had it.
`core` always builds gemmish and passes `rayon` on through `fast`: asked on the plain line, it
gave wasm32 `rayon` (ndarray's `matrixmultiply-threading`: five packages more on wasm32).
Where only a plain line is there, a fix that changes an audited target's build where the rule
does not apply (wasm32 has no threads: gemmish's `rayon` brings its thread pool there) is not
applied, and its note names that target.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
from cli_in_process import run_in_process
from synthetic_registry import (
    GEMMISH_RULE,
    PACKAGE,
    POOLED_REGISTRY,
    use_registry,
    write_project,
)

pytestmark = [pytest.mark.usefixtures("remembered_cargo"), pytest.mark.cargo]

REGISTRY = {
    **POOLED_REGISTRY,  # gemmish, whose `rayon` brings its thread pool
    "mid": {
        "0.1.0": {
            "features": {"default": [], "names": ["dep:gemmish"]},
            "dependencies": {"gemmish": {"version": "0.1", "optional": True}},
        }
    },
    # encoding_rs's shape: simdutf8 only on some targets, through its own `[target.X]` table.
    "enc": {"0.1.0": {"target": {"cfg(unix)": {"gemmish": {"version": "0.1"}}}}},
    "core": {
        "0.1.0": {
            "features": {"default": [], "std": [], "fast": ["gemmish/rayon"]},
            "dependencies": {"gemmish": {"version": "0.1"}},
        }
    },
}
UNIX = "cfg(unix)"


def _twice(key: str, feature: str) -> str:
    """`key` declared plainly, and again in the `cfg(unix)` table with `feature`."""
    return (
        f'[dependencies]\n{key} = {{ version = "0.1" }}\n\n'
        f"[target.'{UNIX}'.dependencies]\n"
        f'{key} = {{ version = "0.1", features = ["{feature}"] }}\n'
    )


@pytest.fixture
def app(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> Callable[[str], Path]:
    """Makes the binary `app` with these tables after its [package], locked over REGISTRY."""
    use_registry(tmp_path_factory.mktemp("registry"), REGISTRY, monkeypatch)

    def make(tables: str) -> Path:
        files = {"src/main.rs": "", "Cargo.toml": PACKAGE.format("app") + tables}
        return write_project(tmp_path / "app", files)

    return make


def _gemmish(project: Path, target: str) -> list[str]:
    """What cargo builds of gemmish for the target: its lines, none where it is not built."""
    tree = ["cargo", "tree", "-e", "normal", "--target", target, "-f", "{p} [{f}]", "--locked"]
    done = subprocess.run(tree, cwd=project, capture_output=True, text=True, check=True)
    return [line for line in done.stdout.splitlines() if "gemmish" in line]


def test_the_target_line_that_brings_the_crate_takes_the_finding_and_the_new_line(
    app: Callable[[str], Path],
) -> None:
    project = app(_twice("mid", "names"))
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


def test_a_fix_both_lines_could_take_goes_on_the_target_line(app: Callable[[str], Path]) -> None:
    project = app(_twice("core", "std"))

    report = run_in_process(str(project), "--format", "json")
    [finding] = json.loads(report.stdout)["findings"]
    assert finding["location"]["line"] == 10
    [edit] = finding["fix"]["edits"]
    assert (edit["declaration"], edit["features"]) == (
        ["target", UNIX, "dependencies", "core"],
        ["fast"],
    )

    fixed = run_in_process(str(project), "--fix")
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr
    assert all("rayon" in line for line in _gemmish(project, "x86_64-unknown-linux-gnu"))
    [wasm] = _gemmish(project, "wasm32-unknown-unknown")
    assert "rayon" not in wasm


def test_a_fix_that_changes_a_target_where_the_rule_does_not_apply_is_not_applied(
    app: Callable[[str], Path],
) -> None:
    project = app('[dependencies]\ncore = { version = "0.1" }\n')
    threads = GEMMISH_RULE + 'target-needs = ["threads"]\n'
    (project / "featcheck.toml").write_text(threads)
    targets = ["--target", "x86_64-unknown-linux-gnu", "--target", "wasm32-unknown-unknown"]

    report = run_in_process(str(project), *targets, "-v", "--format", "json")
    [finding] = json.loads(report.stdout)["findings"]
    assert finding["target"] == "x86_64-unknown-linux-gnu"
    assert not finding["fix"]["safe"]
    assert "to the build of app (wasm32-unknown-unknown" in finding["fix"]["note"]

    fixed = run_in_process(str(project), *targets, "--fix")
    assert "no fix applied" in fixed.stderr, fixed.stderr
    [wasm] = _gemmish(project, "wasm32-unknown-unknown")
    assert "rayon" not in wasm


def test_a_new_line_for_a_crate_a_dependency_brings_on_some_targets_goes_in_their_table(
    app: Callable[[str], Path],
) -> None:
    project = app('[dependencies]\nenc = { version = "0.1" }\n')
    assert _gemmish(project, "wasm32-unknown-unknown") == []

    report = run_in_process(str(project), "--format", "json")
    [finding] = json.loads(report.stdout)["findings"]
    [edit] = finding["fix"]["edits"]
    assert edit["declaration"] == ["target", UNIX, "dependencies", "gemmish"]

    fixed = run_in_process(str(project), "--fix")
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr
    assert all("rayon" in line for line in _gemmish(project, "x86_64-unknown-linux-gnu"))
    assert _gemmish(project, "wasm32-unknown-unknown") == []
