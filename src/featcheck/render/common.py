"""Wording every format shares, so the terminal, annotations and SARIF say the same thing.

Checkout text is made safe to print in `safe_text`."""

from __future__ import annotations

from featcheck.grouping import FindingGroup, group_findings
from featcheck.render.safe_text import printable
from featcheck.report import AuditResult, Cost, Finding
from featcheck.severity import Severity
from featcheck.wording import plural


def count_line(result: AuditResult) -> str:
    """`1 error (1 member, x86_64-unknown-linux-gnu; 2 suppressed)`, or `no findings (...)`;
    `(1 member, 5 configurations, …)` when builds other than the default ones were audited."""
    scope = plural(len(result.members), "member")
    audited = [c for found in result.configurations.values() for c in found]
    if any(not c.is_default for c in audited):
        # Only named when the user asked for more than the default builds.
        scope += f", {plural(len(audited), 'configuration')}"
    if result.targets:
        scope += f", {', '.join(printable(target) for target in result.targets)}"
    if result.suppressed:
        scope += f"; {sum(result.suppressed.values())} suppressed"
    scope += "".join(f"; {compared}" for compared in comparison_phrases(result))
    if not result.findings:
        verdict = "no findings, audit incomplete" if result.incomplete else "no findings"
        if any(c.kind == "revision" for c in result.comparisons):
            verdict = verdict.replace("no findings", "no new findings")
        if result.no_verdict:
            verdict = f"no verdict: {'; '.join(result.no_verdict)}"
        return f"{verdict} ({scope})"
    # What is shown is counted: a cut repeated in several builds is one (grouping.py).
    shown = [group.lead.severity for group in group_findings(result.findings)]
    counts = [plural(shown.count(s), s.label) for s in sorted(Severity, reverse=True) if s in shown]
    total = len(result.findings)
    grouped = f", grouped from {total} findings" if len(shown) < total else ""
    return f"{', '.join(counts)}{grouped} ({scope})"


def comparison_phrases(result: AuditResult) -> list[str]:
    """`2 new, 5 also on main (1a2b3c4d), not shown`; `3 in the baseline b.txt, not shown`."""
    phrases = []
    for comparison in result.comparisons:
        against = printable(comparison.against)
        hidden = len(comparison.hidden)
        if comparison.kind == "revision":
            phrases.append(f"{len(result.findings)} new, {hidden} also on {against}, not shown")
        else:
            phrases.append(f"{hidden} in the baseline {against}, not shown")
    return phrases


def cost_text(cost: Cost) -> str:
    """`2.10x slower measured here (memchr, 2026-12-02)`, or where it was quoted from."""
    if cost.here and cost.ratio is not None:
        return (
            f"{cost.ratio:.2f}x slower measured here ({printable(cost.workload)}, "
            f"{printable(cost.measured_on)}; `{cost.command}`)"
        )
    code = cost.command.rsplit(" ", 1)[-1]
    return (
        f"not measured here: the rule quotes featcheck's build machine (`featcheck rule {code}`); "
        f"`{cost.command}` measures it here"
    )


def build_of(finding: Finding) -> str:
    """`member app, target x86_64-unknown-linux-gnu`: whose build the finding is about, with
    `with --features …` for a build other than the default one."""
    configuration = finding.configuration
    parts = [
        f"member {printable(finding.member)}" if finding.member else "",
        f"target {printable(finding.target)}" if finding.target else "",
        f"with {printable(configuration.label)}"
        if configuration is not None and not configuration.is_default
        else "",
    ]
    return ", ".join(part for part in parts if part)


def builds_of_group(group: FindingGroup) -> str:
    """`build_of` for a group: `10 members: a, b, lib (library); target T`, naming every
    member, target and (where it is not only the default) configuration the cut costs in."""
    if not group.shared:
        return build_of(group.lead)
    members = [
        f"{printable(m)} (library)" if m in group.libraries else printable(m) for m in group.members
    ]
    targets = [printable(t) for t in group.targets]
    configurations = group.configurations
    parts = [
        f"member {members[0]}" if len(members) == 1 else "",
        f"{len(members)} members: {', '.join(members)}" if len(members) > 1 else "",
        f"{'target' if len(targets) == 1 else 'targets'} {', '.join(targets)}" if targets else "",
        f"with {'; '.join(printable(c.label) for c in configurations)}"
        if any(not c.is_default for c in configurations)
        else "",
    ]
    return "; ".join(part for part in parts if part)


_CLOSERS = '")'
"""What may close a sentence after its full stop: a quotation, a parenthesis."""


def why_line(finding: Finding) -> str:
    """The first sentence of the finding's why: what the missing feature does, in one line.

    The whole paragraph (with the measurements and their source) is for `-v`, JSON, SARIF and
    `featcheck rule CODE`. The line is never cut inside a sentence, a quotation, a parenthesis
    or a code span: a why without such an end is shown whole.
    """
    return first_sentence(" ".join(finding.why.split()))


def first_sentence(text: str) -> str:
    """`text` up to the end of its first sentence: a `.`, `!` or `?` (with the quotation or
    parenthesis it closes) followed by a space and a capital, a backtick, a quote or `(`, outside
    any quotation, parenthesis and code span; the whole text when it has no such end."""
    quoted = code = False
    depth = 0
    for position, character in enumerate(text):
        if character == "`":
            code = not code
        elif code:
            continue
        elif character == '"':
            quoted = not quoted
        elif character == "(":
            depth += 1
        elif character == ")":
            depth = max(0, depth - 1)
        elif character in ".!?":
            end = _sentence_end(text, position + 1, quoted, depth)
            if end is not None:
                return text[:end]
    return text


def _sentence_end(text: str, after: int, quoted: bool, depth: int) -> int | None:
    """Where a sentence whose full stop lies just before `after` ends, or None where the stop
    ends no sentence (inside a quotation or parenthesis it does not close, before a lowercase
    word: `e.g. here`)."""
    end = after
    while end < len(text) and text[end] in _CLOSERS and (quoted or depth):
        if text[end] == '"':
            quoted = False
        else:
            depth -= 1
        end += 1
    if quoted or depth:
        return None
    following = text[end + 1 : end + 2]
    if text[end : end + 1] != " " or not (following.isupper() or following in ("`", '"', "(")):
        return None
    return end
