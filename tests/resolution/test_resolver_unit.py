"""The pieces of featcheck's feature resolver, on hand-written metadata (no cargo needed)."""

from __future__ import annotations

from typing import Any

import pytest
from metadata_builder import MetadataBuilder, declaration_entry
from support import LINUX_CFG

from featcheck.errors import FeatcheckError
from featcheck.graph import DependencyGraph, Node
from featcheck.resolution import resolve_builds, resolver_version
from featcheck.resolution.context import BuildContext
from featcheck.resolution.record import record_build
from featcheck.semantics.cfg import TargetCfg
from featcheck.workspace.cargo_metadata import workspace_from_metadata

LINUX = TargetCfg.parse("x86_64-unknown-linux-gnu", LINUX_CFG)
WINDOWS = TargetCfg.parse(
    "x86_64-pc-windows-msvc",
    'target_os="windows"\ntarget_family="windows"\nwindows\ntarget_arch="x86_64"\n',
)


def _features(graph: DependencyGraph) -> dict[str, list[str]]:
    return {f"{n.name}{'!' if n.proc_macro else ''}": sorted(n.features) for n in graph.nodes()}


def _resolve(
    workspace: MetadataBuilder, member: str, resolver: int = 2, cfg: TargetCfg = LINUX
) -> DependencyGraph:
    graphs = resolve_builds(
        workspace_from_metadata(workspace.metadata()), [member], [cfg], resolver, host=LINUX
    )
    return graphs[(member, cfg.triple)]


@pytest.mark.parametrize(
    ("manifest", "edition", "expected"),
    [
        ({"workspace": {"resolver": "2"}, "package": {"edition": "2015"}}, None, 2),
        ({"package": {"edition": "2021", "resolver": "1"}}, None, 1),
        ({"package": {"edition": "2018"}}, None, 1),
        ({"package": {"edition": "2021"}}, None, 2),
        ({"package": {"edition": "2024"}}, None, 3),
        ({"package": {}}, None, 1),
        ({"workspace": {"members": ["a"]}}, None, 1),
        ({"workspace": {"members": ["a"], "resolver": "3"}}, None, 3),
        (
            {
                "workspace": {"package": {"edition": "2024"}},
                "package": {"edition": {"workspace": True}},
            },
            None,
            3,
        ),
        ({"package": {"edition": {"workspace": True}}}, "2021", 2),
    ],
)
def test_resolver_version(manifest: dict[str, Any], edition: str | None, expected: int) -> None:
    assert resolver_version(manifest, edition) == expected


def test_unknown_resolver_is_an_error() -> None:
    with pytest.raises(FeatcheckError, match="resolver"):
        resolver_version({"workspace": {"resolver": "4"}})


def test_weak_feature_waits_until_the_dependency_is_turned_on() -> None:
    ws = MetadataBuilder()
    serde = ws.package("serde", {"std": []})
    app = ws.package(
        "app",
        {"default": ["serde?/std"], "json": ["dep:serde"]},
        [declaration_entry("serde", optional=True)],
        member=True,
    )
    ws.edge(app, serde)
    assert _features(_resolve(ws, app)) == {"app": ["default"]}
    # Turned on later by `json`: the waiting `std` arrives with it.
    ws.packages[-1]["features"]["default"].append("json")
    assert _features(_resolve(ws, app)) == {"app": ["default", "json"], "serde": ["std"]}


def test_implicit_feature_of_an_optional_dependency_unless_dep_syntax_hides_it() -> None:
    ws = MetadataBuilder()
    rayon = ws.package("rayon")
    gemm = ws.package("gemm", {"rayon": ["dep:rayon"]}, [declaration_entry("rayon", optional=True)])
    app = ws.package("app", {"default": ["gemm/rayon"]}, [declaration_entry("gemm")], member=True)
    ws.edge(gemm, rayon)
    ws.edge(app, gemm)
    assert _features(_resolve(ws, app)) == {"app": ["default"], "gemm": ["rayon"], "rayon": []}


def test_renamed_dependency_is_named_by_its_key() -> None:
    ws = MetadataBuilder()
    burn = ws.package("burn", {"flex": [], "default": ["std"], "std": []})
    app = ws.package(
        "app",
        {"default": ["nn/flex"]},
        [declaration_entry("burn", rename="nn", uses_default_features=False)],
        member=True,
    )
    ws.edge(app, burn, name="nn")
    assert _features(_resolve(ws, app)) == {"app": ["default"], "burn": ["flex"]}


def test_dev_dependency_features_count_for_resolver_1_only() -> None:
    ws = MetadataBuilder()
    burn = ws.package("burn", {"rayon": []})
    app = ws.package(
        "app",
        {},
        [declaration_entry("burn"), declaration_entry("burn", kind="dev", features=["rayon"])],
        member=True,
    )
    ws.edge(app, burn, (None, None), ("dev", None))
    assert _features(_resolve(ws, app, resolver=2)) == {"app": [], "burn": []}
    assert _features(_resolve(ws, app, resolver=1)) == {"app": [], "burn": ["rayon"]}


def test_other_platforms_count_for_resolver_1_only_and_draw_no_edge() -> None:
    ws = MetadataBuilder()
    burn = ws.package("burn", {"rayon": []})
    decls = [
        declaration_entry("burn"),
        declaration_entry("burn", target="cfg(windows)", features=["rayon"]),
    ]
    app = ws.package("app", {}, decls, member=True)
    ws.edge(app, burn, (None, None), (None, "cfg(windows)"))
    assert _features(_resolve(ws, app, resolver=2)) == {"app": [], "burn": []}
    assert _features(_resolve(ws, app, resolver=1)) == {"app": [], "burn": ["rayon"]}
    assert _features(_resolve(ws, app, resolver=2, cfg=WINDOWS)) == {"app": [], "burn": ["rayon"]}


def test_proc_macro_dependencies_are_host_units_with_their_own_features() -> None:
    ws = MetadataBuilder()
    shared = ws.package("shared", {"full": []})
    derive = ws.package(
        "derive", {}, [declaration_entry("shared", features=["full"])], proc_macro=True
    )
    app = ws.package(
        "app", {}, [declaration_entry("shared"), declaration_entry("derive")], member=True
    )
    ws.edge(derive, shared)
    ws.edge(app, shared)
    ws.edge(app, derive)
    graph = _resolve(ws, app, resolver=2)
    assert sorted((n.name, sorted(n.features), n.proc_macro) for n in graph.nodes()) == [
        ("app", [], False),
        ("derive", [], True),
        ("shared", [], False),
        ("shared", ["full"], False),
    ]
    unified = _resolve(ws, app, resolver=1)
    assert _features(unified) == {"app": [], "derive!": [], "shared": ["full"]}


def test_build_dependency_features_stay_on_the_host_with_resolver_2() -> None:
    ws = MetadataBuilder()
    burn = ws.package("burn", {"rayon": []})
    decls = [declaration_entry("burn"), declaration_entry("burn", kind="build", features=["rayon"])]
    app = ws.package("app", {}, decls, member=True)
    ws.edge(app, burn, (None, None), ("build", None))
    assert _features(_resolve(ws, app, resolver=2)) == {"app": [], "burn": []}
    assert _features(_resolve(ws, app, resolver=1)) == {"app": [], "burn": ["rayon"]}


def test_edges_and_order_follow_cargo_tree() -> None:
    ws = MetadataBuilder()
    zeta = ws.package("zeta")
    alpha = ws.package("alpha", {}, [declaration_entry("zeta")])
    ws.edge(alpha, zeta)
    app = ws.package(
        "app", {}, [declaration_entry("zeta"), declaration_entry("alpha")], member=True
    )
    ws.edge(app, zeta)
    ws.edge(app, alpha)
    graph = _resolve(ws, app)
    assert [n.name for n in graph.nodes()] == ["app", "alpha", "zeta"]
    root = next(graph.nodes())
    assert {n.name for n in graph.dependencies(root)} == {"alpha", "zeta"}
    assert root == Node(root.package, frozenset(), False) and root.package.source == "/ws/app"


def test_a_member_may_be_named_and_unknown_ones_are_errors() -> None:
    ws = MetadataBuilder()
    app = ws.package("app", member=True)
    graphs = resolve_builds(workspace_from_metadata(ws.metadata()), ["app"], [LINUX], 2)
    assert list(graphs) == [(app, LINUX.triple)]
    with pytest.raises(FeatcheckError, match="nope"):
        resolve_builds(workspace_from_metadata(ws.metadata()), ["nope"], [LINUX], 2)


def test_resolver_1_also_resolves_the_package_cargo_runs_for() -> None:
    ws = MetadataBuilder()
    lib = ws.package("lib", {"fast": []}, member=True)
    app = ws.package("app", {}, [declaration_entry("lib", features=["fast"])], member=True)
    ws.edge(app, lib)
    metadata = ws.metadata(root=app)

    def lib_features(resolver: int, **options: Any) -> list[str]:
        graph = resolve_builds(
            workspace_from_metadata(metadata), [lib], [LINUX], resolver, **options
        )[(lib, LINUX.triple)]
        return sorted(next(graph.nodes()).features)

    # `cargo build -p lib` run for app's manifest: app's request reaches lib with resolver 1.
    assert lib_features(1) == ["fast"]
    assert lib_features(1, current=None) == []
    assert lib_features(2) == []


def _switching(workspace: MetadataBuilder, member: str, package: str, feature: str) -> list[str]:
    """The member's declarations that switch `feature` of `package` on, each with its chain, as
    the record of the member's build says."""
    index = workspace_from_metadata(workspace.metadata())
    record = record_build(BuildContext(index, LINUX, LINUX, 2), index.by_id[member])
    goal = (index.by_id[package] * 2, feature)
    found = []
    for key in [d.key for d in index[member].declarations]:
        chain = record.through_declaration(key, goal)
        if chain is not None:
            found.append(f"{key}: " + " → ".join(f"{index[p].ref.name} {f}" for p, f in chain))
    return found


def test_the_record_says_which_declaration_switches_a_feature_on() -> None:
    ws = MetadataBuilder()
    serde = ws.package("serde_json", {"float_roundtrip": [], "std": []})
    # The weak value waits until `json` turns serde_json on: it is still what asks for `std`.
    config = ws.package(
        "config",
        {"default": ["json", "serde_json?/std"], "json": ["dep:serde_json"]},
        [declaration_entry("serde_json", optional=True)],
    )
    # A weak `serde_json?/…` whose dependency stays off switches nothing on.
    lazy = ws.package(
        "lazy",
        {"default": ["serde_json?/float_roundtrip"]},
        [declaration_entry("serde_json", optional=True)],
    )
    decls = [declaration_entry(n) for n in ("config", "lazy")]
    app = ws.package("app", {}, decls, member=True)
    for parent, child in [(config, serde), (lazy, serde), (app, config), (app, lazy)]:
        ws.edge(parent, child)
    assert _switching(ws, app, serde, "float_roundtrip") == []
    assert _switching(ws, app, serde, "std") == ["config: config default → serde_json std"]
    assert _switching(ws, app, serde, "arbitrary_precision") == []
