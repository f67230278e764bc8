"""Reading cargo tree text: every prefix style and charset, inverted or not, as cargo prints it."""

from __future__ import annotations

import pytest
from support import TREES

from featcheck.cargo.tree_text import TreeTextError, parse_node, parse_tree_text
from featcheck.workspace.model import PackageRef


def _flex_features(name: str) -> list[list[str]]:
    parsed = parse_tree_text((TREES / name).read_text())
    return [sorted(n.features) for n in parsed.graph.named("burn-flex")]


@pytest.mark.parametrize(
    "name",
    [
        "pitb-exec-cpu.normal.indent.txt",
        "pitb-exec-cpu.normal.depth.txt",
        "pitb-exec-cpu.normal.ascii.txt",
        "pitb-exec-cpu.normal.none.txt",
        "pitb-exec-cpu.invert-burn-flex.txt",
        "pitb-exec-cpu.invert-burn-flex.ascii.txt",
        "pitb-exec-cpu.invert-burn-flex.depth0.txt",
    ],
)
def test_every_prefix_style_reads_the_same_burn_flex(name: str) -> None:
    assert _flex_features(name) == [["std"]]


@pytest.mark.parametrize(
    "name",
    [
        "pitb-exec-cpu.normal.indent.txt",
        "pitb-exec-cpu.normal.depth.txt",
        "pitb-exec-cpu.normal.ascii.txt",
    ],
)
def test_structured_styles_recover_the_same_edges(name: str) -> None:
    reference = parse_tree_text((TREES / "pitb-exec-cpu.normal.depth.txt").read_text()).graph
    graph = parse_tree_text((TREES / name).read_text()).graph
    edges = {(a, b) for a in reference.nodes() for b in reference.dependencies(a)}
    assert {(a, b) for a in graph.nodes() for b in graph.dependencies(a)} == edges
    assert len(edges) > 300


def test_inverted_tree_is_turned_back_into_dependency_edges() -> None:
    parsed = parse_tree_text((TREES / "pitb-exec-cpu.invert-burn-flex.txt").read_text())
    assert parsed.inverted
    (flex,) = parsed.graph.named("burn-flex")
    (dispatch,) = parsed.graph.named("burn-dispatch")
    assert flex in parsed.graph.dependencies(dispatch)
    ancestors = {n.name for n in parsed.graph.ancestors(flex)}
    assert {"burn", "burn-core", "burn-dispatch", "pitb-exec-cpu"} <= ancestors


def test_flat_and_depth_zero_output_has_no_structure() -> None:
    for name in ("pitb-exec-cpu.normal.none.txt", "pitb-exec-cpu.invert-burn-flex.depth0.txt"):
        assert not parse_tree_text((TREES / name).read_text()).has_structure


def test_dev_and_build_sections_are_not_normal_edges() -> None:
    parsed = parse_tree_text((TREES / "build-dependency.all-edges.txt").read_text())
    assert parsed.saw_dev_or_build_sections
    # The build-dependency burn (with rayon) is a section child: it is skipped with its subtree.
    assert [sorted(n.features) for n in parsed.graph.named("burn-flex")] == [["std"]]
    assert not parsed.graph.named("version_check")


def test_workspace_root_output_has_one_root_per_member() -> None:
    parsed = parse_tree_text((TREES / "workspace-unification.root.txt").read_text())
    assert [r.name for r in parsed.roots] == ["app", "bench"]


def test_node_suffixes_proc_macro_and_sources_with_spaces_and_parentheses() -> None:
    parsed = parse_node("my-derive v0.1.0 (proc-macro) (/home/me/my project (copy)) [] (*)")
    assert parsed is not None
    node, repeated = parsed
    assert node.proc_macro and repeated
    assert node.package == PackageRef("my-derive", "0.1.0", "/home/me/my project (copy)")
    assert node.package.is_local
    git = parse_node("gemm v0.19.0 (https://github.com/sarah-quinones/gemm#1a2b3c) [rayon,std]")
    assert git is not None and not git[0].package.is_local
    assert git[0].features == frozenset({"rayon", "std"})


def test_github_log_timestamps_and_cargo_status_lines_are_ignored() -> None:
    text = (
        "2026-11-30T10:00:00.1234567Z     Updating crates.io index\n"
        "2026-11-30T10:00:01.0000000Z burn-flex v0.22.1 [std]\n"
        "2026-11-30T10:00:01.0000000Z └── burn-dispatch v0.22.1 [flex,std]\n"
        "2026-11-30T10:00:01.0000000Z     └── app v0.1.0 (/src/app) []\n"
    )
    parsed = parse_tree_text(text)
    assert parsed.inverted and parsed.has_structure
    assert {n.name for n in parsed.graph.nodes()} == {"burn-flex", "burn-dispatch", "app"}


def test_crlf_line_endings() -> None:
    text = "app v0.1.0 (/src/app) []\r\n└── burn-flex v0.22.1 [std]\r\n"
    assert [n.name for n in parse_tree_text(text).graph.nodes()] == ["app", "burn-flex"]


def test_tree_without_feature_lists_is_rejected_with_its_line() -> None:
    with pytest.raises(TreeTextError) as caught:
        parse_tree_text("app v0.1.0 (/src/app)\n└── burn-flex v0.22.1\n")
    assert caught.value.line == 1
    assert "-f '{p} [{f}]'" in str(caught.value)


def test_text_without_any_tree_is_rejected() -> None:
    with pytest.raises(TreeTextError):
        parse_tree_text("hello\nworld\n")


def _linked(text: str) -> list[tuple[str, list[str]]]:
    """(name, features) of what the tree's first root links: its target side."""
    parsed = parse_tree_text(text)
    (root,) = [n for n in parsed.graph.nodes() if n.name == "app"][:1]
    return sorted((n.name, sorted(n.features)) for n in parsed.graph.target_side((root,)))


# `cargo tree -e normal --target T`: nom is used by the binary and by its proc-macro with the
# same features, and only the target side's memchr has `std`. cargo prints nom twice in full.
BOTH_SIDES = """\
app v0.1.0 (/w/app) []
├── macros v0.1.0 (proc-macro) (/w/macros) []
│   └── nom v8.0.0 [alloc]
│       └── memchr v2.8.3 []
├── memchr v2.8.3 [alloc,default,std]
└── nom v8.0.0 [alloc]
    └── memchr v2.8.3 [alloc,default,std]
"""


def test_a_unit_used_on_both_sides_is_two_nodes() -> None:
    graph = parse_tree_text(BOTH_SIDES).graph
    assert [(n.name, n.host) for n in graph.named("nom")] == [("nom", True), ("nom", False)]
    assert _linked(BOTH_SIDES) == [
        ("app", []),
        ("memchr", ["alloc", "default", "std"]),
        ("nom", ["alloc"]),
    ]


def test_inverted_tree_tells_the_sides_apart_from_the_dependents() -> None:
    # `cargo tree -e normal --target T -i memchr` of the same build: one tree per unit.
    text = """\
memchr v2.8.3 []
└── nom v8.0.0 [alloc]
    └── macros v0.1.0 (proc-macro) (/w/macros) []
        └── app v0.1.0 (/w/app) []

memchr v2.8.3 [alloc,default,std]
├── app v0.1.0 (/w/app) []
└── nom v8.0.0 [alloc]
    └── app v0.1.0 (/w/app) []
"""
    assert _linked(text) == _linked(BOTH_SIDES)
    graph = parse_tree_text(text).graph
    assert sorted((n.name, n.host) for n in graph.named("nom")) == [("nom", False), ("nom", True)]


def test_without_target_cargo_merges_the_sides_and_so_does_the_reader() -> None:
    # Without --target a host unit and a target unit with the same features are one, and the
    # second print of it is a `(*)` under the proc-macro: the text cannot tell them apart.
    text = """\
app v0.1.0 (/w/app) []
├── macros v0.1.0 (proc-macro) (/w/macros) []
│   └── nom v8.0.0 [alloc]
│       └── memchr v2.8.3 [alloc,default,std]
└── nom v8.0.0 [alloc] (*)
"""
    graph = parse_tree_text(text).graph
    assert [n.host for n in graph.nodes()] == [False, True, False, False]
    assert _linked(text) == [
        ("app", []),
        ("memchr", ["alloc", "default", "std"]),
        ("nom", ["alloc"]),
    ]
