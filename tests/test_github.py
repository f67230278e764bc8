"""`--format github`: the workflow commands and job summary a GitHub Actions user sees."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from actions_support import (
    clear_actions_environment,
    host_triple,
    make_finding,
    manifest_location,
)
from conftest import CRATES, REPO, run_featcheck

from featcheck.render.github import (
    SUMMARY_LIMIT,
    escape_data,
    escape_property,
    render_annotations,
    render_summary,
    write_github,
)
from featcheck.report import AuditResult, Finding, Location, Severity

TITLE = "title=FC001 flex-without-rayon"
TARGET = "x86_64-unknown-linux-gnu"
MESSAGE = "burn-flex 0.22.1 is built without `rayon`: every matmul runs on one core"


@pytest.fixture(autouse=True)
def _outside_actions(monkeypatch: pytest.MonkeyPatch) -> None:
    clear_actions_environment(monkeypatch)


def _result(tmp_path: Path, findings: list[Finding]) -> AuditResult:
    root = tmp_path / "repo" / "crates" / "app"
    return AuditResult(root, findings=findings, members=["app"], targets=[TARGET])


def _commands(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.startswith("::")]


# --- escaping ---------------------------------------------------------------------------------


def test_escaping_follows_the_runner_rules() -> None:
    assert escape_data("50% a:b,c\r\nd") == "50%25 a:b,c%0D%0Ad"
    assert escape_property("50% a:b,c\r\nd") == "50%25 a%3Ab%2Cc%0D%0Ad"


def test_a_crafted_finding_cannot_break_out_of_its_command(tmp_path: Path) -> None:
    finding = make_finding(
        rule="odd,rule:name",
        message="100% slower: a,b\n::error::injected",
        location=Location("we,ird:dir/Cargo%.toml", 3, 1, 4, 2),
        suggestion="do x\r\ny",
    )
    result = _result(tmp_path, [finding])
    text = render_annotations(result, workspace=str(tmp_path / "repo"))
    assert _commands(text) == [
        "::error file=crates/app/we%2Cird%3Adir/Cargo%25.toml,line=3,col=1,endLine=4,endColumn=2,"
        "title=FC001 odd%2Crule%3Aname"
        "::100%25 slower: a,b%0A::error::injected"
        "%0Amember app, target x86_64-unknown-linux-gnu%0Afix: do x%0D%0Ay"
    ]


# --- one annotation per finding ---------------------------------------------------------------


def test_annotation_is_relative_to_the_workspace(tmp_path: Path) -> None:
    result = _result(tmp_path, [make_finding(location=manifest_location())])
    text = render_annotations(result, workspace=str(tmp_path / "repo"))
    assert _commands(text) == [
        "::error file=crates/app/Cargo.toml,line=9,col=31,endLine=9,endColumn=55,"
        f"{TITLE}::{MESSAGE}%0Amember app, target x86_64-unknown-linux-gnu"
        '%0Afix: add "rayon" to the features of burn'
    ]
    assert text.splitlines()[-1] == "featcheck: 1 error (1 member, x86_64-unknown-linux-gnu)"


def test_without_a_workspace_the_path_is_as_given(tmp_path: Path) -> None:
    result = _result(tmp_path, [make_finding(location=manifest_location())])
    assert _commands(render_annotations(result))[0].startswith("::error file=Cargo.toml,line=9,")


def test_a_manifest_above_the_audited_root_is_placed_in_the_repository(tmp_path: Path) -> None:
    finding = make_finding(location=manifest_location(file="../../Cargo.toml"))
    text = render_annotations(_result(tmp_path, [finding]), workspace=str(tmp_path / "repo"))
    assert _commands(text)[0].startswith("::error file=Cargo.toml,line=9,")


def test_levels_and_findings_without_a_location(tmp_path: Path) -> None:
    findings = [
        make_finding(severity=Severity.WARNING, location=manifest_location()),
        make_finding(severity=Severity.INFO, member=None, target=None, suggestion=""),
    ]
    commands = _commands(render_annotations(_result(tmp_path, findings)))
    assert commands[0].startswith("::warning file=Cargo.toml,line=9,col=31,")
    assert commands[1] == f"::notice {TITLE}::{MESSAGE}"


def test_no_findings_no_annotations(tmp_path: Path) -> None:
    text = render_annotations(_result(tmp_path, []))
    assert text == "featcheck: no findings (1 member, x86_64-unknown-linux-gnu)\n"


# --- the runner keeps 10 annotations per level ------------------------------------------------


def test_twelve_errors_give_ten_annotations_and_a_closing_notice(tmp_path: Path) -> None:
    findings = [make_finding(member=f"m{i:02}", location=manifest_location()) for i in range(12)]
    commands = _commands(render_annotations(_result(tmp_path, findings), summary_written=True))
    assert len(commands) == 11
    assert all(c.startswith("::error ") for c in commands[:10])
    assert [c.split("member ")[1][:3] for c in commands[:10]] == [f"m{i:02}" for i in range(10)]
    assert commands[10] == (
        "::notice::featcheck: 2 more findings not shown as annotations (GitHub shows at most 10 "
        "per level in a step); the job summary lists all 12"
    )


def test_the_closing_notice_keeps_its_slot_among_notices(tmp_path: Path) -> None:
    findings = [make_finding(severity=Severity.INFO, member=f"m{i:02}") for i in range(12)]
    commands = _commands(render_annotations(_result(tmp_path, findings)))
    notices = [c for c in commands if c.startswith("::notice")]
    assert len(notices) == 10  # 9 findings and the closing notice: none is dropped
    assert notices[-1].startswith("::notice::featcheck: 3 more findings not shown")
    assert notices[-1].endswith("run featcheck with --format text to see them all")


def test_levels_are_capped_separately(tmp_path: Path) -> None:
    findings = [make_finding(member=f"e{i}") for i in range(10)] + [
        make_finding(severity=Severity.WARNING, member=f"w{i}") for i in range(10)
    ]
    commands = _commands(render_annotations(_result(tmp_path, findings)))
    assert len(commands) == 20  # exactly at the limit: nothing dropped, no closing notice


# --- job summary ------------------------------------------------------------------------------


def test_summary_is_appended_with_a_row_per_finding(tmp_path: Path) -> None:
    summary = tmp_path / "summary.md"
    summary.write_text("earlier step\n")
    findings = [
        make_finding(location=manifest_location(), suggestion="use a | b"),
        make_finding(severity=Severity.INFO, member="lib", location=None),
    ]
    stream = io.StringIO()
    environ = {
        "GITHUB_STEP_SUMMARY": str(summary),
        "GITHUB_WORKSPACE": str(tmp_path / "repo"),
        "GITHUB_SERVER_URL": "https://github.com",
        "GITHUB_REPOSITORY": "octo/app",
        "GITHUB_SHA": "abc123",
    }
    write_github(_result(tmp_path, findings), stream, environ)
    text = summary.read_text()
    assert text.startswith("earlier step\n## featcheck: crates/app\n")
    assert "**1 error, 1 info (1 member, x86_64-unknown-linux-gnu)**" in text
    assert "| Severity | Rule | Member | Crate | Feature | Target | Manifest | Fix |" in text
    assert (
        "| error | FC001 flex-without-rayon | app | burn-flex 0.22.1 | rayon "
        "| x86_64-unknown-linux-gnu "
        "| [crates/app/Cargo.toml:9](https://github.com/octo/app/blob/abc123/crates/app/"
        "Cargo.toml#L9) | use a \\| b |"
    ) in text
    assert "| info | FC001 flex-without-rayon | lib |" in text
    assert "(no manifest)" in text
    assert len(_commands(stream.getvalue())) == 2


def test_summary_stays_below_one_mebibyte(tmp_path: Path) -> None:
    big = "x" * 20_000
    findings = [make_finding(member=f"m{i}", suggestion=big) for i in range(100)]
    text = render_summary(_result(tmp_path, findings))
    assert len(text.encode()) < SUMMARY_LIMIT
    rows = [line for line in text.splitlines() if line.startswith("| error")]
    assert 40 < len(rows) < 100
    assert f"{100 - len(rows)} more findings left out to keep this summary under 1 MiB" in text


def test_a_full_summary_file_is_left_alone(tmp_path: Path) -> None:
    summary = tmp_path / "summary.md"
    summary.write_bytes(b"x" * (SUMMARY_LIMIT - 100))
    stream = io.StringIO()
    write_github(_result(tmp_path, [make_finding()]), stream, {"GITHUB_STEP_SUMMARY": str(summary)})
    assert summary.stat().st_size == SUMMARY_LIMIT - 100
    assert "featcheck: warning: the step summary is full" in stream.getvalue()
    # Without the summary, the closing notice (if any) must not point at it.
    assert "job summary" not in stream.getvalue()


# --- the CLI, on the example crate ------------------------------------------------------------


def test_cli_annotates_the_burn_line(
    offline_cargo: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    summary = tmp_path / "summary.md"
    monkeypatch.setenv("GITHUB_WORKSPACE", str(REPO))
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    done = run_featcheck(str(CRATES / "pitb-exec-cpu"), "--format", "github")
    assert done.returncode == 1, done.stderr
    commands = _commands(done.stdout)
    assert len(commands) == 1
    host = host_triple()
    assert commands[0].startswith(
        "::error file=crates/pitb-exec-cpu/Cargo.toml,line=9,col=31,endLine=9,endColumn=55,"
        f"{TITLE}::{MESSAGE}%0Amember pitb-exec-cpu, target {host}%0Afix: "
    )
    assert "rayon" in commands[0].split("%0Afix: ")[1]
    assert done.stdout.splitlines()[-1] == f"featcheck: 1 error (1 member, {host})"
    table = summary.read_text()
    assert table.startswith("## featcheck: crates/pitb-exec-cpu\n")
    assert (
        f"| error | FC001 flex-without-rayon | pitb-exec-cpu | burn-flex 0.22.1 | rayon | {host} "
        "| crates/pitb-exec-cpu/Cargo.toml:9 |"
    ) in table


def test_github_is_the_default_format_in_actions(
    offline_cargo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    done = run_featcheck(str(CRATES / "pitb-exec-cpu"))
    assert done.returncode == 1, done.stderr
    assert done.stdout.startswith("::error file=Cargo.toml,line=9,col=31,")
    explicit = run_featcheck(str(CRATES / "pitb-exec-cpu"), "--format", "text")
    assert explicit.stdout.startswith("pitb-exec-cpu (")


def test_clean_project_prints_no_annotation(offline_cargo: Path) -> None:
    done = run_featcheck(str(CRATES / "pitb-exec-cpu-simd"), "--format", "github")
    assert done.returncode == 0, done.stderr
    assert _commands(done.stdout) == []
    assert done.stdout.startswith("featcheck: no findings (1 member, ")
