"""The terminal report: compact by default, everything with -v, no control character from the
checkout ever printed raw."""

from __future__ import annotations

import io
import os
import re
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import pytest
from actions_support import clear_actions_environment, host_triple, make_finding
from support import CRATES, REPO, trust_of

from featcheck.featureset import AuditOptions
from featcheck.pipeline import audit_project
from featcheck.render.common import RenderOptions, first_sentence
from featcheck.render.safe_text import printable
from featcheck.render.text_report import render_text
from featcheck.report import AuditResult, Location

README_HOST = "x86_64-unknown-linux-gnu"
"""The host the README's sample output was printed on."""


@pytest.fixture(autouse=True)
def _outside_actions(monkeypatch: pytest.MonkeyPatch) -> None:
    clear_actions_environment(monkeypatch)
    monkeypatch.setenv("NO_COLOR", "1")


@pytest.fixture(scope="module")
def example_audit(offline_cargo_home: Path) -> AuditResult:
    """The audit of crates/pitb-exec-cpu (the README's example), against the stub registry."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("CARGO_HOME", str(offline_cargo_home))
        patch.setenv("RUSTUP_HOME", os.environ.get("RUSTUP_HOME") or str(Path.home() / ".rustup"))
        return audit_project(
            CRATES / "pitb-exec-cpu", AuditOptions(), trust_of(CRATES / "pitb-exec-cpu")
        )


def _text(result: AuditResult, *, verbose: bool = False) -> str:
    stream = io.StringIO()
    render_text(result, stream, RenderOptions(verbose=verbose))
    return stream.getvalue()


def test_the_example_report_fits_in_14_lines_of_100_columns_and_900_characters(
    example_audit: AuditResult,
) -> None:
    text = _text(example_audit)
    lines = text.splitlines()
    assert len(lines) <= 14, text
    assert max(len(line) for line in lines) <= 100, text
    assert len(text) <= 900, (len(text), text)
    # One finding: header, location, the quoted line with its caret, the one-line why, the fix.
    assert lines[1] == (
        "error[FC001] burn-flex 0.22.1 is built without `rayon`: every matmul runs on one core"
    )
    assert lines[2] == "  --> crates/pitb-exec-cpu/Cargo.toml:9:31"
    assert lines[4].startswith('  9 | burn = { version = "=0.22.1", default-features = false')
    assert lines[5] == "    |" + " " * 31 + "^" * 24
    assert lines[6].startswith("  = why: burn-flex hands matmul to gemm with `Parallelism::Rayon`")
    assert lines[7].startswith("         `rayon`")  # wrapped at 100 columns, indented past `why:`
    assert lines[8].startswith(
        '  = fix: add "rayon", "simd" to the features of burn (crates/pitb-exec-cpu/Cargo.toml:9)'
    )
    assert "chain:" not in text and "note:" not in text and "Measured" not in text
    assert lines[-1] == (
        "-v shows each finding's chain and measurements; `featcheck rule FC001` explains a rule"
    )


def test_verbose_adds_the_chain_notes_full_why_and_alternatives(
    example_audit: AuditResult,
) -> None:
    text = _text(example_audit, verbose=True)
    assert "  = note: the `flex` feature of burn 0.22.1 selects Flex" in text
    assert (
        "  = chain: cut at crates/pitb-exec-cpu/Cargo.toml:9: `default-features = false` on burn"
        in text
    )
    assert "Measured with burn 0.22.1 on a 12-core M2 Max" in text
    assert (
        "  = or: remove `default-features = false` from burn (crates/pitb-exec-cpu/Cargo.toml:9; "
        in text
    )
    assert "-v shows" not in text
    compact = _text(example_audit)
    # The verbose report is the compact one plus lines: the same header, quote and fix.
    for line in compact.splitlines()[:6]:
        assert line in text


def test_the_readme_sample_is_the_real_report(example_audit: AuditResult) -> None:
    readme = (REPO / "README.md").read_text()
    match = re.search(r"```\n\$ featcheck crates/pitb-exec-cpu\n(.*?)```", readme, re.DOTALL)
    assert match is not None
    text = _text(example_audit).replace(host_triple(), README_HOST)
    assert match.group(1) == text


def test_why_line_is_the_first_sentence() -> None:
    finding = make_finding()
    assert first_sentence(finding.why) == "why it matters"
    assert first_sentence("A. B" + "x" * 300) == "A."
    assert first_sentence("It is 0.22.1, e.g. here.\n Next.") == ("It is 0.22.1, e.g. here.")
    endless = replace(finding, why="word " * 100)
    assert first_sentence(endless.why) == ("word " * 100).strip()  # no sentence end: never cut


HOSTILE = "\x1b[2J\x1b]0;pwned\x07\x1b]52;c;ZXZpbA==\x07\r\u202egnp.exe\u200b\x7f\x9b31m"


def test_checkout_text_reaches_the_terminal_escaped(tmp_path: Path) -> None:
    source = f'\tburn = {{ version = "1", package = "{HOSTILE}" }}'
    column = source.index("version") + 1
    finding = make_finding(
        member=HOSTILE,
        crate=HOSTILE,
        target=HOSTILE,
        message=f"{HOSTILE} is built without `rayon`",
        suggestion=HOSTILE,
        location=Location(f"{HOSTILE}/Cargo.toml", 3, column, 3, column + 7, source),
    )
    finding = replace(finding, notes=(HOSTILE,), chain=(HOSTILE,), why=HOSTILE)
    result = AuditResult(
        tmp_path, findings=[finding], members=[HOSTILE], targets=[HOSTILE], notes=[HOSTILE]
    )
    for verbose in (False, True):
        text = _text(result, verbose=verbose)
        stream = io.StringIO()
        render_text(result, stream, RenderOptions(verbose=verbose, quiet=True))
        for shown in (text, stream.getvalue()):
            assert not [c for c in shown if c != "\n" and not c.isprintable()], repr(shown)
            assert printable(HOSTILE) in shown
    escaped = (
        "\\x1b[2J\\x1b]0;pwned\\x07\\x1b]52;c;ZXZpbA==\\x07\\r\\u202egnp.exe\\u200b\\x7f\\x9b31m"
    )
    assert printable(HOSTILE) == escaped
    # The caret stays under `version` though a tab (shown as 4 spaces) precedes it.
    lines = _text(result).splitlines()
    quoted = next(i for i, line in enumerate(lines) if line.startswith("  3 | "))
    assert lines[quoted].startswith('  3 |     burn = { version = "1"')
    caret = lines[quoted + 1]
    assert caret.index("^") == lines[quoted].index("version") and caret.count("^") == 7


def test_printable_keeps_ordinary_text() -> None:
    assert printable('burn = { features = ["rayon"] } # é, 漢字, emoji 🦀') == (
        'burn = { features = ["rayon"] } # é, 漢字, emoji 🦀'
    )
    assert printable("a\tb\u00a0c\U000e0001") == "a\\tb\\xa0c\\U000e0001"


def test_the_diff_of_a_hostile_manifest_is_shown_escaped(
    offline_cargo_for: Callable[..., Path], tmp_path: Path
) -> None:
    """--diff quotes manifest lines: TOML forbids raw C0 controls, but a comment may hold C1
    controls (\x9b is CSI on 8-bit terminals) and bidi overrides; tabs and CRLF stay line text."""
    import shutil

    from cli_in_process import run_in_process

    offline_cargo_for(CRATES / "pitb-exec-cpu")
    crate = tmp_path / "crate"
    shutil.copytree(CRATES / "pitb-exec-cpu", crate, ignore=shutil.ignore_patterns("target"))
    manifest = crate / "Cargo.toml"
    lines = manifest.read_text().splitlines()
    burn = next(i for i, line in enumerate(lines) if line.startswith("burn = "))
    lines[burn] = "\t" + lines[burn] + " # \x9b2J \u202eexe.gnp ##[add-mask]x"
    manifest.write_bytes(("\r\n".join(lines) + "\r\n").encode())
    done = run_in_process(str(crate), "--diff")
    assert done.returncode == 1, done.stderr
    assert not [c for c in done.stdout if c not in "\t\n" and not c.isprintable()]
    assert '-\tburn = { version = "=0.22.1"' in done.stdout
    # The legacy workflow command is broken even outside Actions: a diff is often printed in CI.
    assert " # \\x9b2J \\u202eexe.gnp ##\\x5badd-mask]x" in done.stdout


def test_coloured_report_is_the_plain_one_with_styles(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Without a terminal the report is written without rich; forced colour goes through rich.
    # Text that looks like markup (or escapes it, or names an emoji) is shown as written.
    markup = "[bold red]x[/] \\[y] [link=https://example.com]z[/link] :thumbs_up: \\"
    finding = make_finding(
        member=markup,
        message=f"{markup} is built without `rayon`",
        suggestion=markup,
        location=Location("app/Cargo.toml", 2, 1, 2, 5, f"burn = {markup}"),
    )
    result = AuditResult(tmp_path, findings=[finding], members=["app"], notes=[markup])
    plain = _text(result)
    assert f"note: {markup}\n{markup} (x86_64-unknown-linux-gnu)\n" in plain
    assert f"  = fix: {markup}\n" in plain
    monkeypatch.delenv("NO_COLOR")
    monkeypatch.setenv("FORCE_COLOR", "1")
    coloured = _text(result)
    assert "\x1b[1;31merror[FC001]\x1b[0m" in coloured
    assert re.sub(r"\x1b\[[0-9;]*m", "", coloured) == plain
