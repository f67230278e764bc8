"""featcheck's resolver against `cargo tree`, configuration by configuration: the fixture
workspaces whose backends hide behind crate features (test_configurations.py audits them
through the CLI), each member with each of cargo-hack's configurations and `--all-features`,
and flags naming a dependency's feature."""

from __future__ import annotations

import json
import os
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import tomlkit
from support import WORKSPACES, RegistryViews, cargo_environment
from test_resolver_differential import (
    _run,
    cargo_tree_graph,
    differences,
    host_triple,
    target_cfg,
    workspace_resolver,
)

from featcheck.featureset import FeatureSelection, each_feature, member_selection
from featcheck.resolution import resolve_configurations
from featcheck.workspace.cargo_metadata import workspace_from_metadata

OPTIONAL = WORKSPACES / "optional-backend"
BACKENDS = WORKSPACES / "backend-features"


def _differential_cases() -> list[tuple[Path, str, FeatureSelection]]:
    cases: list[tuple[Path, str, FeatureSelection]] = []
    for workspace, members in ((BACKENDS, ("app",)), (OPTIONAL, ("infer", "classic"))):
        for member in members:
            manifest = workspace / member / "Cargo.toml"
            if not manifest.exists():
                manifest = workspace / "Cargo.toml"
            features = tomlkit.parse(manifest.read_text()).unwrap().get("features", {})
            cases += [(workspace, member, s) for s in each_feature(FeatureSelection(), features)]
            cases.append((workspace, member, FeatureSelection(all_features=True)))
    cases += [
        (BACKENDS, "app", FeatureSelection.of(["burn/rayon", "app/backend-flex"])),
        (BACKENDS, "app", FeatureSelection.of(["backend-flex"], all_features=True)),
        (OPTIONAL, "infer", FeatureSelection.of(["burn/simd"])),
        (OPTIONAL, "infer", FeatureSelection.of(["burn?/simd"])),
        (OPTIONAL, "classic", FeatureSelection.of(["burn-ndarray/multi-threads"])),
    ]
    return cases


def test_each_configuration_resolves_as_cargo_tree_does(registry_views: RegistryViews) -> None:
    """featcheck's resolver over one `cargo metadata --all-features` equals
    `cargo tree -e normal -p MEMBER --target T <flags>` for every configuration."""
    cases = _differential_cases()
    targets = list(dict.fromkeys([host_triple(), "aarch64-apple-darwin"]))
    mismatches: list[str] = []
    compared = 0
    for workspace in dict.fromkeys(w for w, _, _ in cases):
        asked = [(m, s) for w, m, s in cases if w == workspace]
        compared += len(asked) * len(targets)
        mismatches += _workspace_mismatches(workspace, asked, targets, registry_views)
    assert compared == len(cases) * len(targets) >= 40
    assert mismatches == []


def _workspace_mismatches(
    workspace: Path,
    asked: list[tuple[str, FeatureSelection]],
    targets: list[str],
    registry_views: RegistryViews,
) -> list[str]:
    """How featcheck differs from cargo tree on each member and configuration `asked` of one
    workspace, on each target."""
    # `burn/rayon` and the like turn on optional dependencies: the reachable view. Member
    # features alone select nothing the lockfile lacks (cargo wrote it with every member
    # feature on): cargo tree asks the lockfile's packages, which it loads faster. A package
    # missing there would fail cargo, not change its answer. Two homes over each view: cargo
    # serializes the processes that share one, and the `cargo tree` calls run two at a time
    # (this one test is its file, which runs on one worker, most often last).
    envs = {
        (lock_only, slot): {
            **os.environ,
            **cargo_environment(registry_views.home(workspace, lock_only=lock_only, slot=slot)),
        }
        for lock_only in (False, True)
        for slot in (0, 1)
    }
    # As the audit asks: every member feature, and the `dependency/feature` values.
    extra = FeatureSelection.of(v for _, s in asked for v in s.features if "/" in v).cargo_args()
    metadata = json.loads(
        _run(
            ["cargo", "metadata", "--format-version", "1", "--all-features", *extra],
            workspace,
            envs[(False, 0)],
        )
    )
    model = workspace_from_metadata(metadata)
    members = {member.name: member for member in model.members}
    ids = {name: member.id for name, member in members.items()}
    # As the audit does: what cargo applies to the member (`app/f` becomes `f`).
    applied = {(m, s): member_selection(s, members[m])[0] for m, s in asked}
    graphs = resolve_configurations(
        model,
        [(ids[m], a) for (m, _), a in applied.items()],
        [target_cfg(t) for t in targets],
        workspace_resolver(workspace, metadata),
    )

    def compare(job: tuple[int, tuple[str, FeatureSelection, str]]) -> list[str]:
        number, (member, selection, target) = job
        only_members = not any("/" in value for value in selection.features)
        env = envs[(only_members, number % 2)]
        expected = cargo_tree_graph(workspace, member, target, env, selection.cargo_args())
        ours = graphs[(ids[member], target, applied[(member, selection)])]
        label = f"{workspace.name} {member} {target} {selection.label}"
        return [f"{label}: {d}" for d in differences(expected, ours)]

    jobs = enumerate((m, s, t) for m, s in asked for t in targets)
    with ThreadPoolExecutor(max_workers=2) as pool:
        return [line for lines in pool.map(compare, jobs) for line in lines]
