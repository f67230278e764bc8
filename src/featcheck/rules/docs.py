"""Rule documentation from the specs: `featcheck rules`, `featcheck rule CODE`, docs/rules.md
and the rule table of the README.

Every function takes the catalogue entries to show: the rules, and FC900 (`unused-suppression`),
which the suppressions make and the rules do not know. docs/rules.md and the README's table
between its `rules-table` markers are generated; tests/rules/test_rule_docs.py fails when either
drifts from the specs and rewrites both with FEATCHECK_UPDATE_SNAPSHOTS=1.
"""

from __future__ import annotations

import textwrap
from collections.abc import Sequence

from featcheck.rules import Documented
from featcheck.rules.spec import CAPABILITIES, Rule

SECTIONS = (
    ("What it checks", "what"),
    ("Why it matters", "why"),
    ("Example", "example"),
    ("Fix", "fix"),
    ("Fix safety", "fix_safety"),
    ("When to ignore it", "ignore"),
    ("References", "references"),
)
"""The documentation sections, in order (ruff's template, in featcheck's words)."""

_CAPABILITY_WORDS = {
    "std": "targets with `std` (not `*-none-*`)",
    "threads": "targets with threads (not `wasm32-*` without the `atomics` target feature, "
    "not targets without `std`)",
}
assert set(_CAPABILITY_WORDS) == set(CAPABILITIES)


def _scope(rule: Documented) -> str:
    """`Applies to: ...` for rules limited to some targets; empty for the others."""
    if not isinstance(rule, Rule):
        return ""
    parts = [", ".join(f"`{t}`" for t in rule.targets.triples)] if rule.targets.triples else []
    parts += [_CAPABILITY_WORDS[n] for n in rule.targets.needs]
    return "Applies to " + "; ".join(parts) + "." if parts else ""


def _body(rule: Documented, heading: str) -> list[str]:
    opt_in = "" if rule.enabled_by_default else f" (opt-in: `--select {rule.code}`)"
    intro = f"Default severity: **{rule.severity.label}**{opt_in}. {rule.summary}."
    scope = _scope(rule)
    lines = [f"{heading} {rule.code} `{rule.name}`", "", intro + (f" {scope}" if scope else "")]
    doc = rule.doc
    for title, attribute in SECTIONS:
        if attribute == "references":
            if doc.references:
                lines += ["", f"{heading}# {title}", ""]
                lines += [f"- <{r}>" if "://" in r else f"- {r}" for r in doc.references]
            continue
        text: str = getattr(doc, attribute)
        if isinstance(rule, Rule):
            text = rule.worded(text)
        if not text:
            continue  # a user rule may leave sections out; built-in ones may not (tests)
        lines += ["", f"{heading}# {title}", ""]
        if attribute == "example":
            lines += ["```toml", text, "```"]
        else:
            lines.append(text)
        if attribute == "fix" and doc.fix_example:
            lines += ["", "```toml", doc.fix_example, "```"]
    return lines


def rule_markdown(rule: Documented, heading: str = "#") -> str:
    """One rule's full documentation."""
    return "\n".join(_body(rule, heading)) + "\n"


_SUMMARY_COLUMN = 30
"""The narrowest the `what it checks` column of `featcheck rules` may be beside the others;
below it each summary goes under its row."""


def rule_table(rules: Sequence[Documented], width: int) -> list[str]:
    """`featcheck rules`: code, name, default severity and what each rule checks, as a table
    that fits `width` columns (the summaries wrapped in their column, or under each row)."""
    rows = [
        ((r.code, r.name, r.severity.label + ("" if r.enabled_by_default else ", opt-in")), r)
        for r in rules
    ]
    heads = ("code", "name", "severity")
    widths = [max(len(h), *(len(cells[i]) for cells, _ in rows)) + 2 for i, h in enumerate(heads)]
    fixed = sum(widths)
    beside = width - fixed >= _SUMMARY_COLUMN
    summary_at = fixed if beside else widths[0]
    lines = ["".join(h.ljust(w) for h, w in zip(heads, widths, strict=True))]
    lines[0] = (lines[0] + "what it checks") if beside else lines[0].rstrip()
    for cells, rule in rows:
        start = "".join(c.ljust(w) for c, w in zip(cells, widths, strict=True))
        summary = textwrap.wrap(rule.summary, max(width - summary_at, 20))
        if beside:
            lines.append(start + summary[0])
        else:
            lines += [start.rstrip(), " " * summary_at + summary[0]]
        lines += [" " * summary_at + more for more in summary[1:]]
    return lines
