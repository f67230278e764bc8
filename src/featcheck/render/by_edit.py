"""The compact report of an audit over several build configurations (`--each-feature`,
`configurations`): a table of builds by rule first, then each edit once per rule.

Auditing each feature on its own repeats a verdict build after build, and a GPU backend built
without its defaults lacks both `fusion` (FC004) and `autotune` (FC005), which one edit adds.
Printed one finding at a time, under one heading per configuration, that is a page of repeats.
So the table says which build has which rule's findings, and under each member's heading the
findings that share the place and the edit to make, in the same builds, are one block: each
verdict, the place quoted once, the builds, each rule's why, the one fix (text_report.py draws
it). `-v` keeps a block per finding: it shows what differs between them.
"""

from __future__ import annotations

from collections.abc import Sequence

from featcheck.featureset import FeatureSelection
from featcheck.render.common import FindingGroup
from featcheck.render.safe_text import printable
from featcheck.render.text_lines import Line
from featcheck.report import AuditResult, Finding

_NONE = "."
"""A table cell for a build without findings of the rule."""


def several_configurations(result: AuditResult) -> bool:
    """Whether some member was audited in more than one build configuration."""
    return any(len(audited) > 1 for audited in result.configurations.values())


def configuration_table(result: AuditResult) -> list[Line]:
    """How many findings of each rule each audited build of each member with findings has,
    one row per build in audit order (a member's builds without findings too: they are clean),
    one column per rule; empty when there is nothing to tabulate."""
    members = list(dict.fromkeys(f.member for f in result.findings if f.member is not None))
    codes = sorted({f.code for f in result.findings if f.configurations})
    if not members or not codes:
        return []
    several = len(members) > 1
    rows: list[tuple[str, list[str]]] = []
    for member in members:
        found = [f for f in result.findings if f.member == member]
        for configuration in result.configurations.get(member, ()):
            label = printable(configuration.label)
            counts = [_count(found, code, configuration) for code in codes]
            rows.append((f"{printable(member)}: {label}" if several else label, counts))
    heading = "build" if not several else "member: build"
    width = max(len(heading), *(len(label) for label, _ in rows)) + 2
    cells = [max(len(code), 3) + 2 for code in codes]
    lines: list[Line] = [[("findings by build configuration and rule:", "bold")]]
    head = heading.ljust(width) + "".join(c.rjust(w) for c, w in zip(codes, cells, strict=True))
    lines.append([("  " + head, "dim")])
    for label, counts in rows:
        row = label.ljust(width) + "".join(c.rjust(w) for c, w in zip(counts, cells, strict=True))
        lines.append([("  " + row, "")])
    return [*lines, []]


def _count(findings: Sequence[Finding], code: str, configuration: FeatureSelection) -> str:
    count = sum(1 for f in findings if f.code == code and configuration in f.configurations)
    return str(count) if count else _NONE


def edit_blocks(groups: Sequence[FindingGroup]) -> list[list[FindingGroup]]:
    """`groups` (of one heading) gathered into blocks: those at the same place with the same
    confirmed edits are one, whichever crate and build (the wgpu and the CUDA build both lack
    `fusion` and `autotune`, which one edit to burn adds); blocks, and the groups in each, in
    rule order, then in report order."""
    blocks: dict[tuple[object, ...], list[FindingGroup]] = {}
    for position, group in enumerate(groups):
        blocks.setdefault(_edit_key(group, position), []).append(group)
    ordered = [sorted(block, key=lambda group: group.lead.code) for block in blocks.values()]
    return sorted(ordered, key=lambda block: block[0].lead.code)


def _edit_key(group: FindingGroup, position: int) -> tuple[object, ...]:
    """What the groups of one block share; a group without a location or a fix is alone."""
    lead = group.lead
    if lead.location is None or lead.fix is None:
        return ("alone", position)
    place = (lead.location.file, lead.location.line, lead.location.column)
    edits = frozenset(
        (e.file, e.line, tuple(map(str, e.declaration)), e.action, frozenset(e.features), e.version)
        for e in lead.fix.edits
    )
    return (place, edits, lead.fix.safe, group.members)


def builds_line(block: Sequence[FindingGroup]) -> str:
    """The builds a block is in, where its heading names the member and target: the
    configurations (`default features` among them), each crate's own where the block speaks
    of several (`burn-cuda 0.22.1: --features cuda ...; burn-wgpu 0.22.1: ...`)."""
    by_crate: dict[str, list[FeatureSelection]] = {}
    for group in block:
        crate = f"{group.lead.crate} {group.lead.crate_version}"
        listed = by_crate.setdefault(crate, [])
        listed += [c for c in group.configurations if c not in listed]
    shown = {
        crate: "; ".join(printable(c.label) for c in found) for crate, found in by_crate.items()
    }
    if len(shown) == 1:
        return next(iter(shown.values()))
    return "; ".join(f"{printable(crate)}: {labels}" for crate, labels in shown.items())


def rule_why(block: Sequence[FindingGroup], code: str) -> str:
    """The why of rule `code` in a block, once: the first finding's, which names its crate
    (`{crate}` in the rule's doc); where the rule's findings there are on several crates, the
    name reads as all of them (`burn-cuda or burn-wgpu defaults to ...`)."""
    leads = [group.lead for group in block if group.lead.code == code]
    why = leads[0].why
    crates = list(dict.fromkeys(lead.crate for lead in leads))
    if len(crates) > 1:
        why = why.replace(crates[0], f"{', '.join(crates[:-1])} or {crates[-1]}")
    return why
