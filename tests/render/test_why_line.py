"""The one-line why of the compact report ends where a sentence of the rule's why ends: never
mid-clause, never inside a quotation, for every rule."""

from __future__ import annotations

import io
import re
from dataclasses import replace
from pathlib import Path

import pytest
from actions_support import clear_actions_environment, make_finding

from featcheck.render.common import RenderOptions
from featcheck.render.text_report import render_text
from featcheck.report import AuditResult
from featcheck.rules import Rule, builtin_rules

_SENTENCE_END = re.compile(r"[.!?][\")]*$")


@pytest.fixture(autouse=True)
def _outside_actions(monkeypatch: pytest.MonkeyPatch) -> None:
    clear_actions_environment(monkeypatch)
    monkeypatch.setenv("NO_COLOR", "1")


def _rendered_why(rule: Rule, tmp_path: Path) -> str:
    """The `= why:` of a finding of `rule` as the terminal report prints it, its wrapped lines
    joined again."""
    finding = replace(make_finding(code=rule.code, rule=rule.name), why=rule.why)
    stream = io.StringIO()
    render_text(AuditResult(tmp_path, findings=[finding], members=["app"]), stream, RenderOptions())
    lines = stream.getvalue().splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("  = why: "))
    why = [lines[start].removeprefix("  = why: ")]
    for line in lines[start + 1 :]:
        if not line.startswith(" " * 9):
            break
        why.append(line.strip())
    return " ".join(why)


@pytest.mark.parametrize("rule", builtin_rules(), ids=lambda rule: rule.code)
def test_the_why_line_ends_a_sentence_and_closes_its_quotations(rule: Rule, tmp_path: Path) -> None:
    why = _rendered_why(rule, tmp_path)
    assert _SENTENCE_END.search(why), why
    assert why.count('"') % 2 == 0, why
    assert why.count("`") % 2 == 0, why
    assert why.count("(") == why.count(")"), why
    assert not why.endswith("…"), why
    # What it shows is the why's own words, from its start.
    assert " ".join(rule.why.split()).startswith(why)
