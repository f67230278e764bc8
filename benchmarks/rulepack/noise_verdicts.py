"""The verdicts of noise.py: what a maintainer would call each finding, read from
`noise-verdicts.toml`, and the findings grouped per rule, project and crate to carry them.

Each `[[verdict]]` names a rule, a project (as noise.py names it), a crate, optionally one
member, a verdict and one line of reason:

    [[verdict]]
    rule = "FC021"
    project = "jsonschema"
    crate = "serde_json"
    verdict = "deliberate"
    reason = "the validator turns it on for exact numbers; its docs say so"
"""

from __future__ import annotations

import sys
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any, NoReturn

VERDICT_KINDS = ("useful", "noise", "deliberate", "wrong")
"""useful: a maintainer would act on it; noise: nothing to act on; deliberate: the project
chose it on purpose; wrong: cargo does not build what the finding says (a featcheck bug)."""
Finding = dict[str, Any]
"""One finding of featcheck's JSON report."""


@dataclass(frozen=True)
class Verdict:
    rule: str
    project: str
    crate: str
    verdict: str
    reason: str
    member: str = ""
    """Only this member's findings (a binary's where the library's are deliberate); empty: all."""

    def matches(self, finding: dict[str, Any], project: str) -> bool:
        return (self.rule, self.project, self.crate) == (
            finding["code"],
            project,
            finding["crate"],
        ) and self.member in ("", finding["member"])


def read_verdicts(path: Path) -> list[Verdict]:
    """The `[[verdict]]` tables of `path` (none where it does not exist); anything else stops
    the report with one line naming the file and the table."""
    from featcheck.toml_read import toml_data

    try:
        data = toml_data(path.read_text(encoding="utf-8")) if path.exists() else {}
    except ValueError as error:
        bad_input(f"{path}: {error}")
    tables = data.get("verdict", [])
    if not isinstance(tables, list):
        bad_input(f"{path}: `verdict` must be an array of tables ([[verdict]])")
    return [_verdict(f"{path}: verdict {number}", table) for number, table in enumerate(tables, 1)]


def _verdict(where: str, table: Any) -> Verdict:
    try:
        verdict = Verdict(**table)
    except TypeError as error:
        bad_input(f"{where}: {str(error).replace('Verdict.__init__() ', '')}")
    if not all(isinstance(getattr(verdict, f.name), str) for f in fields(Verdict)):
        bad_input(f"{where}: every value must be a string")
    if verdict.verdict not in VERDICT_KINDS:
        bad_input(f"{where}: verdict must be one of {', '.join(VERDICT_KINDS)}")
    if not verdict.reason.strip():
        bad_input(f"{where}: the reason is empty")
    return verdict


def bad_input(message: str) -> NoReturn:
    """A bad verdicts file is the one exit that is not 0: one line, exit code 2."""
    print(f"noise.py: {message}", file=sys.stderr)
    sys.exit(2)


@dataclass
class Group:
    """The findings of one rule on one crate of one project (one row of a rule's table)."""

    rule: str
    project: str
    crate: str
    findings: list[dict[str, Any]] = field(default_factory=list)
    verdicts: dict[str, Verdict | None] = field(default_factory=dict)
    """Per member, its verdict (None: unjudged)."""

    def add(self, finding: dict[str, Any], verdicts: Iterable[Verdict]) -> None:
        self.findings.append(finding)
        member = finding["member"]
        if member not in self.verdicts:
            # A verdict for this member wins over one for the whole crate, in any order.
            matches = sorted(
                (v for v in verdicts if v.matches(finding, self.project)),
                key=lambda v: not v.member,
            )
            self.verdicts[member] = matches[0] if matches else None

    def counts(self) -> Counter[str]:
        """Findings per verdict, counted as featcheck prints them: members that share a finding
        (its `group`) are one entry, unless they are judged apart."""
        return Counter(
            verdict for _, verdict in {(f["group"], self.verdict_of(f)) for f in self.findings}
        )

    def verdict_of(self, finding: dict[str, Any]) -> str:
        verdict = self.verdicts.get(finding["member"])
        return verdict.verdict if verdict else "unjudged"


def group_findings(
    reports: Iterable[tuple[str, Sequence[Finding]]], verdicts: Sequence[Verdict]
) -> dict[str, list[Group]]:
    """Per rule code, its groups in project order, from (project, findings) pairs."""
    groups: dict[tuple[str, str, str], Group] = {}
    for project, findings in reports:
        for finding in findings:
            key = (finding["code"], project, finding["crate"])
            groups.setdefault(key, Group(*key)).add(finding, verdicts)
    by_rule: dict[str, list[Group]] = {}
    for group in groups.values():
        by_rule.setdefault(group.rule, []).append(group)
    return by_rule


def stale(verdicts: Sequence[Verdict], by_rule: dict[str, list[Group]]) -> list[Verdict]:
    """Verdicts that no finding matches any more (the rule changed, or the project did)."""
    used = {id(v) for groups in by_rule.values() for g in groups for v in g.verdicts.values()}
    return [v for v in verdicts if id(v) not in used]


def split(group: Group) -> list[tuple[Verdict | None, list[dict[str, Any]]]]:
    """The group's findings per verdict (members may be judged apart)."""
    parts: dict[int, tuple[Verdict | None, list[dict[str, Any]]]] = {}
    for finding in group.findings:
        verdict = group.verdicts[finding["member"]]
        parts.setdefault(id(verdict), (verdict, []))[1].append(finding)
    return list(parts.values())
