"""docs/rules.md and the README's rule table, made from the rule specs: the tests compare them
with the files and rewrite them under FEATCHECK_UPDATE_SNAPSHOTS=1 (test_rule_docs.py)."""

from __future__ import annotations

from collections.abc import Sequence

from featcheck.rules import Rule, rule_markdown


def _table(rules: Sequence[Rule], *, links: bool) -> list[str]:
    lines = ["| code | name | default severity | what it checks |", "|---|---|---|---|"]
    for rule in rules:
        severity = rule.severity.label + ("" if rule.enabled_by_default else ", opt-in")
        code = f"[{rule.code}](#{rule.code.lower()}-{rule.name})" if links else rule.code
        lines.append(f"| {code} | `{rule.name}` | {severity} | {rule.summary} |")
    return lines


def catalogue_markdown(entries: Sequence[Rule]) -> str:
    """docs/rules.md: the index table, then every entry."""
    lines = [
        "# featcheck rules",
        "",
        "Generated from the rule specs (`src/featcheck/rules/builtin/*.toml`) by "
        "`FEATCHECK_UPDATE_SNAPSHOTS=1 pytest tests/rules`; do not edit. How to write a rule, "
        "built-in or your project's own: [writing-rules.md](writing-rules.md).",
        "",
        *_table(entries, links=True),
    ]
    for entry in entries:
        lines += ["", rule_markdown(entry, "##").rstrip("\n")]
    return "\n".join(lines) + "\n"


README_START = "<!-- rules-table: generated from the rule specs by tests/rules/test_rule_docs -->"
README_END = "<!-- /rules-table -->"


def with_readme_table(readme: str, entries: Sequence[Rule]) -> str:
    """`readme` with the text between the markers replaced by the current table."""
    start = readme.index(README_START)
    end = readme.index(README_END, start) + len(README_END)
    table = "\n".join([README_START, *_table(entries, links=False), README_END])
    return readme[:start] + table + readme[end:]
