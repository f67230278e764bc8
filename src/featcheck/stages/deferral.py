"""Findings that stand only where another rule's finding does not.

A rule's `requires` names features the crate must have for the rule to speak; where another
rule reports the crate for lacking one and its fix adds this rule's feature too, that rule
speaks first (`rules.detect.covering_rules`): FC003 (burn-flex without `simd`) requires
`rayon`, and on a burn-flex without `rayon` FC001 reports the crate, its fix adding `simd`.
Such a finding is made anyway, `deferred_to` those features, and goes only where a finding of
the same crate, member, target and configuration for one of them is reported. Where FC001 is
ignored, suppressed, or finds nothing, FC003 reports `simd` with its own location and fix
(placement.py gives it a fix that adds only `simd`); where FC001 is reported, FC003 stays out
of the report as before.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

from featcheck.featureset import FeatureSelection
from featcheck.matrix import merge_configurations
from featcheck.report import Finding

_Cover = tuple[str | None, str | None, str, str, str, FeatureSelection | None]
"""A reported finding's member, target, crate, version, feature and one configuration."""


def merged_apart(findings: Sequence[Finding]) -> list[Finding]:
    """The findings merged across configurations (`merge_configurations`), each deferred one
    apart from the same finding made without deferral: it may still go."""
    return [
        *merge_configurations([f for f in findings if not f.deferred_to]),
        *merge_configurations([f for f in findings if f.deferred_to]),
    ]


def uncovered(findings: Sequence[Finding], reported: Sequence[Finding]) -> list[Finding]:
    """`findings` with each deferred one cut to the configurations where no `reported` finding
    of its crate for a feature it defers to stands; gone where none is left."""
    covers = {
        (f.member, f.target, f.crate, f.crate_version, f.feature, c)
        for f in reported
        if not f.deferred_to
        for c in f.configurations or (None,)
    }
    kept: list[Finding] = []
    for finding in findings:
        if not finding.deferred_to:
            kept.append(finding)
            continue
        if not finding.configurations:  # unknown: one cover for them all
            if not _covered(finding, None, covers):
                kept.append(finding)
            continue
        left = tuple(c for c in finding.configurations if not _covered(finding, c, covers))
        if left == finding.configurations:
            kept.append(finding)
        elif left:
            kept.append(replace(finding, configurations=left))
    return kept


def _covered(finding: Finding, configuration: FeatureSelection | None, covers: set[_Cover]) -> bool:
    place = (finding.member, finding.target, finding.crate, finding.crate_version)
    return any((*place, feature, configuration) in covers for feature in finding.deferred_to)


def settled(
    findings: Sequence[Finding], audited: Mapping[str, Sequence[FeatureSelection]]
) -> list[Finding]:
    """The reported findings with no deferral left: a deferred finding that stands merges with
    the same finding of other configurations, its configurations in audit order again (the
    member's base build first), as `merge_configurations` gives them."""
    revived = {f.identity for f in findings if f.deferred_to}
    merged = merge_configurations([replace(f, deferred_to=()) for f in findings])
    if not revived:
        return merged
    return [
        replace(f, configurations=_in_audit_order(f, audited)) if f.identity in revived else f
        for f in merged
    ]


def _in_audit_order(
    finding: Finding, audited: Mapping[str, Sequence[FeatureSelection]]
) -> tuple[FeatureSelection, ...]:
    order = {c: i for i, c in enumerate(audited.get(finding.member or "", ()))}
    return tuple(sorted(finding.configurations, key=lambda c: order.get(c, len(order))))
