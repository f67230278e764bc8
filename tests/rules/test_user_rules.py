"""A project's own rules: `[[rule]]` in featcheck.toml or [workspace.metadata.featcheck], in the
built-in spec form, strictly validated, run, suppressed, listed and rendered like built-ins."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from cli_in_process import run_in_process
from rule_fixtures import RULE_FIXTURES, audit_fixture
from sarif_support import validate_sarif
from support import REPO, trust_of

from featcheck.errors import FeatcheckError
from featcheck.featureset import AuditOptions
from featcheck.pipeline import audit_project
from featcheck.policy.load import load_config, project_catalogue
from featcheck.render.github import render_annotations
from featcheck.render.sarif import sarif_document
from featcheck.report import AuditResult

pytestmark = pytest.mark.usefixtures("remembered_cargo")

USER_RULE = RULE_FIXTURES / "user-rule"


def _audit(project: Path) -> AuditResult:
    return audit_project(project, AuditOptions(confirm_fixes=False), trust_of(project))


def _project(tmp_path: Path, config: str | None = None) -> Path:
    project = tmp_path / "service"
    shutil.copytree(USER_RULE, project)
    if config is not None:
        (project / "featcheck.toml").write_text(config)
    return project


def test_a_user_rule_fires_at_the_declaration(tmp_path: Path, synthetic_cargo: Path) -> None:
    result = audit_fixture(USER_RULE, tmp_path)
    [finding] = result.findings
    assert (finding.code, finding.rule, finding.severity.label) == (
        "ACME001",
        "regex-without-perf",
        "error",
    )
    assert finding.message == (
        "regex 1.11.1 is built without `perf`: matching runs without its literal and lazy-DFA "
        "optimisations"
    )
    assert finding.notes[0] == "regex is a direct dependency of service"
    assert finding.location is not None and finding.location.line == 9
    assert finding.why.startswith("Team policy")


def test_a_user_rule_is_rendered_in_sarif_and_github(tmp_path: Path, synthetic_cargo: Path) -> None:
    result = audit_fixture(USER_RULE, tmp_path)
    run = sarif_document(result, {})["runs"][0]
    rules = run["tool"]["driver"]["rules"]
    [sarif_result] = run["results"]
    descriptor = rules[sarif_result["ruleIndex"]]
    assert descriptor["id"] == sarif_result["ruleId"] == "ACME001"
    assert descriptor["name"] == "regex-without-perf"
    assert descriptor["helpUri"] == "https://docs.rs/crate/regex/latest/features"
    assert descriptor["defaultConfiguration"]["level"] == "error"
    assert [r["id"] for r in rules][-2:] == ["ACME001", "FC900"]
    validate_sarif(sarif_document(result, {}))
    annotations = render_annotations(result)
    assert "::error file=Cargo.toml,line=9," in annotations
    assert "title=ACME001 regex-without-perf" in annotations


def test_a_user_rule_without_a_web_page_has_no_help_uri(
    tmp_path: Path, synthetic_cargo: Path
) -> None:
    config = (USER_RULE / "featcheck.toml").read_text()
    config = config.replace('references = ["https://docs.rs/crate/regex/latest/features"]\n', "")
    document = sarif_document(_audit(_project(tmp_path, config)), {})
    validate_sarif(document)
    rules = document["runs"][0]["tool"]["driver"]["rules"]
    [descriptor] = [r for r in rules if r["id"] == "ACME001"]
    assert "helpUri" not in descriptor
    assert descriptor["fullDescription"]["text"].startswith("Team policy")


def test_json_and_text_carry_the_user_rule(tmp_path: Path, synthetic_cargo: Path) -> None:
    project = _project(tmp_path)
    report = run_in_process(str(project), "--format", "json")
    assert report.returncode == 1, report.stderr
    [finding] = json.loads(report.stdout)["findings"]
    assert finding["code"] == "ACME001" and finding["rule"] == "regex-without-perf"
    text = run_in_process(str(project))
    assert "error[ACME001]" in text.stdout


def test_a_user_rule_is_suppressible_like_a_builtin(tmp_path: Path, synthetic_cargo: Path) -> None:
    config = (USER_RULE / "featcheck.toml").read_text()
    allowed = config + '\n[[allow]]\ncode = "ACME001"\nreason = "batch job, speed irrelevant"\n'
    result = _audit(_project(tmp_path / "a", allowed))
    assert result.findings == [] and result.suppressed == {"ACME001": 1}

    project = _project(tmp_path / "b")
    manifest = project / "Cargo.toml"
    manifest.write_text(
        manifest.read_text().replace(
            '["std"] }', '["std"] }  # featcheck: allow(regex-without-perf) size matters here'
        )
    )
    result = _audit(project)
    assert result.findings == [] and result.suppressed == {"ACME001": 1}


def test_select_ignore_and_severity_name_user_rules(tmp_path: Path, synthetic_cargo: Path) -> None:
    config = (USER_RULE / "featcheck.toml").read_text()
    info = 'severity = { regex-without-perf = "info" }\n' + config
    [finding] = _audit(_project(tmp_path / "a", info)).findings
    assert finding.severity.label == "info"
    ignored = 'ignore = ["ACME001"]\n' + config
    assert _audit(_project(tmp_path / "b", ignored)).findings == []
    opt_in = config.replace('severity = "error"', 'severity = "error"\nenabled = false')
    assert _audit(_project(tmp_path / "c", opt_in)).findings == []
    # selected by name, even a name that starts like a built-in code
    project = _project(tmp_path / "d", opt_in.replace("regex-without-perf", "fcx-regex"))
    selected = run_in_process(str(project), "--select", "fcx-regex", "--format", "json")
    assert [f["code"] for f in json.loads(selected.stdout)["findings"]] == ["ACME001"]
    unknown = run_in_process(str(project), "--select", "FC999")
    assert unknown.returncode == 2 and "unknown rule FC999" in unknown.stderr


def test_a_version_range_limits_the_rule(tmp_path: Path, synthetic_cargo: Path) -> None:
    config = (USER_RULE / "featcheck.toml").read_text().replace('">=1.9"', '"<1.9"')
    assert _audit(_project(tmp_path, config)).findings == []


def test_rules_and_rule_commands_show_user_rules(tmp_path: Path) -> None:
    project = _project(tmp_path)
    listing = run_in_process("rules", str(project))
    assert listing.returncode == 0
    lines = listing.stdout.splitlines()[1:]  # after the heading
    assert [line.split()[0] for line in lines][-2:] == ["ACME001", "FC900"]
    assert "regex-without-perf" in lines[-2] and "error" in lines[-2]
    inside = run_in_process("rules", cwd=project / "src")  # found from a directory inside
    assert "ACME001" in inside.stdout
    one = run_in_process("rule", "ACME001", str(project))
    assert one.returncode == 0
    assert one.stdout.startswith("# ACME001 `regex-without-perf`")
    assert "## Why it matters\n\nTeam policy" in one.stdout
    assert "## Example" not in one.stdout  # sections a user leaves out are left out


def test_user_rules_in_workspace_metadata(tmp_path: Path, synthetic_cargo: Path) -> None:
    project = _project(tmp_path)
    rule = (project / "featcheck.toml").read_text()
    (project / "featcheck.toml").unlink()
    rule = rule.replace("[[rule]]", "[[workspace.metadata.featcheck.rule]]")
    rule = rule.replace("[rule.doc]", "[workspace.metadata.featcheck.rule.doc]")
    manifest = project / "Cargo.toml"
    manifest.write_text(manifest.read_text() + "\n" + rule)
    [finding] = _audit(project).findings
    assert finding.code == "ACME001"


MALFORMED = [
    ('code = "ACME001"', 'code = "FC123"', 3, 8, "codes starting with FC are featcheck's own"),
    ('code = "ACME001"', 'code = "acme-1"', 3, 8, "2-10 capital letters"),
    ('name = "regex-without-perf"', 'name = "flex-without-rayon"', 4, 8, "taken by FC001"),
    ('feature = "perf"', 'feature = ["perf"]', 8, 11, "`feature` must be a non-empty string"),
    ('feature = "perf"', "", 2, 1, "a rule needs `feature`"),
    ('">=1.9"', '"about one"', 7, 40, "not a cargo version requirement"),
    ("used-when = {", "usedwhen = {", 10, 1, "unknown key `usedwhen`"),
    ("direct-dependency = true", "direct-dependency = false", 10, 13, "could never fire"),
    ('severity = "error"', 'severity = "fatal"', 5, 12, "unknown severity"),
    ('summary = "our', 'summary = "\\u001b[2Jour', 6, 11, "control or format characters"),
    ('summary = "our', 'summary = "\\u202eour', 6, 11, "control or format characters"),
    ('summary = "our', 'summary = "\\nour', 6, 11, "must not hold line breaks"),
    ('"https://docs.rs', '"\\u0007https://docs.rs', 15, 15, "a reference must not hold"),
]


@pytest.mark.parametrize("old, new, line, column, message", MALFORMED, ids=lambda v: str(v)[:24])
def test_a_malformed_rule_is_refused_at_its_line(
    old: str, new: str, line: int, column: int, message: str, tmp_path: Path
) -> None:
    text = (USER_RULE / "featcheck.toml").read_text()
    assert old in text
    project = _project(tmp_path, text.replace(old, new))
    with pytest.raises(FeatcheckError) as caught:
        load_config(project, {})
    assert (caught.value.line, caught.value.column) == (line, column), str(caught.value)
    assert message in str(caught.value)


@pytest.mark.cargo
def test_the_cli_refuses_a_malformed_rule_with_exit_2(
    tmp_path: Path, synthetic_cargo: Path
) -> None:
    text = (USER_RULE / "featcheck.toml").read_text().replace('code = "ACME001"', 'code = "FC123"')
    project = _project(tmp_path, text)
    for args in ((str(project),), ("rules", str(project))):
        result = run_in_process(*args)
        assert result.returncode == 2
        [line] = result.stderr.splitlines()[:1]
        assert "featcheck.toml:3:8:" in line and "featcheck's own" in line


def test_a_member_cannot_define_rules(tmp_path: Path) -> None:
    project = _project(tmp_path)
    manifest = project / "Cargo.toml"
    manifest.write_text(
        manifest.read_text()
        + '\n[[package.metadata.featcheck.rule]]\ncode = "ACME002"\nname = "x"\n'
    )
    with pytest.raises(FeatcheckError, match="defined for the whole workspace"):
        load_config(project, {"service": manifest})


def test_two_rules_with_one_code_are_refused(tmp_path: Path) -> None:
    text = (USER_RULE / "featcheck.toml").read_text()
    second = text.split("[[rule]]", 1)[1].replace("regex-without-perf", "regex-again")
    project = _project(tmp_path, text + "\n[[rule]]" + second)
    with pytest.raises(FeatcheckError, match="`ACME001` is taken by ACME001"):
        project_catalogue(project)


@pytest.mark.parametrize("document", ["README.md", "docs/writing-rules.md"])
def test_the_documented_user_rule_examples_load(document: str, tmp_path: Path) -> None:
    text = (REPO / document).read_text()
    examples = re.findall(r"```toml\n(\[\[rule\]\]\n.*?)```", text, re.S)
    assert examples
    loaded = []
    for index, example in enumerate(examples):
        project = tmp_path / str(index)
        project.mkdir()
        (project / "featcheck.toml").write_text(example)
        [rule] = [r for r in project_catalogue(project).rules if not r.builtin]
        loaded.append((rule.code, rule.feature, rule.kind.value))
    assert loaded[0] == ("ACME001", "perf", "missing")
    # The README also shows a rule that bans a feature.
    assert loaded[1:] in ([], [("ACME002", "arbitrary_precision", "present")])


def test_a_member_selects_an_opt_in_user_rule(tmp_path: Path) -> None:
    config = (USER_RULE / "featcheck.toml").read_text()
    project = _project(
        tmp_path, config.replace('severity = "error"', 'severity = "error"\nenabled = false')
    )
    manifest = project / "Cargo.toml"
    manifest.write_text(
        manifest.read_text() + '\n[package.metadata.featcheck]\nselect = ["ACME001"]\n'
    )
    loaded = load_config(project, {"service": manifest})
    assert "ACME001" not in {r.code for r in loaded.rules()}
    assert "ACME001" in {r.code for r in loaded.for_member("service").rules()}


def test_a_user_rule_can_ban_a_feature_switched_on_anywhere(
    tmp_path: Path, synthetic_cargo: Path
) -> None:
    # The fixture of FC021: float_roundtrip comes through the member's path library.
    project = tmp_path / "service"
    shutil.copytree(RULE_FIXTURES / "fc021" / "bad", project)
    (project / "featcheck.toml").write_text(
        "ignore = ['FC021']\n"
        "[[rule]]\n"
        "code = 'ACME002'\n"
        "name = 'no-float-roundtrip'\n"
        "severity = 'error'\n"
        "kind = 'present'\n"
        "crates = ['serde_json']\n"
        "feature = 'float_roundtrip'\n"
        "consequence = 'our parsers run slower'\n"
    )
    done = run_in_process(str(project), "-v")
    assert done.returncode == 1, done.stderr
    assert (
        "error[ACME002] serde_json 1.0.154 is built with `float_roundtrip`: our parsers run slower"
        in done.stdout
    )
    assert "--> Cargo.toml:9:1" in done.stdout
    assert (
        "= chain: switched on by fc021-bad's dependency precise-config: precise-config default "
        "→ exact-floats → serde_json/float_roundtrip" in " ".join(done.stdout.split())
    )
    report = json.loads(run_in_process(str(project), "--format", "json").stdout)
    [finding] = report["findings"]
    assert (finding["code"], finding["fix"], finding["alternatives"]) == ("ACME002", None, [])
    # Without the feature on, nothing: the serde_json line alone asks for nothing.
    (project / "precise-config" / "Cargo.toml").write_text(
        (project / "precise-config" / "Cargo.toml")
        .read_text()
        .replace('default = ["exact-floats"]', "default = []")
    )
    assert run_in_process(str(project)).returncode == 0


def test_also_add_is_refused_for_a_feature_that_should_be_off(
    tmp_path: Path, synthetic_cargo: Path
) -> None:
    project = _project(
        tmp_path,
        "[[rule]]\ncode = 'ACME003'\nname = 'x'\nkind = 'present'\ncrates = ['regex']\n"
        "feature = 'perf'\nalso-add = ['std']\n",
    )
    done = run_in_process(str(project))
    assert done.returncode == 2
    assert '`also-add` names features a fix adds: not for kind = "present"' in done.stderr
    assert "featcheck.toml:" in done.stderr
