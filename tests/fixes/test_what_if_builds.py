"""A fix's what-if build continues from the unedited resolution and is drawn as cargo would.

The fix search resolves hundreds of edited builds of a large workspace. Each is resolved by
following again only what the edited packages' units ask (every rule of the feature resolver
only adds), and drawn from the unedited graph where the edits changed nothing. Here each kind of
edit is checked against a resolution of the edited model from scratch, and an edit above a long
chain of packages must not resolve the chain again.
"""

from __future__ import annotations

import pytest
from metadata_builder import MetadataBuilder, declaration_entry
from support import LINUX_CFG

from featcheck.featureset import DEFAULT
from featcheck.fixes.counterfactual import WhatIf, edited_index
from featcheck.graph import DependencyGraph
from featcheck.resolution import features, resolve_configurations
from featcheck.resolution.context import BuildContext, DepList
from featcheck.resolution.session import TargetSession, build_graph
from featcheck.semantics.cfg import TargetCfg
from featcheck.workspace.cargo_metadata import workspace_from_metadata
from featcheck.workspace.model import NORMAL, MoreFeatures, NewDependency
from featcheck.workspace.workspace import Workspace

LINUX = TargetCfg.parse("x86_64-unknown-linux-gnu", LINUX_CFG)
CHAIN = 200


def _workspace() -> tuple[Workspace, dict[str, int]]:
    """app -> lib -> leaf (whose `extra` turns helper on), and lib -> a chain of CHAIN crates."""
    ws = MetadataBuilder()
    helper = ws.package("helper", {"fast": []})
    leaf = ws.package(
        "leaf",
        {"extra": ["dep:helper"], "more": []},
        [declaration_entry("helper", optional=True)],
    )
    ws.edge(leaf, helper)
    below = ""
    for i in reversed(range(CHAIN)):
        link = ws.package(f"c{i}", {}, [declaration_entry(f"c{i + 1}")] if below else [])
        if below:
            ws.edge(link, below)
        below = link
    lib = ws.package("lib", {"helpers": []}, [declaration_entry("leaf"), declaration_entry("c0")])
    ws.edge(lib, leaf)
    ws.edge(lib, below)
    app = ws.package("app", {}, [declaration_entry("lib", features=["helpers"])], member=True)
    ws.edge(app, lib)
    index = workspace_from_metadata(ws.metadata())
    return index, {p.ref.name: index.by_id[p.id] for p in index.packages}


def _what_if(index: Workspace) -> WhatIf:
    return WhatIf(index, {LINUX.triple: LINUX}, LINUX, 2, None)


def _edits(at: dict[str, int]) -> dict[str, frozenset[MoreFeatures | NewDependency]]:
    lib, helper = at["lib"], at["helper"]
    return {
        "turns an optional dependency on": frozenset(
            {MoreFeatures(lib, "leaf", NORMAL, None, ("extra",))}
        ),
        "adds a feature only": frozenset({MoreFeatures(lib, "leaf", NORMAL, None, ("more",))}),
        "adds a dependency": frozenset({NewDependency(lib, helper, "helper", ("fast",))}),
        "adds one behind a feature": frozenset(
            {NewDependency(lib, helper, "helper", ("fast",), behind="helpers")}
        ),
        "does both": frozenset(
            {
                MoreFeatures(lib, "leaf", NORMAL, None, ("extra",)),
                NewDependency(lib, helper, "helper", ("fast",)),
            }
        ),
    }


def _followed(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The units the resolver follows the dependencies of from now on, in order."""
    followed: list[int] = []
    follow = features.Resolver._follow_dependencies

    def counting(resolver: features.Resolver, key: int) -> None:
        followed.append(key)
        follow(resolver, key)

    monkeypatch.setattr(features.Resolver, "_follow_dependencies", counting)
    return followed


def _assert_resolved_from_scratch(
    index: Workspace,
    member: int,
    edits: frozenset[MoreFeatures | NewDependency],
    graph: DependencyGraph,
) -> None:
    """`graph` is the edited model's build of `member` resolved from scratch: cargo tree's
    order, features and all."""
    context = BuildContext(edited_index(index, edits), LINUX, LINUX, 2)
    state = features.Resolver(context, features.build_requests(context, member), split=False).run()
    fresh = build_graph(context, state, member)
    assert list(graph.nodes()) == list(fresh.nodes())
    for node in fresh.nodes():
        assert graph.dependencies(node) == fresh.dependencies(node)


@pytest.mark.parametrize("edit", list(_edits({"lib": 0, "helper": 0})))
def test_an_edited_build_is_the_one_resolved_from_scratch(edit: str) -> None:
    index, at = _workspace()
    what_if = _what_if(index)
    what_if.graph(frozenset(), at["app"], LINUX.triple)  # the unedited build comes first
    edits = _edits(at)[edit]
    graph = what_if.graph(edits, at["app"], LINUX.triple)
    _assert_resolved_from_scratch(index, at["app"], edits, graph)


def test_an_edit_above_a_long_chain_does_not_resolve_the_chain_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    index, at = _workspace()
    what_if = _what_if(index)
    edits = _edits(at)
    what_if.graph(edits["adds a feature only"], at["app"], LINUX.triple)
    followed = _followed(monkeypatch)
    graph = what_if.graph(edits["turns an optional dependency on"], at["app"], LINUX.triple)
    assert {node.name for node in graph.nodes()} >= {"helper", f"c{CHAIN - 1}"}
    # lib's unit, what it asks again (leaf, c0) and what is new (helper): not the chain.
    assert len(followed) < 10, len(followed)


def test_an_edited_build_lists_again_only_the_dependencies_of_the_edited_packages(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    index, at = _workspace()
    what_if = _what_if(index)
    what_if.graph(frozenset(), at["app"], LINUX.triple)
    listed: list[int] = []
    collect = BuildContext._collect

    def counting(context: BuildContext, key: int, dev: bool) -> DepList:
        listed.append(key >> 1)
        return collect(context, key, dev)

    monkeypatch.setattr(BuildContext, "_collect", counting)
    edits = _edits(at)["turns an optional dependency on"]
    graph = what_if.graph(edits, at["app"], LINUX.triple)
    assert "helper" in {node.name for node in graph.nodes()}
    # lib's lists change with its edit, helper's are new: app's and leaf's are the unedited ones.
    assert set(listed) == {at["lib"], at["helper"]}, sorted(listed)


@pytest.mark.parametrize("edit", list(_edits({"lib": 0, "helper": 0})))
def test_what_if_builds_continue_from_the_audits_own_resolution(
    edit: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    index, at = _workspace()
    sessions: dict[str, TargetSession] = {}
    job = (index.packages[at["app"]].id, DEFAULT)
    audited = resolve_configurations(index, [job], [LINUX], 2, sessions=sessions)
    what_if = WhatIf(index, {LINUX.triple: LINUX}, LINUX, 2, None, audited=sessions)
    followed = _followed(monkeypatch)
    unedited = what_if.graph(frozenset(), at["app"], LINUX.triple)
    edits = _edits(at)[edit]
    graph = what_if.graph(edits, at["app"], LINUX.triple)
    # Only the member's own unit and what the edit asks again: the audit resolved the chain.
    assert len(followed) < 10, len(followed)

    (build,) = audited.values()
    assert list(unedited.nodes()) == list(build.nodes())
    _assert_resolved_from_scratch(index, at["app"], edits, graph)
