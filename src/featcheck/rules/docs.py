"""Rule documentation from the rules' own doc text: `featcheck rule CODE` and docs/rules.md.

docs/rules.md is generated (`python -m featcheck.rules.docs > docs/rules.md`); a test fails when
the file and the rules drift apart.
"""

from __future__ import annotations

from typing import Protocol

from featcheck.report import Severity
from featcheck.rules import ALL_RULES, RuleDoc
from featcheck.suppress import UNUSED_SUPPRESSION


class Documented(Protocol):
    """What the catalogue shows of a rule; FC900 (unused-suppression) is one too."""

    @property
    def code(self) -> str: ...
    @property
    def name(self) -> str: ...
    @property
    def severity(self) -> Severity: ...
    @property
    def summary(self) -> str: ...
    @property
    def doc(self) -> RuleDoc: ...
    @property
    def enabled_by_default(self) -> bool: ...
    @property
    def why(self) -> str: ...


def documented_rules() -> tuple[Documented, ...]:
    """Every catalogue entry: the rules, then FC900, which reports unused suppressions."""
    return (*ALL_RULES, UNUSED_SUPPRESSION)


def find_documented(code: str) -> Documented | None:
    """The catalogue entry with this code or name (case-insensitive)."""
    wanted = code.strip().lower()
    return next((r for r in documented_rules() if wanted in (r.code.lower(), r.name)), None)


_SECTIONS = (
    ("What it checks", "what"),
    ("Why it matters", "why"),
    ("Example", "example"),
    ("Fix", "fix"),
    ("When to ignore it", "ignore"),
)


def _body(rule: Documented, heading: str) -> list[str]:
    lines = [
        f"{heading} {rule.code} `{rule.name}`",
        "",
        f"Default severity: **{rule.severity.label}**"
        + ("" if rule.enabled_by_default else " (opt-in: `--select " + rule.code + "`)")
        + f". {rule.summary}.",
    ]
    for title, attribute in _SECTIONS:
        text: str = getattr(rule.doc, attribute)
        lines += ["", f"{heading}# {title}", ""]
        if attribute == "example":
            lines += ["```toml", text, "```"]
        elif attribute == "fix" and "\n\n" in text:
            prose, toml = text.split("\n\n", 1)
            lines += [prose, "", "```toml", toml, "```"]
        else:
            lines.append(text)
    return lines


def rule_markdown(rule: Documented, heading: str = "#") -> str:
    """One rule's full documentation."""
    return "\n".join(_body(rule, heading)) + "\n"


def catalogue_markdown() -> str:
    """docs/rules.md: the index table, then every rule."""
    lines = [
        "# featcheck rules",
        "",
        "Generated from the rules' doc text by `python -m featcheck.rules.docs`; do not edit.",
        "",
        "| code | name | default severity | checks |",
        "|---|---|---|---|",
    ]
    for rule in documented_rules():
        severity = rule.severity.label + ("" if rule.enabled_by_default else " (opt-in)")
        lines.append(
            f"| [{rule.code}](#{rule.code.lower()}-{rule.name}) | `{rule.name}` | {severity} "
            f"| {rule.summary} |"
        )
    for rule in documented_rules():
        lines += ["", *_body(rule, "##")]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    print(catalogue_markdown(), end="")
