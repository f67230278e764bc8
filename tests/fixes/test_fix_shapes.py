"""Where a finding points and what its fix edits, on the shapes where walking the declarations
in sorted order blamed a line whose change fixes nothing (tests/fix_shapes.py); and on every
fixture with a lockfile, that each confirmed fix `--fix` applies holds in cargo.

Each fixture is copied, audited and fixed with `--fix --fix-level info` once in this module
(tests/fixed_checkouts.py), and every test that asks checks its part of that run: where the
finding points, what the fix edits, that real cargo now builds the crate with the feature, and
that the re-audit `--fix` prints holds no finding of that crate. featcheck runs in the test's
process (cli_in_process.run_in_process) and asks real cargo once per distinct question (the
`remembered_cargo` fixture: `--fix` audits the workspace again); what cargo builds of the
fixture and of the fixed checkout is asked of real cargo (`cargo tree`).
"""

from __future__ import annotations

import difflib
import json
import re
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from cli_in_process import run_in_process
from fix_shapes import SHAPES
from fixed_checkouts import FixedCheckouts, manifests
from support import WORKSPACES

pytestmark = pytest.mark.usefixtures("remembered_cargo")


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


@pytest.fixture(scope="module")
def checkouts(tmp_path_factory: pytest.TempPathFactory) -> FixedCheckouts:
    """Each fixture copied, audited and fixed once for the module: the tests below each check
    a part of the same audit and `--fix` run. A copy reports what the fixture as committed
    does (places are relative to its root)."""
    return FixedCheckouts(tmp_path_factory)


@pytest.mark.parametrize("name", sorted(SHAPES))
def test_the_located_line_is_the_one_whose_change_cargo_builds(
    name: str, checkouts: FixedCheckouts, offline_cargo_for: Callable[..., Path]
) -> None:
    shape = SHAPES[name]
    committed = WORKSPACES / name
    checkout = checkouts.of(name)
    # The view holds what the fixes turn on or add: cargo resolves the fixed copy with it.
    offline_cargo_for(checkout.project)
    report = checkout.report
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
    # cargo over the packages the committed lockfile names (it reads every one of its source).
    offline_cargo_for(committed, lock_only=True)
    for member in (shape.member, *shape.members):
        assert not set(shape.built) <= _built_features(committed, member, shape.crate)

    offline_cargo_for(checkout.project)
    result = checkout.fixed
    assert "featcheck: fixed" in result.stderr
    after = json.loads(result.stdout)
    assert [f for f in after["findings"] if f["crate"] == shape.crate] == []
    # The fixed checkout, `--locked` (the lockfile --fix wrote), over the packages it names.
    offline_cargo_for(checkout.project, lock_only=True)
    spec = f"{shape.crate}@{finding['crate_version']}"
    for member in (shape.member, *shape.members):
        assert set(shape.built) <= checkout.built(member, spec), member


def test_a_workspace_line_spelled_with_escapes_is_edited_like_the_plain_one(
    tmp_path: Path, checkouts: FixedCheckouts, offline_cargo_for: Callable[..., Path]
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
    expected = checkouts.of("shape-d-workspace-repeat").report
    assert [f["fix"] for f in report["findings"]] == [f["fix"] for f in expected["findings"]]
    assert "tool/Cargo.toml" in [e["file"] for f in report["findings"] for e in f["fix"]["edits"]]


def test_a_new_dependency_gets_a_caret_requirement(
    checkouts: FixedCheckouts, offline_cargo_for: Callable[..., Path]
) -> None:
    checkout = checkouts.of("shape-g-new-dependency")
    offline_cargo_for(checkout.project)
    (finding,) = checkout.report["findings"]
    assert finding["fix"]["edits"][0]["version"] == "0.3.11"
    assert checkout.fixed.returncode == 0  # app is a library: --fix-level info
    project = checkout.project
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
    checkouts: FixedCheckouts, offline_cargo_for: Callable[..., Path]
) -> None:
    checkout = checkouts.of("shape-f-burn-021-companion")
    offline_cargo_for(checkout.project)
    # burn is pinned `=0.21.0`, so burn-flex would be too.
    report = checkout.report
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
    checkouts: FixedCheckouts, offline_cargo_for: Callable[..., Path]
) -> None:
    project = WORKSPACES / "shape-i-library-owns-the-cut"
    offline_cargo_for(project)
    report = checkouts.of(project.name).report
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
    checkouts: FixedCheckouts, offline_cargo_for: Callable[..., Path]
) -> None:
    project = WORKSPACES / "shape-g-new-dependency"
    offline_cargo_for(project)
    report = checkouts.of(project.name).report
    (finding,) = report["findings"]
    assert finding["placement"] == (
        "in app's own manifest: the cut lies beyond tch 0.22.0, in a crate the workspace does "
        "not own"
    )
    text = run_in_process(str(project), "--root", str(project), "--fail-on", "never")
    assert "= placed: in app's own manifest: the cut lies beyond tch 0.22.0" in text.stdout


def _fixable(name: str) -> bool:
    return (WORKSPACES / name / "Cargo.lock").is_file()


@pytest.mark.parametrize("name", sorted(p.name for p in WORKSPACES.iterdir() if _fixable(p.name)))
def test_every_confirmed_fix_holds_in_cargo(
    name: str, checkouts: FixedCheckouts, offline_cargo_for: Callable[..., Path]
) -> None:
    """On every fixture: each fix reported as confirmed and safe, applied by `--fix` (with
    `--fix-level info`, the libraries' info findings too), leaves a checkout cargo resolves,
    where cargo builds the feature, and that a second audit finds clean of that crate for that
    member. featcheck runs in this process; its cargo answers a question it was asked before
    (the `--fix` run audits the workspace and confirms the fixes again) from the first answer.
    What is checked of the fixed checkout is asked of real cargo."""
    checkout = checkouts.of(name)
    offline_cargo_for(checkout.project)
    fixed = [f for f in checkout.report["findings"] if f["fix"] and f["fix"]["safe"]]
    if not fixed:
        pytest.skip("no safe fix here")
    assert all(f["fix"]["confirmed"] for f in fixed)
    result = checkout.fixed
    assert result.returncode in (0, 1), result.stderr
    after = json.loads(result.stdout)
    assert "featcheck: fixed" in result.stderr
    # Asked once for each member and crate (several findings, and the test below, may name
    # one), with the lockfile as --fix wrote it (`built` runs cargo `--locked`), over the
    # registry's packages that lockfile names (cargo reads every package of its source).
    offline_cargo_for(checkout.project, lock_only=True)
    for finding in fixed:
        member, crate = finding["member"], finding["crate"]
        spec = f"{crate}@{finding['crate_version']}"
        assert finding["feature"] in checkout.built(member, spec), (member, crate)
        left = [f for f in after["findings"] if (f["member"], f["crate"]) == (member, crate)]
        assert left == [], (member, crate)


FLAGGED = [
    "build-dependency",
    "crate-feature",
    "dev-only-rayon",
    "direct-flex",
    "gpu-only",
    "lib-chain",
    "old-burn-ndarray",
    "renamed",
    "table-form",
    "target-specific",
    "workspace-inheritance",
    "gemm-direct",
    "ndarray-direct",
]


def _changed_lines(before: str, after: str) -> tuple[list[str], list[str]]:
    removed, added = [], []
    for line in difflib.unified_diff(before.splitlines(), after.splitlines(), lineterm="", n=0):
        if line.startswith("-") and not line.startswith("---"):
            removed.append(line[1:])
        elif line.startswith("+") and not line.startswith("+++"):
            added.append(line[1:])
    return removed, added


@pytest.mark.parametrize("workspace", FLAGGED)
def test_fix_edits_only_the_declaration_and_cargo_agrees(
    workspace: str, checkouts: FixedCheckouts, offline_cargo_for: Callable[..., Path]
) -> None:
    """`--fix` on a flagged fixture (the same run the test above checks): it fixes every
    finding, edits only the declarations the fixes name, and cargo itself then builds every
    missing feature."""
    checkout = checkouts.of(workspace)
    # The view holds what the fixes turn on: cargo resolves the fixed copy below with it.
    offline_cargo_for(checkout.project)
    report = json.loads(checkout.audit.stdout)
    assert report["findings"]

    # Every finding's fix, the info findings' too (old-burn-ndarray's library).
    result = checkout.fixed
    after_report = json.loads(result.stdout)
    # Every fix holds, burn 0.20.1's included: its defaults bring crates the stub registry does
    # not hold, and the direct burn-ndarray dependency that adds fewer packages is chosen.
    assert after_report["findings"] == [], result.stderr
    assert result.returncode == 0
    assert "featcheck: fixed" in result.stderr

    after = manifests(checkout.project)
    fixed_places = {
        (e["file"], e["line"])
        for f in report["findings"]
        for e in (f["fix"] or {"edits": []})["edits"]
    }
    for path, text in checkout.before.items():
        removed, added = _changed_lines(text, after[path])
        if not removed and not added:
            continue
        assert any(file == path.as_posix() for file, _ in fixed_places), path
        # Every comment survives; what was removed is only a line that was rewritten.
        for line in text.splitlines():
            if line.strip().startswith("#"):
                assert line in after[path].splitlines()
        assert len(removed) <= 1 and len(added) <= 3

    # cargo itself now builds every missing feature on the finding's crate, for its member
    # (`cargo tree --locked -i CRATE@VERSION`, asked once per member and crate, over the
    # registry's packages the fixed lockfile names).
    offline_cargo_for(checkout.project, lock_only=True)
    for finding in report["findings"]:
        spec = f"{finding['crate']}@{finding['crate_version']}"
        assert finding["feature"] in checkout.built(finding["member"], spec), finding
