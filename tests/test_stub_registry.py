"""The views of the stub registry (tests/stub_registry.py) resolve as the whole registry does,
and a view that lacks a package makes cargo fail, never pick something else."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable
from pathlib import Path

from stub_registry import lock_packages, reachable_packages
from support import WORKSPACES, RegistryViews


def _cargo(args: list[str], cwd: Path, home: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "CARGO_HOME": str(home), "CARGO_TERM_COLOR": "never"}
    return subprocess.run(["cargo", *args], cwd=cwd, env=env, capture_output=True, text=True)


def test_the_reachable_view_holds_what_a_feature_turns_on() -> None:
    locked = lock_packages(WORKSPACES / "direct-flex")
    assert "rayon-1.12.0" not in locked  # burn-flex's optional rayon is off in every build
    reachable = reachable_packages(locked)
    assert locked < reachable and "rayon-1.12.0" in reachable
    assert lock_packages(WORKSPACES / "workspace-inheritance" / "trainer") == lock_packages(
        WORKSPACES / "workspace-inheritance"
    )


def test_a_view_resolves_as_the_whole_registry(
    offline_cargo_home: Path,
    registry_views: RegistryViews,
    workspace_copy: Callable[[str], Path],
) -> None:
    workspace = workspace_copy("direct-flex")
    view = registry_views.home(workspace)
    tree = ["tree", "-e", "normal", "-f", "{p} [{f}]", "--features", "burn-flex/rayon"]
    trees = [_cargo(tree, workspace, home) for home in (offline_cargo_home, view)]
    assert [t.returncode for t in trees] == [0, 0], trees[1].stderr
    assert trees[0].stdout == trees[1].stdout
    assert "rayon v1.12.0" in trees[1].stdout
    # A lockfile made anew picks the same versions from the view as from the whole registry.
    locks = []
    for home in (offline_cargo_home, view):
        (workspace / "Cargo.lock").unlink()
        assert _cargo(["generate-lockfile"], workspace, home).returncode == 0
        locks.append((workspace / "Cargo.lock").read_text())
    assert locks[0] == locks[1]


def test_a_package_the_view_lacks_fails_cargo(
    registry_views: RegistryViews, workspace_copy: Callable[[str], Path]
) -> None:
    workspace = workspace_copy("direct-flex")
    only_lock = registry_views.home(workspace, lock_only=True)
    done = _cargo(["tree", "-e", "normal", "--features", "burn-flex/rayon"], workspace, only_lock)
    assert done.returncode != 0
    assert "no matching package found" in done.stderr
    assert "searched package name: `rayon`" in done.stderr
