"""One finding per cut: a trimmed line that ten members inherit is shown once.

`fixtures/workspaces/repeated-cut` cuts regex's `perf` in `[workspace.dependencies]`; nine
binaries and one library inherit the line. Each format is asserted as a user reads it: the
text report, the annotations and SARIF show the cut once, naming every member; JSON keeps one
entry per member and names the group; exit codes and `--fail-on` count findings as before.
"""

from __future__ import annotations

import io
import json
import shutil
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from actions_support import clear_actions_environment, make_finding, manifest_location
from cli_in_process import run_in_process
from sarif_support import validate_sarif
from support import WORKSPACES

from featcheck.featureset import FeatureSelection
from featcheck.render.common import RenderOptions, builds_of_group, group_findings
from featcheck.render.text_report import render_text
from featcheck.report import AuditResult, Edit, Finding, Fix
from featcheck.severity import Severity

pytestmark = pytest.mark.usefixtures("remembered_cargo")

WORKSPACE = WORKSPACES / "repeated-cut"
X86_64 = "x86_64-unknown-linux-gnu"
AARCH64 = "aarch64-unknown-linux-gnu"
BINARIES = [f"example-{i}" for i in range(1, 10)]
EVERY_MEMBER = ", ".join([*BINARIES, "test-support (library)"])
VERDICT = "regex 1.13.2 is built without `perf`"


@pytest.fixture(autouse=True)
def _outside_actions(monkeypatch: pytest.MonkeyPatch) -> None:
    clear_actions_environment(monkeypatch)


def _featcheck(workspace: Path, *args: str) -> tuple[int, str]:
    # Locations relative to the fixture itself, as in a repository of its own.
    # (and wide enough that no line of ten members' names wraps).
    done = run_in_process(
        str(workspace), "--root", str(workspace), "--target", X86_64, *args, columns=400
    )
    assert done.returncode in (0, 1), done.stderr
    return done.returncode, done.stdout


def test_the_text_report_shows_the_cut_once_naming_every_member(
    offline_cargo_for: Callable[..., Path],
) -> None:
    offline_cargo_for(WORKSPACE)
    code, text = _featcheck(WORKSPACE)
    assert code == 1
    lines = text.splitlines()
    assert lines[0] == f"10 members ({X86_64})"
    assert lines[1].startswith(f"warning[FC011] {VERDICT}:")
    assert lines[2] == "  --> Cargo.toml:8:26"
    assert f"  = builds: 10 members: {EVERY_MEMBER}; target {X86_64}" in lines
    assert sum(VERDICT in line for line in lines) == 1  # the library's info folded in
    assert "info[" not in text
    assert lines[-2] == f"1 warning, grouped from 10 findings (10 members, {X86_64})"


def test_every_target_of_the_cut_is_named(offline_cargo_for: Callable[..., Path]) -> None:
    offline_cargo_for(WORKSPACE)
    code, text = _featcheck(WORKSPACE, "--target", AARCH64)
    assert code == 1
    lines = text.splitlines()
    assert lines[0] == f"10 members ({AARCH64}, {X86_64})"  # in report order
    assert f"  = builds: 10 members: {EVERY_MEMBER}; targets {AARCH64}, {X86_64}" in lines
    assert text.splitlines()[-2] == (
        f"1 warning, grouped from 20 findings (10 members, {X86_64}, {AARCH64})"
    )


def test_json_keeps_one_entry_per_member_and_names_the_group(
    offline_cargo_for: Callable[..., Path],
) -> None:
    offline_cargo_for(WORKSPACE)
    _, text = _featcheck(WORKSPACE, "--format", "json")
    report: dict[str, Any] = json.loads(text)
    assert report["version"] == 3
    findings = report["findings"]
    assert [f["member"] for f in findings] == [*BINARIES, "test-support"]
    assert [f["severity"] for f in findings] == ["warning"] * 9 + ["info"]
    assert {f["location"]["line"] for f in findings} == {8}
    [group] = {f["group"] for f in findings}
    assert isinstance(group, str) and len(group) == 16
    assert report["summary"] == {"error": 0, "warning": 9, "info": 1}  # counted per finding


def test_github_gives_one_annotation_and_one_summary_row(
    offline_cargo_for: Callable[..., Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    offline_cargo_for(WORKSPACE)
    summary = tmp_path / "summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    _, text = _featcheck(WORKSPACE, "--format", "github")
    [annotation] = [line for line in text.splitlines() if line.startswith("::warning ")]
    assert annotation.startswith(
        "::warning file=Cargo.toml,line=8,col=26,endLine=8,endColumn=50,"
        f"title=FC011 regex-without-perf-features::{VERDICT}"
    )
    assert f"%0A10 members: {EVERY_MEMBER}; target {X86_64}%0Afix: " in annotation
    assert not any(line.startswith("::notice ") for line in text.splitlines())
    assert f"featcheck: 1 warning, grouped from 10 findings (10 members, {X86_64})" in text
    rows = [line for line in summary.read_text().splitlines() if line.startswith("| warning ")]
    [row] = rows
    assert "| example-1, example-2, " in row and "test-support (library) |" in row


def test_sarif_gives_one_result_with_each_members_line_related(
    offline_cargo_for: Callable[..., Path],
) -> None:
    offline_cargo_for(WORKSPACE)
    _, text = _featcheck(WORKSPACE, "--format", "sarif")
    document = json.loads(text)
    validate_sarif(document)  # relatedLocations as the official schema has them
    [result] = document["runs"][0]["results"]
    assert result["ruleId"] == "FC011" and result["level"] == "warning"
    assert f"(10 members: {EVERY_MEMBER}; target {X86_64})" in result["message"]["text"]
    primary = result["locations"][0]["physicalLocation"]
    assert primary["artifactLocation"]["uri"] == "Cargo.toml"
    assert primary["region"]["startLine"] == 8
    related = [
        (
            r["physicalLocation"]["artifactLocation"]["uri"],
            r["physicalLocation"]["region"]["startLine"],
            r["message"]["text"],
        )
        for r in result["relatedLocations"]
    ]
    assert related == [
        (f"members/{m}/Cargo.toml", 8, f"member {m}, target {X86_64}")
        for m in [*BINARIES, "test-support"]
    ]
    assert [r["id"] for r in result["relatedLocations"]] == list(range(10))
    properties = result["properties"]
    assert properties["members"] == [*BINARIES, "test-support"]
    assert properties["findings"] == 10


@pytest.mark.parametrize(("fail_on", "code"), [("error", 0), ("warning", 1), ("info", 1)])
def test_exit_codes_count_findings_as_before(
    fail_on: str, code: int, offline_cargo_for: Callable[..., Path]
) -> None:
    offline_cargo_for(WORKSPACE)
    assert _featcheck(WORKSPACE, "--fail-on", fail_on)[0] == code


def test_a_member_with_its_own_cut_is_shown_on_its_own(
    offline_cargo_for: Callable[..., Path], tmp_path: Path
) -> None:
    offline_cargo_for(WORKSPACE)
    workspace = tmp_path / "repeated-cut"
    shutil.copytree(WORKSPACE, workspace)
    # The library trims regex on its own line: no binary reports that cut, so it stays info.
    library = workspace / "members" / "test-support" / "Cargo.toml"
    library.write_text(
        library.read_text().replace(
            "regex.workspace = true",
            'regex = { version = "1", default-features = false, features = ["std"] }',
        )
    )
    code, text = _featcheck(workspace)
    assert code == 1
    lines = text.splitlines()
    # A member's own findings first, then the cut shared by several.
    assert lines[:3] == [
        f"test-support ({X86_64})",
        lines[1],
        "  --> members/test-support/Cargo.toml:8:26",
    ]
    assert lines[1].startswith(f"info[FC011] {VERDICT}")
    assert f"9 members ({X86_64})" in lines
    assert f"  = builds: 9 members: {', '.join(BINARIES)}; target {X86_64}" in lines
    assert sum(line.startswith("info[FC011]") for line in lines) == 1
    assert lines[-2] == f"1 warning, 1 info, grouped from 10 findings (10 members, {X86_64})"


# --- what groups, on the report model --------------------------------------------------------


def _fix(features: tuple[str, ...]) -> Fix:
    edit = Edit(Path("/w/Cargo.toml"), ("dependencies", "burn"), "add-features", features)
    return Fix((edit,), confirmed=True, safe=True)


def test_findings_with_another_place_or_rule_are_not_grouped_whatever_their_fix() -> None:
    same = dict(location=manifest_location())
    findings: list[Finding] = [
        make_finding(member="a", **same),
        make_finding(member="b", **same),
        make_finding(member="c", location=manifest_location(line=10)),
        make_finding(member="d", code="FC003", rule="flex-without-simd", **same),
        make_finding(member="e", severity=Severity.WARNING, **same),
        make_finding(member="f", location=None),
        make_finding(member="g", location=None),
    ]
    findings += [
        replace(make_finding(member="h", **same), fix=_fix(("rayon",))),
        replace(make_finding(member="i", **same), fix=_fix(("rayon",))),
        replace(make_finding(member="j", **same), fix=_fix(("rayon", "simd"))),
    ]
    groups = group_findings(findings)
    # One cut is one finding, whatever each member's fix: h, i and j join a and b.
    assert [g.members for g in groups] == [
        ("a", "b", "h", "i", "j"),
        ("c",),
        ("d",),
        ("e",),
        ("f",),
        ("g",),
    ]
    assert len({g.id for g in groups}) == len(groups)
    # a and b have no fix: the group shows the lead's (none); h, i and j alone show theirs
    # together, the features of one declaration once each.
    assert groups[0].fix is None
    [fixed] = group_findings(findings[-3:])
    assert fixed.fix is not None and [e.features for e in fixed.fix.edits] == [("rayon", "simd")]


def _library(member: str) -> Finding:
    finding = make_finding(member=member, severity=Severity.INFO, location=manifest_location())
    return replace(finding, library=True)


def test_a_library_folds_into_the_binary_that_leads_the_group() -> None:
    library = _library("lib")
    binary = make_finding(member="bin", severity=Severity.WARNING, location=manifest_location())
    [group] = group_findings([library, binary])
    assert group.lead is binary
    assert group.members == ("bin", "lib")
    assert group.libraries == {"lib"}
    # Two libraries share their cut, no binary reports it: shown once, as info.
    [alone] = group_findings([library, _library("lib2")])
    assert alone.lead.severity is Severity.INFO and alone.members == ("lib", "lib2")


def test_a_group_not_on_every_target_of_each_member_names_each_members_own() -> None:
    # app's Windows build has the feature (its own target line), lib's has not: the builds line
    # must not read as app on Windows too.
    on = [("app", X86_64), ("lib", X86_64), ("lib", "x86_64-pc-windows-msvc")]
    findings = [
        make_finding(member=m, target=t, severity=Severity.WARNING, location=manifest_location())
        for m, t in on
    ]
    [group] = group_findings(findings)
    assert builds_of_group(group) == (
        f"2 members: app on {X86_64}; lib on {X86_64}, x86_64-pc-windows-msvc"
    )
    # --each-feature: noodles' default build has no finding, noodles-cram's has.
    cram = FeatureSelection.of(["cram"], no_default=True)
    default = FeatureSelection()
    each = [
        replace(findings[0], member="noodles", configurations=(cram,)),
        replace(findings[0], member="noodles-cram", configurations=(default, cram)),
    ]
    assert builds_of_group(group_findings(each)[0]) == (
        "2 members: noodles with --features cram --no-default-features; "
        f"noodles-cram with default features, --features cram --no-default-features; target {X86_64}"
    )
    # Every member on every target: the targets are said once.
    both = [*findings, replace(findings[0], target="x86_64-pc-windows-msvc")]
    assert builds_of_group(group_findings(both)[0]).endswith(
        f"app, lib; targets {X86_64}, x86_64-pc-windows-msvc"
    )


def test_a_group_whose_builds_gain_different_packages_says_the_most(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """linfa: one edit of the workspace's ndarray line for 19 members, each build gaining 4 or 5
    packages; the fix line said nothing of them, and `--fix` added them."""
    monkeypatch.setenv("NO_COLOR", "1")
    edit = Edit(tmp_path / "Cargo.toml", ("dependencies", "burn"), "add-features", ("rayon",))
    findings = [
        replace(
            make_finding(member=member, location=manifest_location()),
            fix=Fix((replace(edit, file="Cargo.toml"),), confirmed=True, safe=True, added=added),
        )
        for member, added in (("a", 4), ("b", 5), ("c", 5))
    ]
    stream = io.StringIO()
    render_text(
        AuditResult(tmp_path, findings=findings, members=["a", "b", "c"]), stream, RenderOptions()
    )
    text = " ".join(stream.getvalue().split())
    assert (
        "with it the build gets `rayon` and adds up to 5 packages to the workspace's builds" in text
    )
    same = [replace(f, fix=replace(f.fix, added=5)) for f in findings if f.fix is not None]
    stream = io.StringIO()
    render_text(
        AuditResult(tmp_path, findings=same, members=["a", "b", "c"]), stream, RenderOptions()
    )
    assert "and adds 5 packages to the workspace's builds" in " ".join(stream.getvalue().split())


@pytest.mark.parametrize("each_feature", [False, True], ids=["one-build", "each-feature"])
def test_a_groups_fix_line_names_every_members_own_edit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, each_feature: bool
) -> None:
    """tracel-ai/models: three libraries inherit the root's burn line, and each gets memchr
    added to its own manifest. `--each-feature` named only the first library's manifest."""
    monkeypatch.setenv("NO_COLOR", "1")
    findings = [
        replace(
            make_finding(member=member, severity=Severity.INFO, location=manifest_location()),
            fix=Fix(
                (
                    Edit(
                        tmp_path / member / "Cargo.toml",
                        ("dependencies", "memchr"),
                        "add-dependency",
                        ("std",),
                        version="2.8.0",
                        file=f"{member}/Cargo.toml",
                    ),
                ),
                confirmed=True,
                safe=True,
            ),
        )
        for member in ("resnet", "yolox")
    ]
    builds = [FeatureSelection(), FeatureSelection(no_default_features=True)]
    configurations = {member: builds for member in ("resnet", "yolox")} if each_feature else {}
    findings = [replace(f, configurations=tuple(builds)) for f in findings]
    result = AuditResult(
        tmp_path, findings=findings, members=["resnet", "yolox"], configurations=configurations
    )
    stream = io.StringIO()
    render_text(result, stream, RenderOptions())
    text = " ".join(stream.getvalue().split())
    assert "(resnet/Cargo.toml, yolox/Cargo.toml); with it the build gets `rayon`" in text


def test_a_block_of_two_rules_names_its_builds_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """BiRefNet-Burn, `--each-feature`: FC004 and FC005 on one line for two members said
    `= builds: 2 members: …` twice, one after the other."""
    monkeypatch.setenv("NO_COLOR", "1")
    builds = (FeatureSelection.of(["cpu"], no_default=True),)
    fix = Fix(
        (Edit(tmp_path / "Cargo.toml", ("dependencies", "burn"), "add-features", ("fusion",)),),
        confirmed=True,
        safe=True,
    )
    findings = [
        replace(
            make_finding(member=member, code=code, location=manifest_location()),
            fix=fix,
            configurations=builds,
        )
        for code in ("FC004", "FC005")
        for member in ("app", "model")
    ]
    configurations = {m: [*builds, FeatureSelection()] for m in ("app", "model")}
    result = AuditResult(
        tmp_path, findings=findings, members=["app", "model"], configurations=configurations
    )
    stream = io.StringIO()
    render_text(result, stream, RenderOptions())
    text = " ".join(stream.getvalue().split())
    assert text.count("2 members: app, model") == 1, text


def test_a_fix_line_names_every_line_it_edits_in_one_manifest(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two members' builds of one library grouped: the fix edits its burn line and a feature of
    its own, both in lib/Cargo.toml; the fix line named only the first of the two lines."""
    monkeypatch.setenv("NO_COLOR", "1")
    manifest = tmp_path / "lib" / "Cargo.toml"
    edits = (
        Edit(
            manifest,
            ("dependencies", "burn"),
            "add-features",
            ("rayon",),
            file="lib/Cargo.toml",
            line=12,
        ),
        Edit(
            manifest,
            ("features", "cpu"),
            "add-feature-values",
            ("burn/rayon",),
            file="lib/Cargo.toml",
            line=7,
        ),
    )
    finding = replace(
        make_finding(location=manifest_location()), fix=Fix(edits, confirmed=True, safe=True)
    )
    stream = io.StringIO()
    render_text(AuditResult(tmp_path, findings=[finding], members=["app"]), stream, RenderOptions())
    text = " ".join(stream.getvalue().split())
    assert "(lib/Cargo.toml:7, lib/Cargo.toml:12); with it the build gets" in text


def test_a_groups_notes_name_the_members_a_note_is_about(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """feos: py_feos reaches ndarray through feos-core, feos-dft directly; the group showed
    only py_feos's note. A note each finding says of its own member is shown once, naming them
    all (ockam's group said "regex is a direct dependency of ockam_abac" for ockam_core too)."""
    monkeypatch.setenv("NO_COLOR", "1")
    notes = {
        "py_feos": ("feos-core depends on ndarray directly", "py_feos is built for Python"),
        "feos-dft": ("feos-dft depends on ndarray directly", "feos-dft is built for Python"),
    }
    findings = [
        replace(make_finding(member=member, location=manifest_location()), notes=said)
        for member, said in notes.items()
    ]
    stream = io.StringIO()
    result = AuditResult(tmp_path, findings=findings, members=list(notes))
    render_text(result, stream, RenderOptions(verbose=True))
    said = [line.strip() for line in stream.getvalue().splitlines() if "= note:" in line]
    assert said == [
        "= note: for py_feos: feos-core depends on ndarray directly",
        "= note: for each of py_feos, feos-dft: the member is built for Python",
        "= note: for feos-dft: feos-dft depends on ndarray directly",
    ]
