"""The pieces of featcheck's feature resolver, on hand-written metadata (no cargo needed)."""

from __future__ import annotations

from typing import Any

import pytest
from conftest import LINUX_CFG

from featcheck.errors import FeatcheckError
from featcheck.graph import DependencyGraph, Node
from featcheck.resolution import resolve_builds, resolver_version
from featcheck.resolution.edges import declarations_for_edge
from featcheck.resolution.index import display_source
from featcheck.resolution.values import DEP, DEP_FEATURE, FEATURE, parse_feature_value
from featcheck.semantics.cfg import TargetCfg

LINUX = TargetCfg.parse("x86_64-unknown-linux-gnu", LINUX_CFG)
WINDOWS = TargetCfg.parse(
    "x86_64-pc-windows-msvc",
    'target_os="windows"\ntarget_family="windows"\nwindows\ntarget_arch="x86_64"\n',
)
CRATES_IO = "registry+https://github.com/rust-lang/crates.io-index"


def _decl(name: str, **fields: Any) -> dict[str, Any]:
    decl: dict[str, Any] = {
        "name": name,
        "req": fields.pop("req", "*"),
        "kind": None,
        "rename": None,
        "optional": False,
        "uses_default_features": True,
        "features": [],
        "target": None,
    }
    decl.update(fields)
    return decl


class Workspace:
    """Builds `cargo metadata`-shaped JSON: packages, declarations and resolved edges."""

    def __init__(self) -> None:
        self.packages: list[dict[str, Any]] = []
        self.nodes: dict[str, list[dict[str, Any]]] = {}

    def package(
        self,
        name: str,
        features: dict[str, list[str]] | None = None,
        decls: list[dict[str, Any]] | None = None,
        version: str = "1.0.0",
        proc_macro: bool = False,
        member: bool = False,
    ) -> str:
        package_id = (
            f"path+file:///ws/{name}#{version}" if member else f"{CRATES_IO}#{name}@{version}"
        )
        kind = "proc-macro" if proc_macro else "lib"
        self.packages.append(
            {
                "name": name,
                "version": version,
                "id": package_id,
                "source": None if member else CRATES_IO,
                "edition": "2021",
                "manifest_path": f"/ws/{name}/Cargo.toml",
                "features": features or {},
                "dependencies": decls or [],
                "targets": [{"kind": [kind], "name": name.replace("-", "_")}],
            }
        )
        self.nodes[package_id] = []
        return package_id

    def edge(
        self, parent: str, child: str, *kinds: tuple[str | None, str | None], name: str = ""
    ) -> None:
        child_name = next(p["name"] for p in self.packages if p["id"] == child)
        self.nodes[parent].append(
            {
                "name": name or child_name.replace("-", "_"),
                "pkg": child,
                "dep_kinds": [{"kind": k, "target": t} for k, t in (kinds or [(None, None)])],
            }
        )

    def metadata(self, root: str | None = None) -> dict[str, Any]:
        members = [p["id"] for p in self.packages if p["source"] is None]
        nodes = [
            {"id": i, "deps": deps, "dependencies": [d["pkg"] for d in deps]}
            for i, deps in self.nodes.items()
        ]
        return {
            "packages": self.packages,
            "workspace_members": members,
            "workspace_root": "/ws",
            "resolve": {"nodes": nodes, "root": root},
        }


def _features(graph: DependencyGraph) -> dict[str, list[str]]:
    return {f"{n.name}{'!' if n.proc_macro else ''}": sorted(n.features) for n in graph.nodes()}


def _resolve(
    workspace: Workspace, member: str, resolver: int = 2, cfg: TargetCfg = LINUX
) -> DependencyGraph:
    graphs = resolve_builds(workspace.metadata(), [member], [cfg], resolver, host=LINUX)
    return graphs[(member, cfg.triple)]


def test_feature_values_read_like_cargo() -> None:
    assert parse_feature_value("std") == (FEATURE, "std", "", False)
    assert parse_feature_value("dep:rayon") == (DEP, "rayon", "", False)
    assert parse_feature_value("gemm/rayon") == (DEP_FEATURE, "gemm", "rayon", False)
    assert parse_feature_value("gemm?/rayon") == (DEP_FEATURE, "gemm", "rayon", True)
    # Only the first slash splits; the rest is the dependency's own feature value.
    assert parse_feature_value("a?/b/c") == (DEP_FEATURE, "a", "b/c", True)


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


def test_sources_print_like_cargo_tree() -> None:
    assert display_source({"id": f"{CRATES_IO}#a@1.0.0", "source": CRATES_IO}) is None
    path = {"id": "path+file:///home/me/my%20app#0.1.0", "source": None}
    assert display_source(path) == "/home/me/my app"
    git = {"id": "x", "source": "git+https://github.com/o/r?branch=main#0123456789abcdef"}
    assert display_source(git) == "https://github.com/o/r?branch=main#01234567"


def test_two_versions_under_two_names_find_their_own_declarations() -> None:
    decls = [_decl("burn", req="=0.22.1"), _decl("burn", req="=0.21.0", rename="burn-021")]
    old = {"name": "burn", "version": "0.21.0", "targets": [{"kind": ["lib"], "name": "burn"}]}
    new = {**old, "version": "0.22.1"}
    edge = {"dep_kinds": [{"kind": None, "target": None}]}
    assert declarations_for_edge(decls, old, {**edge, "name": "burn_021"}) == [decls[1]]
    assert declarations_for_edge(decls, new, {**edge, "name": "burn"}) == [decls[0]]


def test_weak_feature_waits_until_the_dependency_is_turned_on() -> None:
    ws = Workspace()
    serde = ws.package("serde", {"std": []})
    app = ws.package(
        "app",
        {"default": ["serde?/std"], "json": ["dep:serde"]},
        [_decl("serde", optional=True)],
        member=True,
    )
    ws.edge(app, serde)
    assert _features(_resolve(ws, app)) == {"app": ["default"]}
    # Turned on later by `json`: the waiting `std` arrives with it.
    ws.packages[-1]["features"]["default"].append("json")
    assert _features(_resolve(ws, app)) == {"app": ["default", "json"], "serde": ["std"]}


def test_implicit_feature_of_an_optional_dependency_unless_dep_syntax_hides_it() -> None:
    ws = Workspace()
    rayon = ws.package("rayon")
    gemm = ws.package("gemm", {"rayon": ["dep:rayon"]}, [_decl("rayon", optional=True)])
    app = ws.package("app", {"default": ["gemm/rayon"]}, [_decl("gemm")], member=True)
    ws.edge(gemm, rayon)
    ws.edge(app, gemm)
    assert _features(_resolve(ws, app)) == {"app": ["default"], "gemm": ["rayon"], "rayon": []}


def test_renamed_dependency_is_named_by_its_key() -> None:
    ws = Workspace()
    burn = ws.package("burn", {"flex": [], "default": ["std"], "std": []})
    app = ws.package(
        "app",
        {"default": ["nn/flex"]},
        [_decl("burn", rename="nn", uses_default_features=False)],
        member=True,
    )
    ws.edge(app, burn, name="nn")
    assert _features(_resolve(ws, app)) == {"app": ["default"], "burn": ["flex"]}


def test_dev_dependency_features_count_for_resolver_1_only() -> None:
    ws = Workspace()
    burn = ws.package("burn", {"rayon": []})
    app = ws.package(
        "app", {}, [_decl("burn"), _decl("burn", kind="dev", features=["rayon"])], member=True
    )
    ws.edge(app, burn, (None, None), ("dev", None))
    assert _features(_resolve(ws, app, resolver=2)) == {"app": [], "burn": []}
    assert _features(_resolve(ws, app, resolver=1)) == {"app": [], "burn": ["rayon"]}


def test_other_platforms_count_for_resolver_1_only_and_draw_no_edge() -> None:
    ws = Workspace()
    burn = ws.package("burn", {"rayon": []})
    decls = [_decl("burn"), _decl("burn", target="cfg(windows)", features=["rayon"])]
    app = ws.package("app", {}, decls, member=True)
    ws.edge(app, burn, (None, None), (None, "cfg(windows)"))
    assert _features(_resolve(ws, app, resolver=2)) == {"app": [], "burn": []}
    assert _features(_resolve(ws, app, resolver=1)) == {"app": [], "burn": ["rayon"]}
    assert _features(_resolve(ws, app, resolver=2, cfg=WINDOWS)) == {"app": [], "burn": ["rayon"]}


def test_proc_macro_dependencies_are_host_units_with_their_own_features() -> None:
    ws = Workspace()
    shared = ws.package("shared", {"full": []})
    derive = ws.package("derive", {}, [_decl("shared", features=["full"])], proc_macro=True)
    app = ws.package("app", {}, [_decl("shared"), _decl("derive")], member=True)
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
    ws = Workspace()
    burn = ws.package("burn", {"rayon": []})
    decls = [_decl("burn"), _decl("burn", kind="build", features=["rayon"])]
    app = ws.package("app", {}, decls, member=True)
    ws.edge(app, burn, (None, None), ("build", None))
    assert _features(_resolve(ws, app, resolver=2)) == {"app": [], "burn": []}
    assert _features(_resolve(ws, app, resolver=1)) == {"app": [], "burn": ["rayon"]}


def test_edges_and_order_follow_cargo_tree() -> None:
    ws = Workspace()
    zeta = ws.package("zeta")
    alpha = ws.package("alpha", {}, [_decl("zeta")])
    ws.edge(alpha, zeta)
    app = ws.package("app", {}, [_decl("zeta"), _decl("alpha")], member=True)
    ws.edge(app, zeta)
    ws.edge(app, alpha)
    graph = _resolve(ws, app)
    assert [n.name for n in graph.nodes()] == ["app", "alpha", "zeta"]
    root = next(graph.nodes())
    assert {n.name for n in graph.dependencies(root)} == {"alpha", "zeta"}
    assert root == Node(root.package, frozenset(), False) and root.package.source == "/ws/app"


def test_a_member_may_be_named_and_unknown_ones_are_errors() -> None:
    ws = Workspace()
    app = ws.package("app", member=True)
    graphs = resolve_builds(ws.metadata(), ["app"], [LINUX], 2)
    assert list(graphs) == [(app, LINUX.triple)]
    with pytest.raises(FeatcheckError, match="nope"):
        resolve_builds(ws.metadata(), ["nope"], [LINUX], 2)


def test_resolver_1_also_resolves_the_package_cargo_runs_for() -> None:
    ws = Workspace()
    lib = ws.package("lib", {"fast": []}, member=True)
    app = ws.package("app", {}, [_decl("lib", features=["fast"])], member=True)
    ws.edge(app, lib)
    metadata = ws.metadata(root=app)

    def lib_features(resolver: int, **options: Any) -> list[str]:
        graph = resolve_builds(metadata, [lib], [LINUX], resolver, **options)[(lib, LINUX.triple)]
        return sorted(next(graph.nodes()).features)

    # `cargo build -p lib` run for app's manifest: app's request reaches lib with resolver 1.
    assert lib_features(1) == ["fast"]
    assert lib_features(1, current=None) == []
    assert lib_features(2) == []
