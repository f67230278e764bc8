"""The views of the stub registry (tests/stub_registry.py) resolve as the whole registry does,
and a view that lacks a package makes cargo fail, never pick something else; the synthetic burn
that stands in for the stubs where the graph plays no part gives the same finding and edit."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

from hostile_support import TEMPLATE, SmallBurn, in_process_with, make_checkout
from stub_registry import lock_packages, reachable_packages
from support import WORKSPACES, RegistryViews, write_offline_cargo_home


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


def test_the_synthetic_burn_gives_the_templates_finding_and_edit(
    small_burn: SmallBurn, registry_views: RegistryViews, tmp_path: Path
) -> None:
    """hostile_support.SMALL_BURN stands in for burn's stubs in tests where the graph plays no
    part: the template audits over it with the same finding, at the same place, fixed by the
    same edit, confirmed and safe (only what the fix adds to the build and Cargo.lock
    differs)."""

    def audit(template: Path, registry: Path) -> list[dict[str, Any]]:
        checkout = make_checkout(tmp_path / registry.name, template=template)
        home = write_offline_cargo_home(tmp_path / registry.name / "home", registry)
        environment = {"CARGO_HOME": str(home), "XDG_CACHE_HOME": str(home / "cache")}
        done = in_process_with([str(checkout.project), "--format", "json"], environment)
        assert done.returncode == 1, done.stderr
        findings = json.loads(done.stdout)["findings"]
        for finding in findings:
            finding["fix"].pop("added_packages")
            finding["fix"].pop("lockfile_added_packages")
        return findings

    stubs = audit(TEMPLATE, registry_views.registry(TEMPLATE))
    synthetic = audit(small_burn.template, small_burn.registry)
    kept = ("code", "member", "crate", "crate_version", "feature", "location", "fix")
    assert [{k: f[k] for k in kept} for f in synthetic] == [{k: f[k] for k in kept} for f in stubs]
    assert [f["code"] for f in stubs] == ["FC001"]
