"""FC900's catalogue entry: documented like a rule."""

from __future__ import annotations

from featcheck.rules import UNUSED_SUPPRESSION, rule_markdown


def test_fc900_is_documented_like_a_rule() -> None:
    assert (UNUSED_SUPPRESSION.code, UNUSED_SUPPRESSION.name) == ("FC900", "unused-suppression")
    text = rule_markdown(UNUSED_SUPPRESSION)
    assert text.startswith("# FC900 `unused-suppression`")
    assert "Default severity: **warning**" in text
    assert "## When to ignore it" in text
