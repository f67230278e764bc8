"""A fix that turns on a dependency cargo's resolve lacks gets the locked version, in one pass.

cargo's resolve (what `cargo metadata` printed) has no edge for an optional dependency no build
turned on. When an edit turns one on and Cargo.lock holds a version that fits, cargo binds it
to that version, and what it asks may turn on another such dependency in turn. The what-if
build holds them all, and is resolved once: binding each only after a resolution turned it on
meant resolving the build again per step.
"""

from __future__ import annotations

import gc
import weakref

import pytest
from metadata_builder import MetadataBuilder, declaration_entry
from support import LINUX_CFG

from featcheck.fixes.counterfactual import WhatIf
from featcheck.fixes.lockcheck import LockView
from featcheck.graph import DependencyGraph
from featcheck.resolution.session import TargetSession
from featcheck.semantics.cfg import TargetCfg
from featcheck.workspace.cargo_metadata import workspace_from_metadata
from featcheck.workspace.model import NORMAL, MoreFeatures
from featcheck.workspace.workspace import Workspace

LINUX = TargetCfg.parse("x86_64-unknown-linux-gnu", LINUX_CFG)


def _workspace() -> Workspace:
    """app -> lib; lib's `extra` turns on helper (`fast`), whose `fast` turns on deeper.
    Neither optional edge is in the resolve; both versions are, through `other`."""
    ws = MetadataBuilder()
    deeper = ws.package("deeper", {})
    helper = ws.package(
        "helper",
        {"fast": ["dep:deeper"], "deeper": ["dep:deeper"]},
        [declaration_entry("deeper", req="^1", optional=True)],
    )
    other = ws.package("other", {}, [declaration_entry("helper"), declaration_entry("deeper")])
    ws.edge(other, helper)
    ws.edge(other, deeper)
    lib = ws.package(
        "lib",
        {"extra": ["dep:helper"], "helper": ["dep:helper"]},
        [declaration_entry("helper", req="^1", optional=True, features=["fast"])],
    )
    app = ws.package("app", {}, [declaration_entry("lib"), declaration_entry("other")], member=True)
    ws.edge(app, lib)
    ws.edge(app, other)
    return workspace_from_metadata(ws.metadata())


def _children(graph: DependencyGraph, name: str) -> set[str]:
    node = next(node for node in graph.nodes() if node.name == name)
    return {child.name for child in graph.dependencies(node)}


def test_what_an_edit_turns_on_is_bound_to_the_lock_and_resolved_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    index = _workspace()
    at = {p.ref.name: index.by_id[p.id] for p in index.packages}
    what_if = WhatIf(index, {LINUX.triple: LINUX}, LINUX, 2, None, LockView(index))
    unedited = what_if.graph(frozenset(), at["app"], LINUX.triple)
    assert _children(unedited, "lib") == set()
    resolved: list[int] = []
    graph_of = TargetSession.graph

    def counting(session: TargetSession, member: int, *rest: object) -> DependencyGraph:
        resolved.append(member)
        return graph_of(session, member, *rest)  # type: ignore[arg-type]

    monkeypatch.setattr(TargetSession, "graph", counting)
    edit = frozenset({MoreFeatures(at["app"], "lib", NORMAL, None, ("extra",))})
    graph = what_if.graph(edit, at["app"], LINUX.triple)
    assert _children(graph, "lib") == {"helper"}
    assert _children(graph, "helper") == {"deeper"}
    assert what_if.needs(graph) == []  # both bound to the locked versions: nothing for cargo
    assert resolved == [at["app"]]


def test_a_what_if_is_freed_as_soon_as_it_is_dropped() -> None:
    """What a what-if holds (every edited build of a fix search) goes with it, without waiting
    for the garbage collector, which walks every object alive while a cycle is kept (a
    quarter of uv's audit in a process that audits again after each edit)."""
    index = _workspace()
    at = {p.ref.name: index.by_id[p.id] for p in index.packages}
    what_if = WhatIf(index, {LINUX.triple: LINUX}, LINUX, 2, None, LockView(index))
    edit = frozenset({MoreFeatures(at["app"], "lib", NORMAL, None, ("extra",))})
    what_if.graph(edit, at["app"], LINUX.triple)
    dropped = weakref.ref(what_if)
    gc.disable()
    try:
        del what_if
        assert dropped() is None
    finally:
        gc.enable()
