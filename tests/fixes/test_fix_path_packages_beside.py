"""A fix is resolved on a copy of the workspace, and a path package outside the workspace's
directory goes into the copy beside it, where `path = "../lib"` finds it: found on candle's
candle-onnx (excluded from candle's workspace, `path = "../candle-core"`), whose every fix
cargo "could not resolve" ("failed to read /tmp/featcheck-fix-.../candle-core/Cargo.toml").
Only a package inside the checkout is copied: featcheck reads nothing of the user's beyond it.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from cli_in_process import run_in_process
from synthetic_registry import GEMMISH_RULE as RULE
from synthetic_registry import use_registry

# Real cargo each time: the answers a session remembers (tests/cargo_memo.py) write the tree's
# own path back, and a package beside it keeps the path of the copy cargo first answered for.
pytestmark = pytest.mark.cargo

REGISTRY = {"gemmish": {"0.1.0": {"features": {"default": [], "rayon": []}}}}
GEMMISH = 'gemmish = { version = "0.1", default-features = false }\n'


def _package(directory: Path, name: str, dependencies: str, source: str) -> None:
    (directory / "src").mkdir(parents=True)
    (directory / "src" / source).write_text("fn main() {}\n" if source == "main.rs" else "")
    (directory / "Cargo.toml").write_text(
        f'[package]\nname = "{name}"\nversion = "0.1.0"\nedition = "2021"\n\n'
        f"[dependencies]\n{dependencies}"
    )


@pytest.mark.parametrize("inside", [True, False])
def test_a_path_package_beside_the_workspace_is_copied_where_it_lies_in_the_checkout(
    inside: bool,
    tmp_path_factory: pytest.TempPathFactory,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    use_registry(tmp_path_factory.mktemp("registry"), REGISTRY, monkeypatch)
    app, lib = tmp_path / "checkout" / "app", tmp_path / "checkout" / "lib"
    # The checkout is the nearest directory with a .git: the one holding both, or app alone.
    (app.parent if inside else app).joinpath(".git").mkdir(parents=True)
    _package(app, "app", 'lib = { path = "../lib" }\n', "main.rs")
    _package(lib, "lib", GEMMISH, "lib.rs")
    (app / "featcheck.toml").write_text(RULE)
    subprocess.run(["cargo", "generate-lockfile", "--offline"], cwd=app, check=True)
    before = {path: path.read_text() for path in (app / "Cargo.toml", lib / "Cargo.toml")}
    fixed = run_in_process(str(app), "--fix")
    assert "featcheck-fix-" not in fixed.stderr  # no path of the copy reaches the user
    if not inside:
        # lib lies outside the checkout: not copied, nor edited (linked where the copy finds
        # it, for cargo to read): app's own new line is the fix.
        assert fixed.returncode == 0, fixed.stdout + fixed.stderr
        assert (lib / "Cargo.toml").read_text() == before[lib / "Cargo.toml"]
        assert "gemmish = {" in (app / "Cargo.toml").read_text()
        return
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr
    # lib's own line is the fix: edited in the copy, resolved there, then written.
    assert (lib / "Cargo.toml").read_text() == before[lib / "Cargo.toml"].replace(
        "default-features = false }", 'default-features = false, features = ["rayon"] }'
    )
    tree = subprocess.run(
        ["cargo", "tree", "-e", "normal", "-i", "gemmish", "-f", "{p} [{f}]", "--offline"],
        cwd=app,
        capture_output=True,
        text=True,
        check=True,
    )
    assert tree.stdout.splitlines()[0] == "gemmish v0.1.0 [rayon]"
