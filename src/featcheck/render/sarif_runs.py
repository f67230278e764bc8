"""How a SARIF log is cut for GitHub code scanning: one run per audited target and build
configuration, and each result's `baselineState` when findings were compared.

Code scanning keeps one analysis per category (`runs[].automationDetails.id`): two uploads
with one category, or two runs of one file, replace each other. So every (target,
configuration) the audit covered is a run of its own, with an id naming both
(`featcheck/x86_64-unknown-linux-gnu/default/`: the trailing slash makes the whole id the
category); a finding present in several of them is a result in each, and code scanning shows
one alert with its configurations.

After `--baseline` or `--new-since`, the findings shown are `new`; those hidden are still
reported, as `unchanged` (the baseline's with an external suppression: accepted, so closed);
the base revision's findings that are gone are `absent` and suppressed too, so that they close
rather than open an alert.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from featcheck.comparison.fingerprint import configuration_token
from featcheck.featureset import FeatureSelection
from featcheck.report import AuditResult, Finding


@dataclass(frozen=True)
class Build:
    """One target and configuration of the audit (None: saved tree text does not say)."""

    target: str | None
    configuration: FeatureSelection | None

    @property
    def automation_id(self) -> str:
        target = re.sub(r"[^A-Za-z0-9._-]", "_", self.target or "any-target")
        return f"featcheck/{target}/{configuration_token(self.configuration)}/"

    def select(self, findings: Sequence[Finding]) -> list[Finding]:
        """The findings of this build."""
        return [
            f
            for f in findings
            if (self.target is None or f.target == self.target)
            and (self.configuration is None or self.configuration in f.configurations)
        ]


def builds_of(result: AuditResult) -> list[Build]:
    """Every target and configuration audited, in audit order."""
    targets: list[str | None] = [*result.targets] or [None]
    configurations: list[FeatureSelection | None] = [
        *dict.fromkeys(c for found in result.configurations.values() for c in found)
    ] or [None]
    return [Build(t, c) for t in targets for c in configurations]


def states(result: AuditResult) -> list[tuple[Sequence[Finding], dict[str, Any]]]:
    """The findings to report, each set with what its results add: nothing without a
    comparison; else `baselineState` (and a suppression for what is accepted or gone)."""
    if not result.comparisons:
        return [(result.findings, {})]
    sets: list[tuple[Sequence[Finding], dict[str, Any]]] = [
        (result.findings, {"baselineState": "new"})
    ]
    for comparison in result.comparisons:
        if comparison.kind == "baseline":
            accepted = _suppressed(f"accepted in the baseline {comparison.against}")
            sets.append((comparison.hidden, {"baselineState": "unchanged", **accepted}))
        else:
            sets.append((comparison.hidden, {"baselineState": "unchanged"}))
            gone = _suppressed(f"absent: fixed since {comparison.against}")
            sets.append((comparison.absent, {"baselineState": "absent", **gone}))
    return sets


def _suppressed(why: str) -> dict[str, Any]:
    return {"suppressions": [{"kind": "external", "status": "accepted", "justification": why}]}
