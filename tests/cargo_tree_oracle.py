"""cargo as the oracle of the differential tests: the CLI run as a user runs it, with each
build asked of `cargo tree -e normal -p MEMBER --target T` instead of featcheck's resolver.

No flag asks for that (a user gets featcheck's resolver, proven equal to cargo's by these
tests): `cargo_resolves` puts `resolve_by_cargo_tree` in the place of the pipeline's resolve
stage, so the builds cargo printed go through the same detection, placement and report."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path

from support import run_featcheck

from featcheck import pipeline
from featcheck.cargo.runner import CargoRunner
from featcheck.cargo.tree_text import ParsedTree, TreeTextError, parse_tree_text
from featcheck.errors import FeatcheckError
from featcheck.featureset import FeatureSelection
from featcheck.graph import DependencyGraph, Node
from featcheck.matrix import ConfigurationPlan
from featcheck.stages.members import Builds, Resolved, Run, Scope, resolver_model
from featcheck.workspace.model import Package

_ASK_CARGO = """\
import sys
sys.path.insert(0, {tests!r})
from cargo_tree_oracle import cargo_resolves
from featcheck.cli import main
sys.argv[0] = "featcheck"
with cargo_resolves():
    main()
"""


def run_featcheck_resolved_by(resolver: str, *args: str) -> subprocess.CompletedProcess[str]:
    """`run_featcheck(*args)` with every build resolved by `resolver`: "featcheck" (what a user
    runs) or "cargo" (cargo tree, the oracle)."""
    if resolver == "featcheck":
        return run_featcheck(*args)
    assert resolver == "cargo", resolver
    script = _ASK_CARGO.format(tests=str(Path(__file__).resolve().parent))
    return subprocess.run(
        [sys.executable, "-c", script, *args],
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, "NO_COLOR": "1", "COLUMNS": "200"},
    )


def run_in_process_resolved_by(resolver: str, *args: str) -> subprocess.CompletedProcess[str]:
    """`run_featcheck_resolved_by` in this process (`cli_in_process.run_in_process`): for tests
    of what the audit makes of the builds, beside a `remembered_cargo` whose `cargo metadata`
    answer both resolvers then share. Each `cargo tree` the oracle asks is real cargo's."""
    from cli_in_process import run_in_process

    if resolver == "featcheck":
        return run_in_process(*args)
    assert resolver == "cargo", resolver
    with cargo_resolves():
        return run_in_process(*args)


@contextlib.contextmanager
def cargo_resolves() -> Iterator[None]:
    """In this block, every audit of this process asks cargo tree for its builds."""
    saved = pipeline.resolve
    pipeline.resolve = resolve_by_cargo_tree
    try:
        yield
    finally:
        pipeline.resolve = saved


def resolve_by_cargo_tree(run: Run, scope: Scope, plan: ConfigurationPlan) -> Resolved:
    """The resolve stage with cargo as the resolver: the model, and one `cargo tree` per build,
    run in parallel. With the default features, a refusal stops the audit."""
    assert isinstance(run.source, CargoRunner), "cargo tree needs cargo"
    model = resolver_model(run.source, scope, run.deadline)
    runner, manifest = run.source, run.manifest
    by_id = {m.id: m for m in scope.members}
    jobs = [(by_id[m], t, s) for m, s in plan.distinct_jobs() for t in scope.targets]

    def tree(job: tuple[Package, str, FeatureSelection]) -> str | FeatcheckError:
        member, target, selection = job
        try:
            return runner.tree(manifest, member.id, target, features=selection)
        except FeatcheckError as error:
            if selection.is_default:
                raise
            return error

    workers = max(1, min(len(jobs), os.cpu_count() or 1))
    with ThreadPoolExecutor(max_workers=workers) as pool:
        trees = list(pool.map(tree, jobs))
    builds: Builds = {}
    for (member, target, selection), text in zip(jobs, trees, strict=True):
        if isinstance(text, FeatcheckError):
            if selection in plan.selections[member.id]:
                plan.refuse(member.id, selection, text.message)
            continue
        try:
            builds[(member.id, target, selection)] = member_part(parse_tree_text(text), member)
        except TreeTextError as error:
            raise FeatcheckError(
                f"could not read cargo tree output for {member.name}: {error}"
            ) from None
    plan.share(builds)
    return Resolved(model, builds)


def member_part(tree: ParsedTree, member: Package) -> ParsedTree:
    """The member's part of `cargo tree -p MEMBER` output. Where features unify over the
    workspace, cargo selects every member and prints each one's tree (measured with nightly
    cargo 1.97): only what the audited member reaches is its build."""
    if len(tree.roots) < 2:
        return tree
    ref = member.ref
    root = next((n for n in tree.roots if (n.name, n.version) == (ref.name, ref.version)), None)
    if root is None:
        raise TreeTextError(f"cargo tree printed no tree for {ref.name}")
    return replace(tree, graph=reachable_part(tree.graph, root), roots=[root])


def reachable_part(graph: DependencyGraph, root: Node) -> DependencyGraph:
    """What `root` reaches in a graph printed for several roots: depth first, children in
    cargo's order (by package id), the order cargo prints the member's tree in when it is
    printed alone, the member first."""
    part: dict[Node, set[Node]] = {}
    stack = [root]
    while stack:
        node = stack.pop()
        if node not in part:
            part[node] = set(graph.dependencies(node))
            stack.extend(reversed(graph.sorted_dependencies(node)))
    return DependencyGraph(part)
