"""Host and target builds kept apart: a crate a proc-macro or a build script uses is not linked.

Two fixture workspaces, each a binary `app` with a proc-macro member `macros`, both using nom
8 with the same features, so nom is one package built once for each side:

- proc-macro-host-only: only the proc-macro's memchr lacks `std` (the binary asks for it):
  nothing the binary links is slow, so no finding and no fix;
- proc-macro-target: the binary's memchr lacks `std`, while the proc-macro's nom and the build
  script's memchr have it on the host: FC012 for the binary, whose fix cargo confirms.

Under resolver 1 host and target features unify, so the host's `std` reaches the binary and
neither workspace has a finding; real `cargo tree --target` says the same in every case.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
from cargo_tree_oracle import run_in_process_resolved_by
from cli_in_process import run_in_process
from support import WORKSPACES

from featcheck.cargo.tree_text import parse_tree_text

X86_64 = "x86_64-unknown-linux-gnu"
"""FC012 is a rule for x86_64: every audit here names that target, whatever the host."""


def _copy(workspace: str, resolver: str, tmp_path: Path) -> Path:
    """The fixture as committed (resolver 2), or with `resolver = "1"`."""
    project = tmp_path / workspace
    shutil.copytree(WORKSPACES / workspace, project)
    manifest = project / "Cargo.toml"
    text = manifest.read_text()
    manifest.write_text(text.replace('resolver = "2"', f'resolver = "{resolver}"'))
    return project


TREE = ("cargo", "tree", "-e", "normal", "-p", "app", "-f", "{p} [{f}]", "--prefix", "depth")


def _linked_memchr(project: Path) -> list[list[str]]:
    """The features of every memchr the binary links, as real `cargo tree --target` shows."""
    text = subprocess.run(
        [*TREE, "--target", X86_64, "--locked", "--offline"],
        cwd=project,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    graph = parse_tree_text(text).graph
    root = next(graph.nodes())
    linked = graph.target_side((root,))
    return sorted(sorted(n.features) for n in graph.named("memchr") if n in linked)


def _audit(project: Path, resolver: str, *flags: str) -> subprocess.CompletedProcess[str]:
    return run_in_process_resolved_by(
        resolver, str(project), "--target", X86_64, "--format", "json", *flags
    )


# (workspace, resolver setting) -> (the binary's memchr as cargo builds it, findings).
CASES = {
    ("proc-macro-host-only", "2"): (["alloc", "default", "std"], []),
    ("proc-macro-target", "2"): ([], [("app", "FC012", "warning", "app/Cargo.toml:10:27")]),
    ("proc-macro-host-only", "1"): (["alloc", "default", "std"], []),
    ("proc-macro-target", "1"): (["alloc", "default", "std"], []),
}


_LINKED: dict[tuple[str, str], list[list[str]]] = {}
"""`_linked_memchr` of each case's copy, asked of cargo once for both resolvers' tests."""


@pytest.mark.parametrize("resolver", ["featcheck", "cargo"])
@pytest.mark.parametrize(("workspace", "setting"), sorted(CASES))
@pytest.mark.usefixtures("remembered_cargo")
def test_only_what_the_binary_links_is_judged(
    workspace: str,
    setting: str,
    resolver: str,
    tmp_path: Path,
    offline_cargo_for: Callable[..., Path],
) -> None:
    """Both resolvers audit one `cargo metadata` answer (`remembered_cargo`: the first is real
    cargo's); with `cargo`, each build is real `cargo tree`'s."""
    offline_cargo_for(WORKSPACES / workspace)
    project = _copy(workspace, setting, tmp_path)
    memchr, expected = CASES[(workspace, setting)]
    if (workspace, setting) not in _LINKED:
        _LINKED[(workspace, setting)] = _linked_memchr(project)
    assert _LINKED[(workspace, setting)] == [memchr]

    result = _audit(project, resolver)
    assert result.returncode == (1 if expected else 0), result.stderr
    findings = json.loads(result.stdout)["findings"]
    assert [
        (f["member"], f["code"], f["severity"], "{file}:{line}:{column}".format(**f["location"]))
        for f in findings
    ] == expected
    for finding in findings:
        # The chain names no member whose memchr only a proc-macro uses.
        assert not any("macros" in line for line in finding["chain"]), finding["chain"]
        (edit,) = finding["fix"]["edits"]
        assert (edit["file"], edit["line"], edit["declaration"], edit["features"]) == (
            "app/Cargo.toml",
            10,
            ["dependencies", "memchr"],
            ["std"],
        )


def test_the_fix_gives_the_linked_memchr_std(
    tmp_path: Path, offline_cargo_for: Callable[..., Path]
) -> None:
    offline_cargo_for(WORKSPACES / "proc-macro-target")
    project = _copy("proc-macro-target", "2", tmp_path)
    result = _audit(project, "featcheck", "--fix")
    assert result.returncode == 0, result.stderr
    assert "featcheck: fixed 1 file" in result.stderr
    assert _linked_memchr(project) == [["alloc", "std"]]
    assert json.loads(_audit(project, "cargo").stdout)["findings"] == []


def test_a_crate_only_the_proc_macro_uses_gets_no_fix(
    tmp_path: Path, offline_cargo_for: Callable[..., Path]
) -> None:
    offline_cargo_for(WORKSPACES / "proc-macro-host-only")
    project = _copy("proc-macro-host-only", "2", tmp_path)
    files = [project / "Cargo.toml", project / "app" / "Cargo.toml", project / "Cargo.lock"]
    before = [path.read_text() for path in files]
    result = run_in_process(str(project), "--target", X86_64, "--diff")
    assert result.returncode == 0, result.stderr
    assert result.stdout == ""
    assert "FC012" not in result.stderr
    assert [path.read_text() for path in files] == before
