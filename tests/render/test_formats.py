"""The format registry: every `--format` value is one registered renderer, made with the
command line's options, and it writes what the format's own functions write."""

from __future__ import annotations

import io
import re
from pathlib import Path

import pytest
from actions_support import clear_actions_environment, make_finding

from featcheck import render
from featcheck.cli.check_arguments import check_parser
from featcheck.render.common import RenderOptions
from featcheck.render.github import write_github
from featcheck.render.json_report import render_json
from featcheck.render.sarif import render_sarif
from featcheck.render.text_report import render_text
from featcheck.report import AuditResult


@pytest.fixture(autouse=True)
def _outside_actions(monkeypatch: pytest.MonkeyPatch) -> None:
    clear_actions_environment(monkeypatch)
    monkeypatch.delenv("FORCE_COLOR", raising=False)


def _result(tmp_path: Path) -> AuditResult:
    return AuditResult(tmp_path, findings=[make_finding()], members=["app"], targets=["x"])


def _rendered(name: str, result: AuditResult, options: RenderOptions) -> str:
    stream = io.StringIO()
    render.renderer(name, options)(result, stream)
    return _same_token(stream.getvalue())


def _same_token(text: str) -> str:
    """The stop-commands token is drawn afresh for every block."""
    return re.sub(r"\b[0-9a-f]{32}\b", "TOKEN", text)


def test_the_format_flag_offers_exactly_the_registered_formats() -> None:
    action = next(a for a in check_parser("featcheck")._actions if a.dest == "output_format")
    assert tuple(action.choices or ()) == tuple(render.FORMATS)
    assert render.formats_help().startswith("text (default), json, github (")


def test_each_renderer_writes_what_its_format_writes(tmp_path: Path) -> None:
    result = _result(tmp_path)
    plain = RenderOptions(colour=False)
    stream = io.StringIO()
    write_github(result, stream)
    expected = {
        "json": render_json(result),
        "sarif": render_sarif(result),
        "github": _same_token(stream.getvalue()),
    }
    for name, text in expected.items():
        assert _rendered(name, result, plain) == text
    text = io.StringIO()
    render_text(result, text, RenderOptions(verbose=True, colour=False, width=60))
    assert _rendered("text", result, plain._replace(verbose=True, width=60)) == text.getvalue()
    findings = io.StringIO()
    render_text(result, findings, RenderOptions(quiet=True, colour=False))
    assert _rendered("text", result, plain._replace(quiet=True)) == findings.getvalue()
