"""Where a finding points and what its fix edits, on the shapes where walking the declarations
in sorted order blamed a line whose change fixes nothing.

Each fixture is audited, fixed with `--fix`, and then real cargo is asked whether the crate is
now built with the feature; the re-audit `--fix` prints must hold no finding of that crate.
featcheck runs in the test's process (cli_in_process.run_in_process) and asks real cargo once
per distinct question (the `remembered_cargo` fixture: `--fix` audits the workspace again);
what cargo builds of the fixture and of the fixed checkout is asked of real cargo (`cargo
tree`). A fixture's report as committed, and its copy fixed, are made once in this module and
asserted by every test that asks (`_Audits`).
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from cli_in_process import run_in_process
from support import WORKSPACES

pytestmark = pytest.mark.usefixtures("remembered_cargo")


@dataclass(frozen=True)
class Shape:
    member: str
    code: str
    crate: str
    place: str
    """file:line of the finding's location, relative to the workspace root."""
    edit: tuple[str, tuple[str, ...], str, tuple[str, ...]]
    """(file, declaration key path, action, features) of the fix's one edit."""
    built: tuple[str, ...]
    """Features real cargo must build on the crate after `--fix`."""
    members: tuple[str, ...] = ()
    """Other members whose build `--fix` must also repair."""
    also_edited: tuple[str, ...] = ()
    """Files of the fix's further edits."""


SHAPES = {
    # A path dependency that sorts first says `default-features = false`, but its defaults bring
    # nothing: the member's own burn declaration is the place.
    "shape-a-path-dep-first": Shape(
        "app",
        "FC001",
        "burn-flex",
        "Cargo.toml:9",
        ("Cargo.toml", ("dependencies", "burn"), "add-features", ("rayon", "simd")),
        ("rayon", "simd"),
    ),
    # The binary's own `default-features = false` on its path library changes nothing: the
    # workspace entry every member inherits is the cut, and one edit there fixes both members.
    "shape-b-bin-through-lib": Shape(
        "app",
        "FC001",
        "burn-flex",
        "Cargo.toml:6",
        (
            "Cargo.toml",
            ("workspace", "dependencies", "burn"),
            "add-features",
            ("rayon", "simd"),
        ),
        ("rayon", "simd"),
        ("mylib",),
    ),
    # ndarray passes `matrixmultiply-threading` on; the dependency sorting first does not.
    "shape-c-ndarray-sorted-first": Shape(
        "app",
        "FC009",
        "matrixmultiply",
        "Cargo.toml:9",
        (
            "Cargo.toml",
            ("dependencies", "ndarray"),
            "add-features",
            ("matrixmultiply-threading",),
        ),
        ("threading",),
    ),
    # `default-features = false` next to `workspace = true` is ignored by cargo; the root
    # entry is the cut. burn 0.21.0 brings rayon and simd only through its defaults, but they
    # add 44 packages to `tool`'s build (its `autodiff` with burn's defaults): the member
    # depends on burn-flex instead.
    "shape-d-workspace-repeat": Shape(
        "app",
        "FC001",
        "burn-flex",
        "Cargo.toml:6",
        ("app/Cargo.toml", ("dependencies", "burn-flex"), "add-dependency", ("rayon", "simd")),
        ("rayon", "simd"),
    ),
    # matrixmultiply is already a dependency: its own declaration gets the feature.
    "shape-e-already-a-dependency": Shape(
        "app",
        "FC009",
        "matrixmultiply",
        "Cargo.toml:9",
        ("Cargo.toml", ("dependencies", "matrixmultiply"), "add-features", ("threading",)),
        ("threading",),
    ),
    # burn 0.21.0 has no rayon passthrough: the path library's declaration loses its
    # `default-features = false`, which brings simd too (rayon alone would raise FC003).
    "shape-f-burn-021-companion": Shape(
        "app",
        "FC001",
        "burn-flex",
        "a-model/Cargo.toml:8",
        ("a-model/Cargo.toml", ("dependencies", "burn"), "remove-default-features", ()),
        ("rayon", "simd"),
    ),
    # Two binaries on a workspace library whose burn 0.21 line cuts burn-ndarray's threading
    # (no passthrough): the library owns the cut, and one new line there fixes all three
    # members, not one line per binary.
    "shape-i-library-owns-the-cut": Shape(
        "cli",
        "FC002",
        "burn-ndarray",
        "core/Cargo.toml:8",
        ("core/Cargo.toml", ("dependencies", "burn-ndarray"), "add-dependency", ("multi-threads",)),
        ("multi-threads",),
        ("api", "core-lib"),
    ),
    # Only a new dependency helps (tch passes nothing on), with a caret requirement.
    "shape-g-new-dependency": Shape(
        "app",
        "FC009",
        "matrixmultiply",
        "Cargo.toml:8",
        ("Cargo.toml", ("dependencies", "matrixmultiply"), "add-dependency", ("threading",)),
        ("threading",),
    ),
}


def _audit(project: Path, *args: str) -> tuple[dict[str, Any], subprocess.CompletedProcess[str]]:
    # Places relative to the project, wherever it lies (a copy, or a fixture in the repository).
    result = run_in_process(str(project), "--format", "json", "--root", str(project), *args)
    assert result.returncode in (0, 1), result.stderr
    return json.loads(result.stdout), result


def _built_features(project: Path, member: str, crate: str) -> set[str]:
    """What real cargo builds on `crate` for `member`."""
    output = subprocess.run(
        ["cargo", "tree", "-e", "normal", "-p", member, "-i", crate, "-f", "{p} [{f}]"],
        cwd=project,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    first = output.splitlines()[0]
    match = re.search(r"\[([^\]]*)\]$", first)
    assert match is not None, first
    return set(filter(None, match.group(1).split(",")))


class _Audits:
    """What several tests assert of one fixture, made once in this module: the JSON report of the
    fixture as committed (a copy reports the same: places are relative to its root), and a copy
    fixed by `--fix --fix-level info` (a library's fix too) with the report that run printed.
    Each test points cargo at the fixture's view of the registry before it asks."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self._reports: dict[str, dict[str, Any]] = {}
        self._fixed: dict[str, tuple[Path, dict[str, Any], str]] = {}

    def committed(self, name: str) -> dict[str, Any]:
        if name not in self._reports:
            self._reports[name], _ = _audit(WORKSPACES / name)
        return self._reports[name]

    def fixed(self, name: str) -> tuple[Path, dict[str, Any], str]:
        """The fixed copy, the report `--fix` printed and what it said on stderr."""
        if name not in self._fixed:
            project = self.directory / name
            shutil.copytree(WORKSPACES / name, project)
            after, result = _audit(project, "--fix", "--fix-level", "info")
            self._fixed[name] = (project, after, result.stderr)
        return self._fixed[name]


@pytest.fixture(scope="module")
def audits(tmp_path_factory: pytest.TempPathFactory) -> _Audits:
    return _Audits(tmp_path_factory.mktemp("shapes"))


@pytest.mark.parametrize("name", sorted(SHAPES))
def test_the_located_line_is_the_one_whose_change_cargo_builds(
    name: str, audits: _Audits, offline_cargo_for: Callable[..., Path]
) -> None:
    shape = SHAPES[name]
    committed = WORKSPACES / name
    # The view holds what the fixes turn on or add: cargo resolves the fixed copy with it.
    offline_cargo_for(committed)
    report = audits.committed(name)
    (finding,) = [f for f in report["findings"] if f["member"] == shape.member]
    assert finding["code"] == shape.code
    assert "{file}:{line}".format(**finding["location"]) == shape.place
    fix = finding["fix"]
    assert fix["safe"] and fix["confirmed"]
    edit = fix["edits"][0]
    assert (edit["file"], tuple(edit["declaration"]), edit["action"], tuple(edit["features"])) == (
        shape.edit
    )
    assert tuple(e["file"] for e in fix["edits"][1:]) == shape.also_edited
    # No alternative adds a dependency the member already declares, or carries a false reason.
    for alternative in finding["alternatives"]:
        assert "outside the workspace" not in (alternative.get("note") or "")
    for member in (shape.member, *shape.members):
        assert not set(shape.built) <= _built_features(committed, member, shape.crate)

    project, after, said = audits.fixed(name)
    assert "featcheck: fixed" in said
    assert [f for f in after["findings"] if f["crate"] == shape.crate] == []
    for member in (shape.member, *shape.members):
        assert set(shape.built) <= _built_features(project, member, shape.crate), member


def test_a_workspace_line_spelled_with_escapes_is_edited_like_the_plain_one(
    tmp_path: Path, audits: _Audits, offline_cargo_for: Callable[..., Path]
) -> None:
    # `"bu\u0072n" = { "work\u0073pace" = true, ... }` is `burn = { workspace = true, ... }`
    # to cargo: the fix removes its repeated `default-features = false` as well.
    project = tmp_path / "escaped"
    shutil.copytree(WORKSPACES / "shape-d-workspace-repeat", project)
    offline_cargo_for(project)
    tool = project / "tool" / "Cargo.toml"
    plain = "burn = { workspace = true,"
    assert plain in tool.read_text()
    tool.write_text(tool.read_text().replace(plain, '"bu\\u0072n" = { "work\\u0073pace" = true,'))
    report, _ = _audit(project)
    expected = audits.committed("shape-d-workspace-repeat")
    assert [f["fix"] for f in report["findings"]] == [f["fix"] for f in expected["findings"]]
    assert "tool/Cargo.toml" in [e["file"] for f in report["findings"] for e in f["fix"]["edits"]]


def test_a_new_dependency_gets_a_caret_requirement(
    audits: _Audits, offline_cargo_for: Callable[..., Path]
) -> None:
    offline_cargo_for(WORKSPACES / "shape-g-new-dependency")
    (finding,) = audits.committed("shape-g-new-dependency")["findings"]
    assert finding["fix"]["edits"][0]["version"] == "0.3.11"
    project, _, _ = audits.fixed("shape-g-new-dependency")  # app is a library: --fix-level info
    assert (
        'matrixmultiply = { version = "0.3.11", default-features = false, features = ["threading"] }'
        in (project / "Cargo.toml").read_text()
    )


@pytest.mark.parametrize(("pinned", "requirement"), [(False, "0.22.1"), (True, "=0.22.1")])
def test_a_suggested_new_dependency_reads_as_fix_writes_it(
    tmp_path: Path, offline_cargo_for: Callable[..., Path], pinned: bool, requirement: str
) -> None:
    """Where no edit is found (burn-flex's `x86-v4` behind a library that does not pass it on),
    the text still says what to add: with the requirement a `--fix` edit gets (a caret, `=`
    only where the user pins burn exactly), the one the JSON alternatives carry too."""
    project = tmp_path / "lib-chain"
    shutil.copytree(WORKSPACES / "lib-chain", project)
    offline_cargo_for(project)
    if not pinned:
        manifest = project / "model" / "Cargo.toml"
        manifest.write_text(manifest.read_text().replace('"=0.22.1"', '"0.22.1"'))
    text = run_in_process(str(project), "--select", "FC007")
    assert text.returncode == 1, text.stderr
    direct = f'burn-flex = {{ version = "{requirement}", default-features = false'
    said = [line for line in text.stdout.splitlines() if "depend on burn-flex directly" in line]
    assert said and all(direct in line for line in said), said
    report, _ = _audit(project)
    added = [
        e
        for f in report["findings"]
        for a in f["alternatives"]
        for e in a["edits"]
        if e["action"] == "add-dependency"
    ]
    assert added and {e["version"] for e in added} == {requirement}


def test_an_exact_pin_of_the_crate_family_is_kept(
    audits: _Audits, offline_cargo_for: Callable[..., Path]
) -> None:
    offline_cargo_for(WORKSPACES / "shape-f-burn-021-companion")
    # burn is pinned `=0.21.0`, so burn-flex would be too.
    report = audits.committed("shape-f-burn-021-companion")
    (finding,) = report["findings"]
    added = [
        e for a in finding["alternatives"] for e in a["edits"] if e["action"] == "add-dependency"
    ]
    assert [e["version"] for e in added] == ["=0.21.0"]


def test_an_allow_on_the_members_own_line_counts_where_the_fix_goes_elsewhere(
    offline_cargo_for: Callable[..., Path],
) -> None:
    offline_cargo_for(WORKSPACES / "shape-h-allow-on-direct-line")
    # The allow sits on app's `mylib` line; the finding points at the workspace entry.
    report, result = _audit(WORKSPACES / "shape-h-allow-on-direct-line")
    assert [(f["member"], f["code"]) for f in report["findings"]] == [("mylib", "FC001")]
    assert result.returncode == 0


def test_an_allow_on_the_backend_declaration_matches(
    tmp_path: Path, offline_cargo_for: Callable[..., Path]
) -> None:
    project = tmp_path / "app"
    shutil.copytree(WORKSPACES / "shape-a-path-dep-first", project)
    offline_cargo_for(project)
    manifest = project / "Cargo.toml"
    lines = manifest.read_text().splitlines()
    lines[8] += "  # featcheck: allow(FC001, FC003) measured: one thread is faster for our sizes"
    manifest.write_text("\n".join(lines) + "\n")
    report, result = _audit(project)
    assert report["findings"] == []
    assert result.returncode == 0


def test_a_cut_in_a_workspace_library_is_one_finding_for_every_member_built_on_it(
    audits: _Audits, offline_cargo_for: Callable[..., Path]
) -> None:
    project = WORKSPACES / "shape-i-library-owns-the-cut"
    offline_cargo_for(project)
    report = audits.committed(project.name)
    groups = {f["group"] for f in report["findings"]}
    assert len(groups) == 1 and [f["member"] for f in report["findings"]] == [
        "api",
        "cli",
        "core-lib",
    ]
    assert {"{file}:{line}:{column}".format(**f["location"]) for f in report["findings"]} == {
        "core/Cargo.toml:8:30"
    }
    assert all(f["placement"] == "" for f in report["findings"])
    text = run_in_process(str(project), "--root", str(project))
    assert text.stdout.count("error[FC002]") == 1, text.stdout
    assert "builds: 3 members: api, cli, core-lib (library)" in text.stdout
    assert "= placed:" not in text.stdout


def test_a_new_dependency_in_the_member_says_the_cut_lies_in_a_crate_it_does_not_own(
    audits: _Audits, offline_cargo_for: Callable[..., Path]
) -> None:
    project = WORKSPACES / "shape-g-new-dependency"
    offline_cargo_for(project)
    report = audits.committed(project.name)
    (finding,) = report["findings"]
    assert finding["placement"] == (
        "in app's own manifest: the cut lies beyond tch 0.22.0, in a crate the workspace does "
        "not own"
    )
    text = run_in_process(str(project), "--root", str(project), "--fail-on", "never")
    assert "= placed: in app's own manifest: the cut lies beyond tch 0.22.0" in text.stdout
