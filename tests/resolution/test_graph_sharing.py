"""Member graphs drawn on top of a shared graph answer exactly as a graph made of the same edges.

Rules, fixes and the explainer ask a member's graph for nodes by name, reverse edges, ancestors,
paths and what is compiled for the target; for a large workspace those answers come from the
graph below the members, which many members share. Here two members with the same dependencies
(a proc-macro among them) are resolved, and every answer is compared with a plain copy.
"""

from __future__ import annotations

from metadata_builder import CRATES_IO, MetadataBuilder, declaration_entry
from support import LINUX_CFG

from featcheck.graph import DependencyGraph, Node
from featcheck.resolution import resolve_builds
from featcheck.resolution.context import BuildContext
from featcheck.resolution.features import ACTIVATE_VALUE, Below, Seed, resolve_below
from featcheck.semantics.cfg import TargetCfg
from featcheck.workspace.cargo_metadata import workspace_from_metadata
from featcheck.workspace.model import DEP, FEATURE, FeatureValue

LINUX = TargetCfg.parse("x86_64-unknown-linux-gnu", LINUX_CFG)


def _plain(graph: DependencyGraph) -> DependencyGraph:
    return DependencyGraph({node: set(graph.dependencies(node)) for node in graph.nodes()})


def _workspace() -> tuple[MetadataBuilder, list[str]]:
    ws = MetadataBuilder()
    gemm = ws.package("gemm", {"rayon": []})
    flex = ws.package("burn-flex", {"rayon": ["gemm/rayon"]}, [declaration_entry("gemm")])
    ws.edge(flex, gemm)
    shared = ws.package("shared", {"full": []})
    derive = ws.package(
        "derive", {}, [declaration_entry("shared", features=["full"])], proc_macro=True
    )
    ws.edge(derive, shared)
    burn = ws.package(
        "burn",
        {"flex": ["dep:burn-flex"]},
        [declaration_entry("burn-flex", optional=True), declaration_entry("derive")],
    )
    ws.edge(burn, flex)
    ws.edge(burn, derive)
    members = []
    for name in ("app-a", "app-b"):
        app = ws.package(
            name,
            {},
            [declaration_entry("burn", features=["flex"]), declaration_entry("shared")],
            member=True,
        )
        ws.edge(app, burn)
        ws.edge(app, shared)
        members.append(app)
    return ws, members


def test_member_graphs_share_what_lies_below_them_and_answer_like_plain_graphs() -> None:
    ws, members = _workspace()
    graphs = resolve_builds(workspace_from_metadata(ws.metadata()), members, [LINUX], 2, host=LINUX)
    first, second = (graphs[(member, LINUX.triple)] for member in members)
    first_parts, second_parts = first.parts, second.parts
    assert first_parts is not None and second_parts is not None
    assert first_parts[1] is second_parts[1]  # one graph below both members

    for graph in (first, second):
        plain = _plain(graph)
        root = next(graph.nodes())
        nodes = list(plain.nodes())
        assert list(graph.nodes()) == nodes
        assert graph.packages() == plain.packages()
        for name in {node.name for node in nodes} | {"absent"}:
            assert list(graph.named(name)) == list(plain.named(name))
        assert {n: set(d) for n, d in graph.dependents_map().items()} == {
            n: set(d) for n, d in plain.dependents_map().items()
        }
        assert graph.target_side((root,)) == plain.target_side((root,))
        compiled = {(n.name, *sorted(n.features)) for n in graph.target_side((root,))}
        assert compiled == {(root.name,), ("burn", "flex"), ("burn-flex",), ("gemm",), ("shared",)}
        derive = next(iter(graph.named("derive")))
        for node in [*nodes, Node(root.package, frozenset({"absent"}))]:
            assert graph.ancestors(node) == plain.ancestors(node)
            assert graph.sorted_dependencies(node) == plain.sorted_dependencies(node)
            for avoiding in (frozenset(), frozenset({derive}), frozenset(graph.named("burn"))):
                for start in (root, derive):
                    assert graph.path(start, node, avoiding) == plain.path(start, node, avoiding)


def test_a_member_resolved_on_top_of_another_members_part_gets_its_own_graph() -> None:
    """app-c asks burn for less than app-a does, and `lonely` asks nothing of anyone: each
    member's graph is the one it gets resolved alone, whichever member came first."""
    ws, members = _workspace()
    burn = f"{CRATES_IO}#burn@1.0.0"
    smaller = ws.package("app-c", {}, [declaration_entry("burn", features=["flex"])], member=True)
    ws.edge(smaller, burn)
    lonely = ws.package("lonely", {}, [], member=True)
    index = workspace_from_metadata(ws.metadata())
    everyone = [smaller, lonely, *members]
    together = resolve_builds(index, everyone, [LINUX], 2, host=LINUX)
    for member in everyone:
        alone = resolve_builds(index, [member], [LINUX], 2, host=LINUX)[(member, LINUX.triple)]
        graph = together[(member, LINUX.triple)]
        assert list(graph.nodes()) == list(alone.nodes())
        assert _plain(graph).dependents_map() == _plain(alone).dependents_map()
    assert [node.name for node in together[(lonely, LINUX.triple)].nodes()] == ["lonely"]


def _snapshot(below: Below) -> tuple[object, ...]:
    state = below.state
    return (
        {key: set(value) for key, value in state.features.items()},
        {key: set(value) for key, value in state.dependencies.items()},
        set(below.processed),
        {key: set(value) for key, value in below.deferred.items()},
    )


def test_a_resolution_continued_from_another_ends_where_one_from_scratch_does() -> None:
    """A fix's what-if resolution continues from the unedited one and shares its sets: the
    unedited one must stay as it was, however the continuations add to its units' features,
    optional dependencies and waiting weak values."""
    ws = MetadataBuilder()
    gemm = ws.package("gemm", {"rayon": [], "simd": []})
    blas = ws.package("blas")
    burn = ws.package(
        "burn",
        {"flex": ["dep:gemm"], "fast": ["gemm?/rayon"], "wide": ["gemm?/simd"], "std": []},
        [declaration_entry("gemm", optional=True), declaration_entry("blas", optional=True)],
    )
    ws.edge(burn, gemm)
    ws.edge(burn, blas)
    index = workspace_from_metadata(ws.metadata())
    context = BuildContext(index, LINUX, LINUX, 2)
    unit = index.by_id[burn] * 2

    def asking(*features: str) -> list[Seed]:
        return [(unit, FeatureValue(FEATURE, name)) for name in features]

    first = [(unit, ACTIVATE_VALUE), (unit, FeatureValue(DEP, "blas")), *asking("fast")]
    start = resolve_below(context, first)
    before = _snapshot(start)
    for more in (asking("std", "wide"), asking("flex"), asking("wide", "flex")):
        continued = resolve_below(context, more, start)
        assert _snapshot(continued) == _snapshot(resolve_below(context, [*first, *more]))
        assert _snapshot(start) == before
    assert _snapshot(continued)[0][index.by_id[gemm] * 2] == {"rayon", "simd"}
