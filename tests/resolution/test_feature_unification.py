"""Features unified over the whole workspace (`resolver.feature-unification = "workspace"`,
RFC 3692) equal what nightly cargo's `cargo tree` prints.

Only nightly cargo honours the key, and only with the unstable flag; `cargo +nightly tree -p
MEMBER` then selects every member and prints each one's tree, of which the audited member's
build is what its root reaches. Skipped where no nightly toolchain is installed.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from cargo_tree_oracle import reachable_part
from nightly_support import needs_nightly
from support import WORKSPACES, RegistryViews, cargo_environment
from test_resolver_differential import (
    _run,
    audited_targets,
    cargo_metadata,
    differences,
    host_triple,
    target_cfg,
    workspace_resolver,
)

from featcheck.cargo.tree_text import ParsedTree, parse_tree_text
from featcheck.featureset import FeatureSelection, each_feature, member_selection
from featcheck.graph import DependencyGraph
from featcheck.resolution import resolve_builds, resolve_configurations
from featcheck.workspace.cargo_metadata import workspace_from_metadata

UNIFY_WORKSPACE = (
    '--config=resolver.feature-unification="workspace"',
    "--config=unstable.feature-unification=true",
)


_PRINTED: dict[tuple[Path, str, tuple[str, ...], str], ParsedTree] = {}
"""What nightly cargo printed, by workspace, target, flags and the cargo home's configuration.
Unified over the workspace, `cargo +nightly tree -p MEMBER` selects every member: it prints
the same trees whichever member `-p` names (test_every_member_gets_the_same_printout), so one
run serves every member, and every test, that asks it with the same flags."""


_ASKED: dict[tuple[str, ...], str] = {}
"""What nightly cargo printed, by the whole question: workspace, command line, and the cargo
home's and target directory's place and configuration. A test that asks what another test of
this process asked already gets cargo's answer to it, once."""


def nightly_text(
    workspace: Path,
    package: dict[str, Any],
    triple: str,
    env: dict[str, str],
    flags: Sequence[str] = (),
) -> str:
    """What `cargo +nightly tree -p MEMBER` prints for the workspace, features unified over it:
    every member's tree (`_ASKED`: asked of cargo once per question)."""
    command = [
        "cargo",
        "+nightly",
        "tree",
        "--locked",
        "-e",
        "normal",
        "-p",
        package["id"],
        "--target",
        triple,
        "-f",
        "{p} [{f}]",
        "--prefix",
        "depth",
        "--charset",
        "ascii",
        *UNIFY_WORKSPACE,
        *flags,
    ]
    environment = nightly_environment(env)
    home = Path(environment["CARGO_HOME"])
    key = (
        str(workspace.resolve()),
        *command,
        str(home),
        (home / "config.toml").read_text(),
        environment["CARGO_TARGET_DIR"],
    )
    if key not in _ASKED:
        _ASKED[key] = _run(command, workspace, environment)
    return _ASKED[key]


def nightly_environment(env: dict[str, str]) -> dict[str, str]:
    """`env` with a target directory of nightly's own beside the shared one, where cargo keeps
    what nightly's rustc answered (`support.cargo_environment`): cargo keeps one rustc's answers
    per target directory and drops them when another rustc's cargo runs there, so nightly and
    the stable cargo of `cargo metadata` sharing one would each ask rustc again every time."""
    shared = Path(env["CARGO_TARGET_DIR"]).resolve()
    nightly = shared.with_name(f"{shared.name}-nightly")
    nightly.mkdir(exist_ok=True)
    return {**env, "CARGO_TARGET_DIR": str(nightly)}


def nightly_tree(
    workspace: Path,
    package: dict[str, Any],
    triple: str,
    env: dict[str, str],
    flags: Sequence[str] = (),
) -> DependencyGraph:
    """The member's build as `cargo +nightly tree -p MEMBER` prints it, features unified over
    the workspace: what its root reaches in the printout, asked of cargo once per workspace,
    target and flags (`_PRINTED`)."""
    home_config = (Path(env["CARGO_HOME"]) / "config.toml").read_text()
    key = (workspace, triple, tuple(flags), home_config)
    if key not in _PRINTED:
        _PRINTED[key] = parse_tree_text(nightly_text(workspace, package, triple, env, flags))
    return member_part(_PRINTED[key], package)


def member_part(parsed: ParsedTree, package: dict[str, Any]) -> DependencyGraph:
    """What the member's root reaches in a printout of every member's tree."""
    (root,) = [
        n for n in parsed.roots if (n.name, n.version) == (package["name"], package["version"])
    ]
    return reachable_part(parsed.graph, root)


def unified_differences(
    workspace: Path, targets: list[str], homes: list[Path]
) -> tuple[list[str], dict[tuple[str, str], DependencyGraph]]:
    """How featcheck's unified resolution differs from nightly cargo's, for every member and
    target (node order aside: cargo prints the members' trees one after another); the
    graphs featcheck resolved."""
    envs = [{**os.environ, **cargo_environment(home)} for home in homes]
    metadata = cargo_metadata(workspace, envs[0])
    packages = {p["id"]: p for p in metadata["packages"]}
    members = list(metadata["workspace_members"])
    resolver = workspace_resolver(workspace, metadata)
    host = target_cfg(host_triple())
    cfgs = [target_cfg(t) for t in targets]
    graphs = resolve_builds(
        workspace_from_metadata(metadata), members, cfgs, resolver, host=host, unify_workspace=True
    )

    # One cargo run per target prints every member's tree (`_PRINTED`): the runs first, in
    # parallel, one per CARGO_HOME (cargo serializes processes that share one).
    first = packages[members[0]]

    def print_for(job: tuple[int, str]) -> None:
        number, triple = job
        nightly_tree(workspace, first, triple, envs[number % len(envs)])

    with ThreadPoolExecutor(max_workers=len(envs)) as pool:
        list(pool.map(print_for, enumerate(targets)))
    lines = []
    for member, triple in graphs:
        expected = nightly_tree(workspace, packages[member], triple, envs[0])
        found = differences(expected, graphs[(member, triple)])
        name = packages[member]["name"]
        lines += [f"{name} on {triple}: {line}" for line in found if "node order" not in line]
    return lines, graphs


def _workspaces() -> list[Path]:
    """The fixture workspaces with more than one member: where unification can change a build."""
    return [
        w
        for w in sorted(WORKSPACES.iterdir())
        if (w / "Cargo.toml").is_file() and "members" in (w / "Cargo.toml").read_text()
    ]


@needs_nightly
@pytest.mark.parametrize("workspace", _workspaces(), ids=lambda p: p.name)
def test_unified_resolution_equals_nightly_cargo_tree(
    workspace: Path, registry_views: RegistryViews
) -> None:
    homes = [registry_views.home(workspace, lock_only=True, slot=slot) for slot in (0, 1)]
    found, _ = unified_differences(workspace, audited_targets(), homes)
    assert found == []


@needs_nightly
@pytest.mark.parametrize(
    ("name", "flags"), [("member-order", ()), ("optional-backend", ("--no-default-features",))]
)
def test_every_member_gets_the_same_printout(
    name: str, flags: tuple[str, ...], registry_views: RegistryViews
) -> None:
    """What lets one nightly run serve every member (`_PRINTED`): unified over the workspace,
    `-p MEMBER` selects every member, so cargo prints the same text whichever member it names
    (member-order: five members, one of them in a directory named otherwise)."""
    workspace = WORKSPACES / name
    env = {**os.environ, **cargo_environment(registry_views.home(workspace, lock_only=True))}
    metadata = cargo_metadata(workspace, env)
    packages = {p["id"]: p for p in metadata["packages"]}
    printed = {
        nightly_text(workspace, packages[member], host_triple(), env, flags)
        for member in metadata["workspace_members"]
    }
    assert len(metadata["workspace_members"]) >= 2 and len(printed) == 1


@needs_nightly
def test_the_unified_build_is_not_the_member_alone(registry_views: RegistryViews) -> None:
    # The comparison above is not idle: lean asks memchr for no `std`, full asks for its
    # defaults, and unified over the workspace lean's build gets them; nobody turns on
    # crc32fast's `std`.
    workspace = WORKSPACES / "feature-unification"
    homes = [registry_views.home(workspace, lock_only=True)]
    found, graphs = unified_differences(workspace, [host_triple()], homes)
    assert found == []
    (lean,) = [g for (member, _), g in graphs.items() if "/lean#" in member]
    features = {n.name: set(n.features) for n in lean.nodes()}
    assert features["memchr"] == {"alloc", "default", "std"}
    assert features["crc32fast"] == set()
    assert "full" not in features  # only what lean reaches


@needs_nightly
def test_feature_flags_apply_to_every_member_as_nightly_cargo_applies_them(
    registry_views: RegistryViews,
) -> None:
    # Unified over the workspace, `cargo tree -p MEMBER --features F` resolves as if with
    # `--workspace`: the flags reach every member they apply to (classic loses its default
    # `cli` with infer's `--no-default-features`).
    workspace = WORKSPACES / "optional-backend"
    env = {**os.environ, **cargo_environment(registry_views.home(workspace))}
    extra = ["--features", "burn/simd,burn-ndarray/multi-threads"]
    metadata = json.loads(
        _run(
            ["cargo", "metadata", "--format-version", "1", "--all-features", *extra],
            workspace,
            env,
        )
    )
    packages = {p["name"]: p for p in metadata["packages"]}
    workspace_model = workspace_from_metadata(metadata)
    members = {m.name: m for m in workspace_model.members}
    cases = [
        (member, selection)
        for member, features in (("infer", {"ml": []}), ("classic", {"default": [], "cli": []}))
        for selection in [
            *each_feature(FeatureSelection(), features),
            FeatureSelection(all_features=True),
            FeatureSelection(no_default_features=True),
        ]
    ] + [
        ("infer", FeatureSelection.of(["ml", "burn/simd"])),
        ("classic", FeatureSelection.of(["ndarray", "burn-ndarray/multi-threads"])),
    ]
    # As the audit does: the flags as cargo applies them to the member.
    jobs = [(members[m].id, member_selection(s, members[m])[0]) for m, s in cases]
    triple = host_triple()
    graphs = resolve_configurations(
        workspace_model,
        jobs,
        [target_cfg(triple)],
        workspace_resolver(workspace, metadata),
        unify_workspace=True,
    )
    # Member features alone select nothing the lockfile lacks: cargo tree asks the lockfile's
    # packages there, as test_unified_resolution_equals_nightly_cargo_tree and
    # test_every_member_gets_the_same_printout ask (their answers serve here, `_ASKED`).
    lock_env = {**os.environ, **cargo_environment(registry_views.home(workspace, lock_only=True))}
    mismatches: list[str] = []
    for (member, _), (member_id, applied) in zip(cases, jobs, strict=True):
        flags = applied.cargo_args()
        asked = env if any("/" in value for value in applied.features) else lock_env
        expected = nightly_tree(workspace, packages[member], triple, asked, flags)
        found = differences(expected, graphs[(member_id, triple, applied)])
        mismatches += [f"{member} {applied.label}: {d}" for d in found if "node order" not in d]
    assert len(cases) >= 8
    assert mismatches == []
