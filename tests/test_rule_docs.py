"""The catalogue documents itself: every rule has every section, and docs/rules.md is current."""

from __future__ import annotations

import pytest
from conftest import REPO

from featcheck.rules import ALL_RULES, Rule, rule_by_code, select_rules
from featcheck.rules.docs import catalogue_markdown, rule_markdown


def test_docs_rules_md_is_generated_from_the_rules() -> None:
    current = (REPO / "docs" / "rules.md").read_text()
    assert current == catalogue_markdown(), (
        "docs/rules.md is out of date: run `python -m featcheck.rules.docs > docs/rules.md`"
    )


def test_codes_and_names_are_unique_and_well_formed() -> None:
    codes = [r.code for r in ALL_RULES]
    names = [r.name for r in ALL_RULES]
    assert len(set(codes)) == len(codes) and len(set(names)) == len(names)
    assert codes == sorted(codes)
    for rule in ALL_RULES:
        assert rule.code.startswith("FC") and rule.code[2:].isdigit()
        assert rule.name == rule.name.lower() and " " not in rule.name


@pytest.mark.parametrize("rule", ALL_RULES, ids=lambda r: r.code)
def test_every_rule_fills_every_doc_section(rule: Rule) -> None:
    for section in ("what", "why", "example", "fix", "ignore"):
        assert len(getattr(rule.doc, section).strip()) > 20, section
    text = rule_markdown(rule)
    for title in ("What it checks", "Why it matters", "Example", "Fix", "When to ignore it"):
        assert f"# {title}" in text


def test_rules_are_found_by_code_or_name() -> None:
    assert rule_by_code("fc001") is rule_by_code("flex-without-rayon") is ALL_RULES[0]
    assert rule_by_code("FC999") is None


def test_hints_are_opt_in() -> None:
    default = {r.code for r in select_rules()}
    assert "FC006" not in default and "FC007" not in default and "FC001" in default
    chosen = {r.code for r in select_rules(select=("FC007",), ignore=("FC003",))}
    assert "FC007" in chosen and "FC003" not in chosen
    with pytest.raises(ValueError, match="FC999"):
        select_rules(select=("FC999",))
