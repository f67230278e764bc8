"""The member's backend read from its graph, and resolved by cargo on the stub registry
(probe/resolve.py).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from probe_support import copy_project, probe_runner, resolve_member

from featcheck.cargo.tree_text import parse_tree_text
from featcheck.errors import FeatcheckError
from featcheck.probe.resolve import Pin, backend_from_graph, matmul_config

TREE = """\
0app v0.1.0 (/w/app) []
1burn v0.22.1 [flex,std]
2burn-core v0.22.1 [flex,std]
3burn-dispatch v0.22.1 [flex,std]
4burn-flex v0.22.1 [rayon,std]
5gemm v0.19.0 [f16,gemm-f16,rayon,std]
6gemm-common v0.19.0 [f16,rayon,std]
6gemm-f32 v0.19.0 [rayon,std]
5rayon v1.12.0 []
5burn-backend v0.22.1 [std]
1gemm-common v0.18.2 [std]
"""


def test_backend_from_graph_pins_burn_flex_the_gemm_crates_below_it_and_burn_backend() -> None:
    config = backend_from_graph(parse_tree_text(TREE).graph, "app", "x86_64-unknown-linux-gnu")
    assert config.burn_version == "0.22.1"
    assert config.backend == Pin("burn-flex", "0.22.1", ("rayon", "std"))
    # gemm-common 0.18.2 is not below burn-flex: it is not pinned.
    assert [str(p) for p in config.pins[1:]] == [
        "gemm 0.19.0 [f16,gemm-f16,rayon,std]",
        "gemm-common 0.19.0 [f16,rayon,std]",
        "gemm-f32 0.19.0 [rayon,std]",
        "burn-backend 0.22.1 [std]",  # the traits the matmul program calls
    ]


def test_backend_from_graph_ignores_a_copy_only_a_proc_macro_uses() -> None:
    # A proc-macro's burn-flex runs in the compiler: the member links the one above.
    host = TREE + "1macros v0.1.0 (proc-macro) (/w/macros) []\n2burn-flex v0.22.1 [std]\n"
    config = backend_from_graph(parse_tree_text(host).graph, "app", "x86_64-unknown-linux-gnu")
    assert config.backend == Pin("burn-flex", "0.22.1", ("rayon", "std"))


def test_backend_from_graph_refuses_what_it_cannot_reproduce() -> None:
    target = "x86_64-unknown-linux-gnu"
    with pytest.raises(FeatcheckError, match="does not build burn-flex"):
        backend_from_graph(parse_tree_text("0app v0.1.0 (/w) []\n").graph, "app", target)
    git = TREE.replace(
        "4burn-flex v0.22.1 [rayon,std]",
        "4burn-flex v0.22.1 (https://github.com/tracel-ai/burn#abc) [rayon,std]",
    )
    with pytest.raises(FeatcheckError, match="registry crates only"):
        backend_from_graph(parse_tree_text(git).graph, "app", target)
    two = TREE + "1burn-flex v0.21.0 [std]\n"
    with pytest.raises(FeatcheckError, match="builds burn-flex 2 times"):
        backend_from_graph(parse_tree_text(two).graph, "app", target)


def test_two_versions_of_burn_flex_are_refused(
    tmp_path: Path, offline_cargo_for: Callable[..., Path]
) -> None:
    project = copy_project(tmp_path, "two-versions", offline_cargo_for)
    with pytest.raises(FeatcheckError, match="builds burn-flex 2 times"):
        matmul_config(resolve_member(probe_runner(project)))


def test_compare_fix_resolves_the_fixed_feature_set(
    tmp_path: Path, offline_cargo_for: Callable[..., Path]
) -> None:
    from featcheck.pipeline import audit_project
    from featcheck.probe.command import fix_changes, graph_with_changes
    from featcheck.probe.member import member_findings

    project = copy_project(tmp_path, "crate-feature", offline_cargo_for)
    manifest_before = (project / "Cargo.toml").read_text()
    resolved = resolve_member(probe_runner(project))
    changes, described = fix_changes(member_findings(audit_project, resolved))
    assert changes and described and "FC001" in described
    after = graph_with_changes(resolved, changes)
    fixed = matmul_config(after, label="with featcheck's fix")
    assert "rayon" in fixed.backend.features
    assert fixed.label == "with featcheck's fix"
    assert fixed.lockfile is not None
    assert (project / "Cargo.toml").read_text() == manifest_before  # the user's files untouched


def test_compare_fix_writes_nothing_through_a_linked_manifest(
    tmp_path: Path, offline_cargo_for: Callable[..., Path]
) -> None:
    """The library's Cargo.toml is a link inside the checkout, and the fix edits it: the probe
    resolves the fix on the fixes' copy, whose link is a file of its own, so neither the link
    nor the file it points at changes."""
    from featcheck.pipeline import audit_project
    from featcheck.probe.command import fix_changes, graph_with_changes
    from featcheck.probe.member import member_findings
    from featcheck.probe.resolve import member_graph

    project = copy_project(tmp_path, "lib-chain", offline_cargo_for)
    shared = project / "shared-model.toml"
    (project / "model" / "Cargo.toml").rename(shared)
    (project / "model" / "Cargo.toml").symlink_to(shared)  # absolute: into the checkout
    written = {
        p: p.read_bytes() for p in project.rglob("*") if p.is_file() and "target" not in p.parts
    }
    resolved = member_graph(probe_runner(project), project / "cli" / "Cargo.toml", None)
    changes, described = fix_changes(member_findings(audit_project, resolved))
    assert [change.path.resolve() for change in changes] == [shared.resolve()], described
    fixed = matmul_config(graph_with_changes(resolved, changes))
    assert "rayon" in fixed.backend.features
    assert (project / "model" / "Cargo.toml").is_symlink()
    after = {
        p: p.read_bytes() for p in project.rglob("*") if p.is_file() and "target" not in p.parts
    }
    assert after == written


def test_a_member_is_chosen_in_either_spelling_as_the_audit_chooses_it(
    tmp_path: Path, offline_cargo_for: Callable[..., Path]
) -> None:
    """`featcheck probe -p my_app` times `my-app`, as `featcheck -p my_app` audits it."""
    from featcheck.probe.resolve import member_graph

    project = copy_project(tmp_path, "direct-flex", offline_cargo_for)
    for name in ("Cargo.toml", "Cargo.lock"):
        written = (project / name).read_text()
        (project / name).write_text(written.replace('name = "app"', 'name = "my-app"'))
    runner = probe_runner(project)
    assert member_graph(runner, project / "Cargo.toml", "my_app").member.name == "my-app"
    with pytest.raises(
        FeatcheckError, match=r"no workspace member named my_ap \(members: my-app\)"
    ):
        member_graph(runner, project / "Cargo.toml", "my_ap")
