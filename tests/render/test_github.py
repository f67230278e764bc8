"""`--format github`: the workflow commands and job summary a GitHub Actions user sees."""

from __future__ import annotations

import io
import json
import re
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from actions_support import (
    clear_actions_environment,
    host_triple,
    make_finding,
    manifest_location,
    runner_commands,
)
from cli_in_process import run_in_process
from support import CRATES, REPO

from featcheck.render.github import (
    SUMMARY_LIMIT,
    render_annotations,
    render_summary,
    write_github,
)
from featcheck.render.safe_text import escape_data, escape_property, safe_line, stop_commands
from featcheck.report import AuditResult, Finding, Location
from featcheck.severity import Severity

pytestmark = pytest.mark.usefixtures("remembered_cargo")

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
    """What the runner acts on: only featcheck's annotations may be there."""
    return runner_commands(text)


def _log(text: str) -> list[str]:
    """The plain log lines, without commands and the stop-commands markers around them."""
    return [line for line in text.splitlines() if not line.startswith("::")]


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
        "::100%25 slower: a,b\\n::error::injected"
        "%0Amember app, target x86_64-unknown-linux-gnu%0Afix: do x\\r\\ny"
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
    assert _log(text) == ["featcheck: 1 error (1 member, x86_64-unknown-linux-gnu)"]


def test_without_a_workspace_the_path_is_as_given(tmp_path: Path) -> None:
    result = _result(tmp_path, [make_finding(location=manifest_location())])
    assert _commands(render_annotations(result))[0].startswith("::error file=Cargo.toml,line=9,")


def test_a_manifest_above_the_audited_root_is_placed_in_the_repository(tmp_path: Path) -> None:
    finding = make_finding(location=manifest_location(file="../../Cargo.toml"))
    text = render_annotations(_result(tmp_path, [finding]), workspace=str(tmp_path / "repo"))
    assert _commands(text)[0].startswith("::error file=Cargo.toml,line=9,")


def test_a_workspace_named_through_a_symlink_still_places_the_manifest(tmp_path: Path) -> None:
    result = _result(tmp_path, [make_finding(location=manifest_location())])
    (tmp_path / "linked").symlink_to(tmp_path / "repo", target_is_directory=True)
    text = render_annotations(result, workspace=str(tmp_path / "linked"))
    assert _commands(text)[0].startswith("::error file=crates/app/Cargo.toml,line=9,")
    elsewhere = render_annotations(result, workspace=str(tmp_path / "other"))
    assert _commands(elsewhere)[0].startswith("::error file=Cargo.toml,line=9,")


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
    [stop, count, resume] = text.splitlines()
    token = stop.removeprefix("::stop-commands::")
    assert len(token) == 32 and resume == f"::{token}::"
    assert count == "featcheck: no findings (1 member, x86_64-unknown-linux-gnu)"
    assert _commands(text) == []


# --- the runner keeps 10 annotations per level ------------------------------------------------


def test_twelve_errors_give_ten_annotations_and_a_closing_notice(tmp_path: Path) -> None:
    # Twelve cuts (one line each): twelve findings of one line would be one annotation.
    findings = [
        make_finding(member=f"m{i:02}", location=manifest_location(line=9 + i)) for i in range(12)
    ]
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
    assert "**1 error, 1 info (1 member, x86\\_64-unknown-linux-gnu)**" in text
    assert "| Severity | Rule | Member | Crate | Feature | Target | Manifest | Fix |" in text
    assert (
        "| error | FC001 flex-without-rayon | app | burn-flex 0.22.1 | rayon "
        "| x86\\_64-unknown-linux-gnu "
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
    offline_cargo_for: Callable[..., Path], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    offline_cargo_for(CRATES / "pitb-exec-cpu")
    summary = tmp_path / "summary.md"
    monkeypatch.setenv("GITHUB_WORKSPACE", str(REPO))
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    done = run_in_process(str(CRATES / "pitb-exec-cpu"), "--format", "github")
    assert done.returncode == 1, done.stderr
    commands = _commands(done.stdout)
    assert len(commands) == 1
    host = host_triple()
    assert commands[0].startswith(
        "::error file=crates/pitb-exec-cpu/Cargo.toml,line=9,col=31,endLine=9,endColumn=55,"
        f"{TITLE}::{MESSAGE}%0Amember pitb-exec-cpu, target {host}%0Afix: "
    )
    assert "rayon" in commands[0].split("%0Afix: ")[1]
    assert _log(done.stdout) == [f"featcheck: 1 error (1 member, {host})"]
    table = summary.read_text()
    assert table.startswith("## featcheck: crates/pitb-exec-cpu\n")
    assert (
        "| error | FC001 flex-without-rayon | pitb-exec-cpu | burn-flex 0.22.1 | rayon | "
        f"{host.replace('_', chr(92) + '_')} "
        "| crates/pitb-exec-cpu/Cargo.toml:9 |"
    ) in table


def test_github_is_the_default_format_in_actions(
    offline_cargo_for: Callable[..., Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    offline_cargo_for(CRATES / "pitb-exec-cpu")
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    done = run_in_process(str(CRATES / "pitb-exec-cpu"))
    assert done.returncode == 1, done.stderr
    assert done.stdout.startswith("::error file=crates/pitb-exec-cpu/Cargo.toml,line=9,col=31,")
    explicit = run_in_process(str(CRATES / "pitb-exec-cpu"), "--format", "text")
    # In Actions the text report, which quotes manifest lines, is printed inside stop-commands.
    assert _log(explicit.stdout)[0].startswith("pitb-exec-cpu (")
    assert explicit.stdout.startswith("::stop-commands::")
    assert _commands(explicit.stdout) == []


def test_clean_project_prints_no_annotation(offline_cargo_for: Callable[..., Path]) -> None:
    offline_cargo_for(CRATES / "pitb-exec-cpu-simd")
    done = run_in_process(str(CRATES / "pitb-exec-cpu-simd"), "--format", "github")
    assert done.returncode == 0, done.stderr
    assert _commands(done.stdout) == []
    assert _log(done.stdout)[0].startswith("featcheck: no findings (1 member, ")


# --- a hostile checkout cannot raise a workflow command ------------------------------------------

HOSTILE = (
    "##[add-mask]secret ##[warning title=spoof]w ::error::mid\r::notice::after-cr"
    "\n::error::after-lf 100%0A%25 \x1b]8;;https://evil\x07link\x1b]8;;\x07 ##[endgroup]"
)


def _hostile_result(tmp_path: Path) -> AuditResult:
    findings = [
        make_finding(
            member=HOSTILE,
            crate=HOSTILE,
            feature=HOSTILE,
            target=HOSTILE,
            message=f"{HOSTILE} is built without `rayon`",
            suggestion=HOSTILE,
            location=manifest_location(file=f"{HOSTILE}/Cargo.toml"),
        ),
        make_finding(severity=Severity.INFO, member=HOSTILE, location=None, suggestion=""),
    ]
    return AuditResult(
        tmp_path / "repo",
        findings=findings,
        members=[HOSTILE],
        targets=[HOSTILE],
        notes=[HOSTILE, f"::error::{HOSTILE}"],
    )


def test_hostile_names_paths_and_notes_raise_no_command_but_featchecks_own(
    tmp_path: Path,
) -> None:
    summary = tmp_path / "summary.md"
    stream = io.StringIO()
    environ = {"GITHUB_STEP_SUMMARY": str(summary), "GITHUB_WORKSPACE": str(tmp_path / "repo")}
    write_github(_hostile_result(tmp_path), stream, environ)
    out = stream.getvalue()
    commands = _commands(out)
    assert len(commands) == 2
    assert commands[0].startswith("::error file=##[add-mask]secret ##[warning title=spoof]w %3A")
    assert commands[1].startswith("::notice title=FC001 flex-without-rayon::")
    # No raw CR, LF or ESC inside any line; the log text is printable and defused.
    assert "\r" not in out and "\x1b" not in out
    for line in _log(out):
        assert "##[" not in line
        assert line.startswith("featcheck: "), line
    assert "featcheck: note: ##\\x5badd-mask]secret ##\\x5bwarning title=spoof]w ::error::mid" in (
        out
    )
    assert "\\r::notice::after-cr\\n::error::after-lf 100%0A%25 \\x1b]8;;https://evil\\x07" in out


def test_the_job_summary_shows_hostile_text_literally(tmp_path: Path) -> None:
    finding = make_finding(
        member="<img src=https://evil/p.png>",
        crate="[click](https://evil)",
        feature="*bold* _em_ ~~s~~ `code` $x^2$ @octocat",
        suggestion="a | b\n<details>",
        location=manifest_location(file="](javascript:alert(1))/Cargo.toml"),
    )
    text = render_summary(
        _result(tmp_path, [finding]),
        workspace=str(tmp_path / "repo"),
        links=None,
    )
    row = next(line for line in text.splitlines() if line.startswith("| error"))
    assert "&lt;img src=https://evil/p.png&gt;" in row
    assert "\\[click\\](https://evil) 0.22.1" in row
    assert "\\*bold\\* \\_em\\_ \\~\\~s\\~\\~ \\`code\\` \\$x^2\\$ \\@octocat" in row
    assert "a \\| b<br>&lt;details&gt;" in row
    assert "crates/app/\\](javascript:alert(1))/Cargo.toml:9" in row
    assert "<img" not in text and "<details>" not in text
    assert row.count(" | ") == 7  # eight cells, none split by a pipe in the text


def test_json_and_sarif_printed_to_a_log_carry_no_command(tmp_path: Path) -> None:
    from featcheck.render.json_report import render_json
    from featcheck.render.sarif import render_sarif

    result = _hostile_result(tmp_path)
    for text in (render_json(result), render_sarif(result, {})):
        assert _commands(text) == []
        assert "##[" not in text
    document = json.loads(render_json(result))
    assert document["findings"][0]["member"] == HOSTILE
    assert document["notes"] == [HOSTILE, f"::error::{HOSTILE}"]


def test_the_stop_token_is_fresh_and_absent_from_the_text() -> None:
    first = stop_commands(["featcheck: a"])
    second = stop_commands(["featcheck: a"])
    assert first != second
    token = first.splitlines()[0].removeprefix("::stop-commands::")
    assert re.fullmatch(r"[0-9a-f]{32}", token)
    assert first.splitlines()[1:] == ["featcheck: a", f"::{token}::"]
    assert stop_commands([]) == ""


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("  ::error::x", "  \\x3a:error::x"),
        ("a ##[add-mask]b ###[x]", "a ##\\x5badd-mask]b ###\\x5bx]"),
        ("a\rb\nc\x1b", "a\\rb\\nc\\x1b"),
    ],
)
def test_log_lines_are_inert(text: str, shown: str) -> None:
    assert safe_line(text) == shown
    assert _commands(safe_line(text)) == []


def test_an_error_in_actions_is_one_annotation_that_carries_no_command(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from featcheck.cli.terminal import CommandExit as _Exit
    from featcheck.cli.terminal import fail as _fail
    from featcheck.errors import FeatcheckError

    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    with pytest.raises(_Exit) as raised:
        _fail(FeatcheckError(f"cargo metadata failed: {HOSTILE}\n::error::second line"))
    assert raised.value.code == 2
    err = capsys.readouterr().err
    # Exactly featcheck's own annotation: the checkout's text inside it is escaped data.
    assert _commands(err) == [err.removesuffix("\n")]
    assert err.count("\n") == 1
    title = "::error title=featcheck::"
    assert err.startswith(title)
    assert err.removeprefix(title).removesuffix("\n").split("%0A") == [
        "featcheck: error: cargo metadata failed: ##\\x5badd-mask]secret "
        "##\\x5bwarning title=spoof]w ::error::mid",
        "  \\x3a:notice::after-cr",
        "  \\x3a:error::after-lf 100%250A%2525 \\x1b]8;;https://evil\\x07link\\x1b]8;;\\x07 "
        "##\\x5bendgroup]",
        "  \\x3a:error::second line",
    ]


def test_a_cargo_error_quoting_the_manifest_raises_no_command(
    offline_cargo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """cargo quotes the bad dependency name; the error is one annotation, its text inert."""
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "main.rs").write_text("fn main() {}\n")
    (tmp_path / "Cargo.toml").write_text(
        '[package]\nname = "app"\nversion = "0.1.0"\nedition = "2021"\n\n'
        '[dependencies]\n"##[add-mask]secret" = "1"\n'
    )
    for args in (["--format", "github"], []):
        monkeypatch.setenv("GITHUB_ACTIONS", "true" if not args else "false")
        done = run_in_process(str(tmp_path), *args)
        assert done.returncode == 2, done.stderr
        [annotation] = _commands(done.stderr)
        assert annotation == done.stderr.removesuffix("\n")
        assert annotation.startswith("::error title=featcheck::featcheck: error: cargo ")
        assert _commands(done.stdout) == []
        assert "`##\\x5badd-mask]secret`" in done.stderr


def test_a_hostile_member_directory_raises_only_featchecks_annotation(
    offline_cargo_for: Callable[..., Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    offline_cargo_for(CRATES / "pitb-exec-cpu")
    member = tmp_path / "##[add-mask]x ##[warning]w"
    shutil.copytree(CRATES / "pitb-exec-cpu", member, ignore=shutil.ignore_patterns("target"))
    monkeypatch.setenv("GITHUB_WORKSPACE", str(tmp_path))
    done = run_in_process(str(member), "--format", "github", "-v")
    assert done.returncode == 1, done.stderr
    [annotation] = _commands(done.stdout)
    assert annotation.startswith(
        "::error file=##[add-mask]x ##[warning]w/Cargo.toml,line=9,col=31,"
    )
    # -v prints the cargo commands, which name the manifest path: each in its own stop block.
    assert "featcheck: running: " in done.stderr
    assert _commands(done.stderr) == []
    assert "##[" not in "".join(_log(done.stderr))


def test_an_error_in_a_file_is_annotated_on_its_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A bad featcheck.toml in a pull request: the annotation lands on the file and line, named
    as the runner names the repository's files; a path's line break is the property's `%0A`,
    never a second command."""
    from featcheck.cli.terminal import CommandExit as _Exit
    from featcheck.cli.terminal import fail as _fail
    from featcheck.errors import FeatcheckError

    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    monkeypatch.setenv("GITHUB_WORKSPACE", str(tmp_path))
    for path, expected in (
        (tmp_path / "featcheck.toml", "file=featcheck.toml,line=2,col=5,"),
        (
            tmp_path / "a,b\n::warning::x" / "Cargo.toml",
            "file=a%2Cb%0A%3A%3Awarning%3A%3Ax/Cargo.toml,line=2,col=5,",
        ),
        (Path("/elsewhere/Cargo.toml"), "file=/elsewhere/Cargo.toml,line=2,col=5,"),
    ):
        with pytest.raises(_Exit):
            _fail(FeatcheckError("unknown key `bogus`", path=path, line=2, column=5))
        err = capsys.readouterr().err
        assert _commands(err) == [err.removesuffix("\n")]
        assert err.startswith(f"::error {expected}title=featcheck::featcheck: error: "), err
