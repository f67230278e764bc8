"""featcheck's own feature resolution equals `cargo tree`, on every fixture workspace.

For each workspace under crates/ and fixtures/workspaces/, each member and each target (the host,
Windows MSVC and Apple silicon), the graph `resolve_builds` computes from one `cargo metadata`
must equal what `cargo tree -e normal -p MEMBER --target T -f '{p} [{f}]' --prefix depth` prints:
the same nodes (name, version, source, features, proc-macro mark), the same edges, and the same
order. The helpers here are also used by test_resolver_generated.py, which runs them on random
workspaces.
"""

from __future__ import annotations

import functools
import json
import os
import subprocess
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
import tomlkit
from support import CRATES, WORKSPACES, RegistryViews, cargo_environment

from featcheck.cargo.tree_text import parse_tree_text
from featcheck.graph import DependencyGraph
from featcheck.resolution import resolve_builds, resolver_version
from featcheck.semantics.cfg import TargetCfg
from featcheck.workspace.cargo_metadata import workspace_from_metadata

CROSS_TARGETS = ("x86_64-pc-windows-msvc", "aarch64-apple-darwin")


def _run(args: list[str], cwd: Path | None = None, env: dict[str, str] | None = None) -> str:
    done = subprocess.run(
        args,
        cwd=cwd,
        capture_output=True,
        text=True,
        check=False,
        env={**(env or os.environ), "CARGO_TERM_COLOR": "never"},
    )
    if done.returncode != 0:
        raise AssertionError(f"{' '.join(args)} failed in {cwd}:\n{done.stderr}")
    return done.stdout


@functools.cache
def host_triple() -> str:
    """The host target, as rustc names it."""
    for line in _run(["rustc", "-vV"]).splitlines():
        if line.startswith("host:"):
            return line.split(":", 1)[1].strip()
    raise AssertionError("rustc -vV names no host")


@functools.cache
def target_cfg(triple: str) -> TargetCfg:
    """`rustc --print cfg --target T`, once per target (works without T's std installed)."""
    return TargetCfg.parse(triple, _run(["rustc", "--print", "cfg", "--target", triple]))


def audited_targets() -> list[str]:
    """The host plus the cross targets, without duplicates."""
    return list(dict.fromkeys([host_triple(), *CROSS_TARGETS]))


_COMMITTED_METADATA: dict[tuple[str, ...], str] = {}
"""cargo's answers for committed fixtures, by workspace, cargo home (one per view of the
registry), its configuration and the target directory: the same question in every test of
this process that asks it."""


def cargo_metadata(workspace: Path, env: dict[str, str] | None = None) -> dict[str, Any]:
    """`cargo metadata --format-version 1` of a workspace, parsed. A committed fixture's (under
    crates/ or fixtures/workspaces/, which no test changes) is asked of real cargo once per
    cargo home in this process; a workspace a test writes, every time."""
    environment = env or os.environ
    home = environment.get("CARGO_HOME")
    committed = home is not None and workspace.resolve().parent in (CRATES, WORKSPACES)
    if not committed:
        return dict(
            json.loads(_run(["cargo", "metadata", "--format-version", "1"], workspace, env))
        )
    key = (
        str(workspace.resolve()),
        str(home),
        (Path(str(home)) / "config.toml").read_text(),
        environment.get("CARGO_TARGET_DIR", ""),
        environment.get("RUSTUP_TOOLCHAIN", ""),
    )
    if key not in _COMMITTED_METADATA:
        _COMMITTED_METADATA[key] = _run(
            ["cargo", "metadata", "--format-version", "1"], workspace, env
        )
    return dict(json.loads(_COMMITTED_METADATA[key]))


def workspace_resolver(workspace: Path, metadata: dict[str, Any]) -> int:
    """The resolver the workspace root selects, as featcheck will compute it."""
    manifest = workspace / "Cargo.toml"
    data = tomlkit.parse(manifest.read_text()).unwrap()
    root = [
        p for p in metadata["packages"] if Path(p["manifest_path"]).resolve() == manifest.resolve()
    ]
    return resolver_version(data, root[0]["edition"] if root else None)


def cargo_tree_graph(
    workspace: Path,
    member: str,
    triple: str,
    env: dict[str, str] | None = None,
    flags: Sequence[str] = (),
) -> DependencyGraph:
    """What `cargo tree -e normal -p MEMBER --target T FLAGS` prints, parsed by featcheck."""
    text = _run(
        [
            "cargo",
            "tree",
            "-e",
            "normal",
            "-p",
            member,
            "--target",
            triple,
            "-f",
            "{p} [{f}]",
            "--prefix",
            "depth",
            "--charset",
            "ascii",
            *flags,
        ],
        workspace,
        env,
    )
    return parse_tree_text(text).graph


def _edges(graph: DependencyGraph) -> set[tuple[Any, Any]]:
    return {(node, dep) for node in graph.nodes() for dep in graph.dependencies(node)}


def _show(node: Any) -> str:
    mark = " (proc-macro)" if node.proc_macro else " (host)" if node.host else ""
    return f"{node.package}{mark} [{','.join(sorted(node.features))}]"


def differences(expected: DependencyGraph, actual: DependencyGraph) -> list[str]:
    """How `actual` (featcheck) differs from `expected` (cargo tree); empty when equal."""
    found: list[str] = []
    expected_nodes, actual_nodes = set(expected.nodes()), set(actual.nodes())
    found += [f"cargo only: {_show(n)}" for n in sorted(expected_nodes - actual_nodes)]
    found += [f"featcheck only: {_show(n)}" for n in sorted(actual_nodes - expected_nodes)]
    expected_edges, actual_edges = _edges(expected), _edges(actual)
    for label, edges in (
        ("cargo only", expected_edges - actual_edges),
        ("featcheck only", actual_edges - expected_edges),
    ):
        found += [f"{label}: {_show(a)} -> {_show(b)}" for a, b in sorted(edges)]
    if not found and list(expected.nodes()) != list(actual.nodes()):
        found.append("same graph, different node order")
    return found


def check_workspace(
    workspace: Path, targets: Iterable[str], cargo_homes: Sequence[Path]
) -> list[str]:
    """Compare featcheck with cargo tree for every member and target; the mismatches.

    cargo serializes processes that share a CARGO_HOME (its package-cache lock), so the
    `cargo tree` calls run in parallel, one worker per given CARGO_HOME (each one offline and
    pointing at the same stub registry, or the same view of it).
    """
    envs = [{**os.environ, **cargo_environment(home)} for home in cargo_homes]
    metadata = cargo_metadata(workspace, envs[0])
    members = list(metadata["workspace_members"])
    cfgs = [target_cfg(t) for t in targets]
    resolver = workspace_resolver(workspace, metadata)
    graphs = resolve_builds(
        workspace_from_metadata(metadata), members, cfgs, resolver, host=target_cfg(host_triple())
    )

    def compare(job: tuple[int, tuple[str, str]]) -> list[str]:
        number, (member, triple) = job
        expected = cargo_tree_graph(workspace, member, triple, envs[number % len(envs)])
        found = differences(expected, graphs[(member, triple)])
        return [f"{member} on {triple} (resolver {resolver}): {line}" for line in found]

    with ThreadPoolExecutor(max_workers=len(envs)) as pool:
        return [line for lines in pool.map(compare, enumerate(graphs)) for line in lines]


def _fixture_workspaces() -> list[Path]:
    roots = [*sorted(CRATES.iterdir()), *sorted(WORKSPACES.iterdir())]
    return [root for root in roots if (root / "Cargo.toml").is_file()]


@pytest.mark.parametrize("workspace", _fixture_workspaces(), ids=lambda p: p.name)
def test_resolution_equals_cargo_tree(workspace: Path, registry_views: RegistryViews) -> None:
    # The fixtures as committed: cargo resolves them from their Cargo.lock alone, so two
    # CARGO_HOMEs over the lockfile's packages (a missing one would fail cargo, not pass).
    homes = [registry_views.home(workspace, lock_only=True, slot=slot) for slot in (0, 1)]
    assert check_workspace(workspace, audited_targets(), homes) == []


def test_the_comparison_notices_a_wrong_answer(
    offline_cargo_for: Callable[..., Path],
) -> None:
    # resolver-1 unifies dev-dependency features; resolving it as resolver 2 must show.
    workspace = WORKSPACES / "resolver-1"
    offline_cargo_for(workspace, lock_only=True)
    metadata = cargo_metadata(workspace)
    (member,) = metadata["workspace_members"]
    host = target_cfg(host_triple())
    wrong = resolve_builds(workspace_from_metadata(metadata), [member], [host], 2, host=host)[
        (member, host.triple)
    ]
    found = differences(cargo_tree_graph(workspace, member, host.triple), wrong)
    assert any("burn-flex" in line and "rayon" in line for line in found)
