"""FC900 `unused-suppression`: the catalogue entry of the one finding no `Rule` produces
(`featcheck.policy` makes the findings)."""

from __future__ import annotations

from dataclasses import dataclass

from featcheck.rules.spec import RuleDoc
from featcheck.severity import Severity

UNUSED_SUPPRESSION_CODE = "FC900"
UNUSED_SUPPRESSION_NAME = "unused-suppression"


@dataclass(frozen=True)
class MetaRuleDoc:
    """A rule-like catalogue entry for a finding no `Rule` produces (FC900).

    Has the attributes `featcheck rules` and docs/rules.md read from a `Rule`: code, name,
    severity, summary, doc, enabled_by_default and why.
    """

    code: str
    name: str
    severity: Severity
    summary: str
    doc: RuleDoc
    enabled_by_default: bool = True

    @property
    def why(self) -> str:
        """The doc's why-section on one line, as findings quote it."""
        return self.doc.why_line


UNUSED_SUPPRESSION = MetaRuleDoc(
    code=UNUSED_SUPPRESSION_CODE,
    name=UNUSED_SUPPRESSION_NAME,
    severity=Severity.WARNING,
    summary="a suppression (an `allow` entry or a `# featcheck: allow` comment) matches no finding",
    doc=RuleDoc(
        what=(
            "Reports each `[[allow]]` entry of the configuration and each code of a "
            "`# featcheck: allow(...)` comment that suppressed no finding in this audit. "
            "Entries for a member, target or rule that was not audited are not reported; "
            "an entry that names a member, crate or target that does not exist (a typo) "
            "always is."
        ),
        why=(
            "A suppression that matches nothing is stale or mistyped: the problem it excused "
            "was fixed, or its code, crate, member or target does not match what featcheck "
            "reports. Left in place, it would silently hide the problem if it came back."
        ),
        example=(
            "# the declaration has `rayon`, so FC001 does not fire here\n"
            'burn = { version = "0.22", features = ["flex", "rayon"] }  '
            "# featcheck: allow(FC001) wasm build"
        ),
        fix="Remove the suppression, or correct its code, crate, member or target.",
        ignore=(
            'While a suppression is needed only sometimes, add `ignore = ["FC900"]` to the '
            "configuration; FC900 itself cannot be allowed."
        ),
    ),
)
"""FC900's catalogue entry, for `featcheck rules` and docs/rules.md."""
