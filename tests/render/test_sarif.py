"""`--format sarif`: valid SARIF 2.1.0 (the official schema) that code scanning can take."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from actions_support import clear_actions_environment, host_triple, make_finding, manifest_location
from cli_in_process import run_in_process
from sarif_support import sarif_schema as _schema
from sarif_support import validate_sarif as _validate
from support import CRATES, REPO

from featcheck import __version__
from featcheck.render.sarif import FINGERPRINT_KEY, RULES_DOC_URL, sarif_document
from featcheck.report import AuditResult, Location
from featcheck.rules import UNUSED_SUPPRESSION, builtin_rules
from featcheck.severity import Severity

pytestmark = pytest.mark.usefixtures("remembered_cargo")


@pytest.fixture(autouse=True)
def _outside_actions(monkeypatch: pytest.MonkeyPatch) -> None:
    clear_actions_environment(monkeypatch)


def test_the_schema_rejects_what_it_should() -> None:
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"version": "2.1.0", "runs": [{"results": []}]}, _schema())


def _sarif(*args: str) -> tuple[int, dict[str, Any]]:
    done = run_in_process(*args, "--format", "sarif")
    assert done.returncode in (0, 1), done.stderr
    document: dict[str, Any] = json.loads(done.stdout)
    return done.returncode, document


def test_the_example_crate_gives_a_valid_log_with_one_result(
    offline_cargo_for: Callable[..., Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    offline_cargo_for(CRATES / "pitb-exec-cpu")
    monkeypatch.setenv("GITHUB_WORKSPACE", str(REPO))
    code, document = _sarif(str(CRATES / "pitb-exec-cpu"))
    assert code == 1
    _validate(document)
    assert document["version"] == "2.1.0"
    assert document["$schema"].endswith("sarif-schema-2.1.0.json")
    run = document["runs"][0]
    driver = run["tool"]["driver"]
    assert driver["name"] == "featcheck"
    assert driver["version"] == __version__
    assert driver["informationUri"].startswith("https://")
    assert [rule["id"] for rule in driver["rules"]] == [
        *(r.code for r in builtin_rules()),
        UNUSED_SUPPRESSION.code,
    ]
    first = driver["rules"][0]
    assert first["name"] == "flex-without-rayon"
    assert first["shortDescription"]["text"] == builtin_rules()[0].summary
    assert first["fullDescription"]["text"] == builtin_rules()[0].why
    assert builtin_rules()[0].why in first["help"]["markdown"]
    assert first["helpUri"] == f"{RULES_DOC_URL}#fc001-flex-without-rayon"
    # The anchors are those of docs/rules.md's headings.
    headings = (REPO / "docs" / "rules.md").read_text()
    for rule in builtin_rules():
        assert f"\n## {rule.code} `{rule.name}`\n" in headings
    assert first["defaultConfiguration"] == {"level": "error"}

    [result] = run["results"]
    assert result["ruleId"] == "FC001"
    assert driver["rules"][result["ruleIndex"]]["id"] == "FC001"
    assert result["level"] == "error"
    text = result["message"]["text"]
    assert text.startswith(
        "burn-flex 0.22.1 is built without `rayon`: every matmul runs on one core "
        f"(member pitb-exec-cpu, target {host_triple()}). Fix: "
    )
    assert result["locations"] == [
        {
            "physicalLocation": {
                "artifactLocation": {
                    "uri": "crates/pitb-exec-cpu/Cargo.toml",
                    "uriBaseId": "%SRCROOT%",
                },
                "region": {"startLine": 9, "startColumn": 31, "endLine": 9, "endColumn": 55},
            }
        }
    ]
    assert len(result["partialFingerprints"][FINGERPRINT_KEY]) == 16


def test_without_a_workspace_uris_are_relative_to_the_repository_root(
    offline_cargo_for: Callable[..., Path],
) -> None:
    offline_cargo_for(CRATES / "pitb-exec-cpu")
    _, document = _sarif(str(CRATES / "pitb-exec-cpu"))
    [result] = document["runs"][0]["results"]
    location = result["locations"][0]["physicalLocation"]["artifactLocation"]
    assert location["uri"] == "crates/pitb-exec-cpu/Cargo.toml"


def test_a_clean_project_gives_a_valid_log_without_results(
    offline_cargo_for: Callable[..., Path],
) -> None:
    offline_cargo_for(CRATES / "pitb-exec-cpu-simd")
    code, document = _sarif(str(CRATES / "pitb-exec-cpu-simd"))
    assert code == 0
    _validate(document)
    assert document["runs"][0]["results"] == []
    assert len(document["runs"][0]["tool"]["driver"]["rules"]) == len(builtin_rules()) + 1


def test_a_tree_of_several_members_is_no_clean_log() -> None:
    # No results would read as clean in code scanning: the log says why it is not.
    tree = str(REPO / "fixtures" / "trees" / "workspace-unification.root.invert-burn-flex.txt")
    done = run_in_process("--tree", tree, "--format", "sarif")
    assert done.returncode == 2
    document = json.loads(done.stdout)
    _validate(document)
    [invocation] = document["runs"][0]["invocations"]
    first = invocation["toolExecutionNotifications"][0]
    assert first["level"] == "error"
    assert first["message"]["text"].startswith("no verdict: cargo unified 2 members")


def test_fingerprints_survive_lines_moving(
    offline_cargo_for: Callable[..., Path], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    offline_cargo_for(CRATES / "pitb-exec-cpu")
    crate = tmp_path / "pitb-exec-cpu"
    shutil.copytree(CRATES / "pitb-exec-cpu", crate, ignore=shutil.ignore_patterns("target"))
    monkeypatch.setenv("GITHUB_WORKSPACE", str(tmp_path))
    _, before = _sarif(str(crate))
    manifest = crate / "Cargo.toml"
    text = manifest.read_text()
    manifest.write_text(text.replace("[dependencies]\n", "[dependencies]\n# a\n# b\n# c\n"))
    _, after = _sarif(str(crate))
    [old], [new] = before["runs"][0]["results"], after["runs"][0]["results"]
    region = new["locations"][0]["physicalLocation"]["region"]
    assert region["startLine"] == old["locations"][0]["physicalLocation"]["region"]["startLine"] + 3
    assert new["partialFingerprints"] == old["partialFingerprints"]


def test_fingerprints_tell_findings_apart(tmp_path: Path) -> None:
    findings = [
        make_finding(location=manifest_location()),
        make_finding(member="other", location=manifest_location()),
        make_finding(target="aarch64-apple-darwin", location=manifest_location()),
        make_finding(location=manifest_location(line=20)),
    ]
    # Each audited alone: in one audit the first three are one cut, shown once.
    documents = [sarif_document(AuditResult(tmp_path, findings=[f]), environ={}) for f in findings]
    prints = [d["runs"][0]["results"][0]["partialFingerprints"][FINGERPRINT_KEY] for d in documents]
    assert len(set(prints[:3])) == 3
    assert prints[3] == prints[0]  # the same finding on another line


def test_levels_odd_text_and_findings_without_a_location_stay_valid(tmp_path: Path) -> None:
    findings = [
        make_finding(severity=Severity.WARNING, location=Location("a b/Cargo%.toml", 1, 1, 2, 3)),
        make_finding(
            code="FC002",
            rule="ndarray-without-threading",
            severity=Severity.INFO,
            crate="burn-ndarray",
            feature="multi-threads",
            member=None,
            target=None,
            message='odd "text" | with\nnewlines, 100% and: colons',
        ),
    ]
    result = AuditResult(tmp_path, findings=findings, notes=["a note from the audit"])
    document = sarif_document(result, environ={})
    _validate(document)
    warning, info = document["runs"][0]["results"]
    assert warning["level"] == "warning"
    assert warning["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == (
        "a%20b/Cargo%25.toml"
    )
    assert info["level"] == "note"
    assert info["ruleIndex"] == 1
    assert "locations" not in info
    assert info["message"]["text"].startswith('odd "text" | with\nnewlines, 100% and: colons')
    notifications = document["runs"][0]["invocations"][0]["toolExecutionNotifications"]
    assert notifications == [{"level": "warning", "message": {"text": "a note from the audit"}}]
