"""A report that fits the terminal: wrapped with a hanging indent, long manifest lines cut
around the span, the rule table and help within the width, a rule's page rendered, --color."""

from __future__ import annotations

import io
import os
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from actions_support import clear_actions_environment, make_finding
from cli_in_process import run_in_process
from support import CRATES, run_in_terminal

from featcheck.cargo.runner import DownloadProgress
from featcheck.render.common import RenderOptions
from featcheck.render.text_report import render_text
from featcheck.report import AuditResult, Location

ESCAPE = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


@pytest.fixture(autouse=True)
def _outside_actions(monkeypatch: pytest.MonkeyPatch) -> None:
    clear_actions_environment(monkeypatch)


def _on_a_terminal(args: list[str], columns: int = 80, **extra: str) -> str:
    """featcheck's stdout on a pseudo-terminal `columns` wide (no COLUMNS to tell it), escape
    sequences removed; stderr (the spinner) goes elsewhere."""
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "NO_COLOR", "FORCE_COLOR")}
    drawn = run_in_terminal(
        args, {**env, "TERM": "xterm-256color", **extra}, columns=columns, stderr_too=False
    )
    text = drawn.replace("\r\n", "\n")
    return ESCAPE.sub("", text)


@pytest.mark.usefixtures("remembered_cargo")
def test_an_80_column_terminal_gets_a_report_that_fits(
    offline_cargo_for: Callable[..., Path],
) -> None:
    offline_cargo_for(CRATES / "pitb-exec-cpu")
    crate = str(CRATES / "pitb-exec-cpu")
    drawn = _on_a_terminal([crate, "-v"])
    wide = run_in_process(crate, "-v").stdout  # COLUMNS=200: one line per logical line
    lines = drawn.splitlines()
    assert "error[FC001] burn-flex 0.22.1 is built without `rayon`" in drawn
    assert all(len(line) <= 80 for line in lines), [line for line in lines if len(line) > 80]
    # A line at column 0 starts a logical line (a heading, a finding, the count); every wrapped
    # continuation is indented past its label: `  = why: ` and the like.
    starts = [line for line in wide.splitlines() if line and not line[0].isspace()]
    for line in lines:
        if line and not line[0].isspace():
            assert any(start.startswith(line.rstrip()) for start in starts), line
    why = next(i for i, line in enumerate(lines) if line.startswith("  = why: "))
    assert lines[why + 1].startswith(" " * len("  = why: ")), lines[why : why + 2]
    assert lines[why + 1][len("  = why: ")] != " "
    # The manifest line is cut to fit, as rustc does, and the caret still marks its span.
    [quoted] = [line for line in lines if line.startswith("  9 | burn = ")]
    assert quoted.endswith("...") and len(quoted) <= 80
    caret = lines[lines.index(quoted) + 1]
    column = quoted.index("default-features = false")
    assert caret[column:] == "^" * len("default-features = false")


def test_piped_the_report_is_100_columns(
    offline_cargo_for: Callable[..., Path], tmp_path: Path
) -> None:
    offline_cargo_for(CRATES / "pitb-exec-cpu")
    env = {k: v for k, v in os.environ.items() if k != "COLUMNS"}
    done = subprocess.run(
        [sys.executable, "-m", "featcheck", str(CRATES / "pitb-exec-cpu"), "-v"],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    assert done.returncode == 1
    widths = [len(line) for line in done.stdout.splitlines()]
    assert max(widths) <= 100 and max(widths) > 80, done.stdout


def test_a_span_at_the_end_of_a_long_line_is_shown_with_the_start_cut(tmp_path: Path) -> None:
    source = "burn = { " + ", ".join(f'"feature-{n}"' for n in range(12)) + ", x = false }"
    start = source.index("x = false") + 1
    location = Location("Cargo.toml", 3, start, 3, start + len("x = false"), source)
    result = AuditResult(tmp_path, findings=[make_finding(location=location)], members=["app"])
    stream = io.StringIO()
    render_text(result, stream, RenderOptions(width=60))
    lines = stream.getvalue().splitlines()
    [quoted] = [line for line in lines if line.startswith("  3 | ")]
    assert quoted.startswith("  3 | ...") and quoted.endswith("x = false }")
    assert len(quoted) <= 60
    caret = lines[lines.index(quoted) + 1]
    assert caret.index("^") == quoted.index("x = false")
    assert caret.rstrip().endswith("^" * len("x = false"))


def test_rule_is_rendered_on_a_terminal_and_markdown_when_piped() -> None:
    drawn = _on_a_terminal(["rule", "FC001"])
    assert "FC001 flex-without-rayon" in drawn
    assert "Why it matters" in drawn
    assert "**" not in drawn and "`" not in drawn
    assert not [line for line in drawn.splitlines() if line.lstrip().startswith("#")]
    piped = run_in_process("rule", "FC001")
    assert piped.stdout.startswith("# FC001 `flex-without-rayon`\n")
    assert "Default severity: **error**" in piped.stdout


def test_the_rule_table_fits_80_columns() -> None:
    drawn = _on_a_terminal(["rules"])
    lines = drawn.splitlines()
    assert all(len(line) <= 80 for line in lines), [line for line in lines if len(line) > 80]
    assert lines[0].split() == ["code", "name", "severity"]
    rows = [line.split() for line in lines[1:] if not line.startswith(" ")]
    assert rows[0] == ["FC001", "flex-without-rayon", "error"]
    assert rows[-1][0] == "FC900"
    # Wide enough, each rule is one row with what it checks beside it.
    wide = run_in_process("rules").stdout.splitlines()  # COLUMNS=200
    assert wide[0].split() == ["code", "name", "severity", "what", "it", "checks"]
    assert wide[1].split()[:3] == ["FC001", "flex-without-rayon", "error"]
    assert wide[1].endswith("is built without `rayon`")


@pytest.mark.parametrize("command", [["--help"], ["probe", "--help"]])
def test_help_wraps_to_the_terminal(command: list[str]) -> None:
    narrow = _on_a_terminal(command, columns=80).splitlines()
    assert all(len(line) <= 80 for line in narrow), [line for line in narrow if len(line) > 80]
    wide = _on_a_terminal(command, columns=140)
    assert max(len(line) for line in wide.splitlines()) > 100  # paragraphs use the room given
    wide_help = wide if command == ["--help"] else _on_a_terminal(["--help"], columns=140)
    assert "  featcheck crates/app -p app --target aarch64-apple-darwin" in "\n".join(
        wide_help.splitlines()
    )


@pytest.mark.usefixtures("remembered_cargo")
def test_color_always_never_and_auto(offline_cargo_for: Callable[..., Path]) -> None:
    offline_cargo_for(CRATES / "pitb-exec-cpu")
    crate = str(CRATES / "pitb-exec-cpu")
    always = run_in_process(crate, "--color", "always")  # with NO_COLOR=1, piped
    assert "\x1b[1;31merror[FC001]" in always.stdout  # the flag decides over NO_COLOR
    never = subprocess.run(
        [sys.executable, "-m", "featcheck", crate, "--color", "never"],
        capture_output=True,
        text=True,
        env={**os.environ, "FORCE_COLOR": "1"},
        check=False,
    )
    assert "\x1b[" not in never.stdout and "error[FC001]" in never.stdout
    assert "\x1b[" not in run_in_process(crate).stdout  # auto: piped, no colour
    bad = run_in_process(crate, "--color", "sometimes")
    assert bad.returncode == 2 and "--color" in bad.stderr and "Traceback" not in bad.stderr


def test_cargo_downloads_become_a_progress_text() -> None:
    said: list[str] = []
    progress = DownloadProgress(said.append)
    progress.feed(b"    Updating crates.io index\n Downloading crates ...\n")
    progress.feed(b"  Downloaded serde v1.0.219\n  Downloaded gemm v0.19.0\n  Down")
    progress.feed(b"loaded burn\x1b]0;evil\x07 v0.22.1\n")
    progress.feed(b"  Downloaded 670 crates (96.0 MB) in 10.34s (largest was `x` at 9 MB)\n")
    assert said == [
        "downloading crates…",
        "downloading crates… 2",
        "downloading crates… 3",  # a name from the lockfile is never shown
        "downloaded 670 crates (96.0 MB)",
    ]


def test_the_audit_does_not_load_the_markdown_renderer(
    offline_cargo_for: Callable[..., Path],
) -> None:
    offline_cargo_for(CRATES / "pitb-exec-cpu")
    script = (
        "import sys\nfrom featcheck.cli import run\n"
        f"code = run([{str(CRATES / 'pitb-exec-cpu')!r}, '--color', 'always'])\n"
        "assert code == 1, code\nassert 'rich.markdown' not in sys.modules\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


def test_a_report_to_a_pipe_does_not_load_rich(offline_cargo_for: Callable[..., Path]) -> None:
    """A hook's or CI's report goes to a pipe, where nothing is coloured: rich is not imported
    (~25 ms of CPU beside cargo on a busy machine)."""
    offline_cargo_for(CRATES / "pitb-exec-cpu")
    script = (
        "import sys\nfrom featcheck.cli import run\n"
        f"code = run([{str(CRATES / 'pitb-exec-cpu')!r}])\n"
        "assert code == 1, code\n"
        "assert not [m for m in sys.modules if m.split('.')[0] == 'rich'], 'rich loaded'\n"
    )
    env = {k: v for k, v in os.environ.items() if k not in ("FORCE_COLOR", "TTY_COMPATIBLE")}
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env)
    assert done.returncode == 0, done.stderr
    assert "error[FC001]" in done.stdout
