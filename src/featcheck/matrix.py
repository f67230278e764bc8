"""Which build configurations an audit resolves for each member, and how their findings merge.

The user asks for configurations as cargo's flags (`--features`, `--no-default-features`,
`--all-features`, from the command line or the `configurations` setting) and `--each-feature`.
Each one applies to every selected member as `cargo build -p A -p B --features ...` applies it
(resolver 2 and 3: a member gets the features it defines; see `featureset.member_selection`),
so two configurations can come down to the same flags for a member and are then resolved once.
A configuration cargo would refuse is reported and skipped; the others are still audited.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from featcheck.featureset import (
    DEFAULT,
    FeatureSelection,
    each_feature,
    member_selection,
    unmatched_features,
    unmatched_message,
)
from featcheck.report import Finding


@dataclass
class ConfigurationPlan:
    """The feature selections to resolve per member, and the configurations that cannot be."""

    selections: dict[str, list[FeatureSelection]] = field(default_factory=dict)
    """By member package id, in audit order; the first one is the member's base build."""
    errors: list[str] = field(default_factory=list)
    """One line per configuration cargo would refuse, naming it."""

    def jobs(self) -> list[tuple[str, FeatureSelection]]:
        """(member id, selection) pairs, as `resolve_configurations` takes them."""
        return [(member, s) for member, found in self.selections.items() for s in found]

    def dependency_features(self) -> tuple[str, ...]:
        """Every `dependency/feature` value of the plan, which `cargo metadata --all-features`
        does not cover (it may turn on optional dependencies of dependencies)."""
        return tuple(
            sorted(
                {
                    value
                    for found in self.selections.values()
                    for selection in found
                    for value in selection.features
                    if "/" in value
                }
            )
        )

    def refuse(self, member: str, selection: FeatureSelection, error: str) -> None:
        """Drop one pair that did not resolve and say why."""
        self.selections[member] = [s for s in self.selections[member] if s != selection]
        self.errors.append(f"configuration `{selection.label}`: {error}")


def plan_configurations(
    members: Sequence[Mapping[str, Any]],
    requested: Sequence[FeatureSelection],
    *,
    each: bool = False,
    legacy_root: str | None = None,
) -> ConfigurationPlan:
    """The selections of each member (`members`: their `cargo metadata` package entries).

    `requested` are the user's configurations (default features when empty). `each` expands
    every one as `--each-feature` does. `legacy_root` is the id of the root package of a
    resolver 1 workspace, where cargo applies the flags to that package only: other members are
    audited with their defaults there, and a configuration for them is reported as refused.
    """
    plan = ConfigurationPlan()
    names = [str(m["name"]) for m in members]
    valid: list[FeatureSelection] = []
    for selection in requested or [DEFAULT]:
        missing = unmatched_features(selection, members)
        if missing:
            plan.errors.append(
                f"configuration `{selection.label}`: {unmatched_message(missing, names)}"
            )
        else:
            valid.append(selection)
    for member in members:
        found: list[FeatureSelection] = []
        for selection in valid:
            applied = member_selection(selection, member)[0]
            found += each_feature(applied, member.get("features", {})) if each else [applied]
        if legacy_root is not None and member["id"] != legacy_root:
            if any(not s.is_default for s in found):
                plan.errors.append(
                    f"member {member['name']}: resolver 1 applies feature flags only to the "
                    'root package; audited with its default features (set `resolver = "2"`)'
                )
            found = [DEFAULT]
        plan.selections[str(member["id"])] = list(dict.fromkeys(found))
    return plan


FindingKey = tuple[Any, ...]


def _identity(finding: Finding) -> FindingKey:
    """What makes two findings of different configurations the same finding: the same rule,
    member, target, crate, missing feature, place to edit and message."""
    return (
        finding.code,
        finding.member,
        finding.target,
        finding.crate,
        finding.crate_version,
        finding.feature,
        finding.location,
        finding.message,
    )


def merge_configurations(findings: Sequence[Finding]) -> list[Finding]:
    """One finding per identity, in first-seen order, listing every configuration it occurs in
    (first = the one reported: the member's base build when it is there)."""
    merged: dict[FindingKey, Finding] = {}
    for finding in findings:
        key = _identity(finding)
        seen = merged.get(key)
        if seen is None:
            merged[key] = finding
        else:
            extra = [c for c in finding.configurations if c not in seen.configurations]
            merged[key] = replace(seen, configurations=(*seen.configurations, *extra))
    return list(merged.values())
