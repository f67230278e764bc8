"""The catalogue documents itself: every built-in spec fills every section, and docs/rules.md
and the README's rule table are generated from the specs (FEATCHECK_UPDATE_SNAPSHOTS=1 rewrites
them, see tests/snapshots.py)."""

from __future__ import annotations

import pytest
from rule_docs import catalogue_markdown, with_readme_table
from rule_fixtures import check_documented
from snapshots import assert_snapshot
from support import REPO

from featcheck.rules import (
    UNUSED_SUPPRESSION,
    Catalogue,
    Rule,
    builtin_rules,
    find_by_code,
    rule_markdown,
)

BUILTIN = builtin_rules()
ENTRIES = (*BUILTIN, UNUSED_SUPPRESSION)


def test_docs_rules_md_is_generated_from_the_specs() -> None:
    assert_snapshot(REPO / "docs" / "rules.md", catalogue_markdown(ENTRIES))


def test_readme_rule_table_is_generated_from_the_specs() -> None:
    readme = REPO / "README.md"
    assert_snapshot(readme, with_readme_table(readme.read_text(encoding="utf-8"), ENTRIES))


def test_codes_and_names_are_unique_and_well_formed() -> None:
    codes = [r.code for r in BUILTIN]
    names = [r.name for r in BUILTIN]
    assert len(set(codes)) == len(codes) and len(set(names)) == len(names)
    assert codes == sorted(codes)
    for rule in BUILTIN:
        assert rule.code.startswith("FC") and rule.code[2:].isdigit()
        assert rule.name == rule.name.lower() and " " not in rule.name


def test_spec_files_are_named_after_their_rule() -> None:
    directory = REPO / "src" / "featcheck" / "rules" / "builtin"
    files = sorted(p.name for p in directory.glob("*.toml"))
    assert files == [f"{r.code.lower()}-{r.name}.toml" for r in BUILTIN]


@pytest.mark.parametrize("rule", BUILTIN, ids=lambda r: r.code)
def test_every_builtin_rule_fills_every_doc_section(rule: Rule) -> None:
    check_documented(rule)


def test_rules_are_found_by_code_or_name() -> None:
    rules = Catalogue.builtin().rules
    assert find_by_code(rules, "fc001") is find_by_code(rules, " flex-without-rayon") is BUILTIN[0]
    assert find_by_code(rules, "FC999") is None
    assert find_by_code(ENTRIES, "Unused-Suppression") is UNUSED_SUPPRESSION
    assert find_by_code(BUILTIN, "fc900") is None


def test_hints_are_opt_in() -> None:
    default = {r.code for r in Catalogue.builtin().select()}
    assert "FC006" not in default and "FC007" not in default and "FC001" in default
    chosen = {r.code for r in Catalogue.builtin().select(select=("FC007",), ignore=("FC003",))}
    assert "FC007" in chosen and "FC003" not in chosen
    with pytest.raises(ValueError, match="FC999"):
        Catalogue.builtin().select(select=("FC999",))


def test_threading_rules_say_where_they_apply() -> None:
    threading = [r for r in BUILTIN if "threads" in r.targets.needs]
    assert {"FC001", "FC002", "FC008", "FC009", "FC010"} <= {r.code for r in threading}
    for rule in threading:
        assert "Applies to targets with threads" in rule_markdown(rule)
