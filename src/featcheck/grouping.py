"""Findings that repeat one cut, shown once.

A trimmed line in `[workspace.dependencies]` that ten members inherit gives ten findings, one
per member's build, each with the same place to edit and the same fix. Read one by one they
are noise; so the text report, GitHub annotations and SARIF show such findings once, naming
every member, target and configuration they cover, as cargo-deny labels several spans in one
diagnostic. JSON keeps one entry per finding and names its group. Exit codes and `--fail-on`
still count findings: grouping changes what is shown, not the verdict.

Findings group when rule, crate, version, feature, severity, confidence and location (file,
line, column) are the same: one cut is one finding, whatever shape its fix takes. Where each
member needs an edit of its own (a new dependency in each member's manifest), the group's fix
holds every member's edit. A library's
finding (a member built alone, lowered to info: `builder.FindingBuilder`) also folds into a
binary's finding of the same rule, crate, version, feature and location: the binary's build is
where that cut costs, and the library's own fix is the same line.
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from typing import TypeVar

from featcheck.featureset import FeatureSelection
from featcheck.report import Edit, Finding, Fix
from featcheck.severity import Confidence

_GroupKey = tuple[object, ...]
_T = TypeVar("_T")


@dataclass(frozen=True)
class FindingGroup:
    """Findings shown as one: the lead's verdict and fix, every member's build named."""

    findings: tuple[Finding, ...]
    """The lead first (a binary's finding where there is one), then in report order."""
    key: tuple[object, ...]
    """What the findings share (see the module's text)."""

    @functools.cached_property
    def id(self) -> str:
        """`key` hashed, 16 hex digits: the same in every finding of the group (JSON `group`);
        made only when a format asks (most renderings never do)."""
        return hashlib.sha256(repr(self.key).encode("utf-8")).hexdigest()[:16]

    @property
    def lead(self) -> Finding:
        """The finding shown for the group."""
        return self.findings[0]

    @functools.cached_property
    def fix(self) -> Fix | None:
        """What applies the group's fixes: the lead's when every finding has the same one;
        else every finding's edits together (None when one of them has no fix)."""
        fixes = [f.fix for f in self.findings]
        distinct = list(dict.fromkeys(f for f in fixes if f is not None))
        if len(distinct) < 2 or None in fixes:
            return self.lead.fix
        edits: list[Edit] = []
        for fix in distinct:
            edits += [e for e in fix.edits if e not in edits]
        return Fix(
            _merged(edits),
            confirmed=all(f.confirmed for f in distinct),
            safe=all(f.safe for f in distinct),
            note=next((f.note for f in distinct if f.note), ""),
        )

    @property
    def shared(self) -> bool:
        """More than one finding: the group names the builds it covers."""
        return len(self.findings) > 1

    @property
    def members(self) -> tuple[str, ...]:
        """The members whose builds have the finding, without repeats, in report order."""
        return _distinct(f.member for f in self.findings if f.member is not None)

    @property
    def libraries(self) -> frozenset[str]:
        """Those of `members` that are libraries only (their finding is info on its own)."""
        return frozenset(f.member for f in self.findings if f.library and f.member is not None)

    @property
    def targets(self) -> tuple[str, ...]:
        """The targets audited, without repeats, in report order."""
        return _distinct(f.target for f in self.findings if f.target is not None)

    @property
    def configurations(self) -> tuple[FeatureSelection, ...]:
        """Every build configuration of every finding, without repeats."""
        return _distinct(c for f in self.findings for c in f.configurations)

    @property
    def confidence(self) -> Confidence:
        """`resolved` unless a finding of the group is not (a folded library's may be)."""
        resolved = Confidence.RESOLVED
        return next((f.confidence for f in self.findings if f.confidence != resolved), resolved)


def group_findings(findings: Sequence[Finding]) -> list[FindingGroup]:
    """The findings in groups, in the order of each group's first finding (one pass)."""
    grouped: dict[_GroupKey, list[Finding]] = {}
    first: dict[_GroupKey, _GroupKey] = {}
    for position, finding in enumerate(findings):
        key = _key(finding, position)
        shared = key[:-1]  # the cut, severity and confidence: not the fix
        grouped.setdefault(shared, []).append(finding)
        first.setdefault(shared, key)
    # Named by the first finding's whole key: a group's id stays what it was when its
    # findings all had the same fix.
    groups = [(first[shared], found) for shared, found in grouped.items()]
    if any(finding.library for finding in findings):
        groups = _fold_libraries(groups)
    return [FindingGroup(_lead_first(found), key) for key, found in groups]


def _key(finding: Finding, position: int) -> _GroupKey:
    """What findings of one group share, the cut first (`_CUT` items: rule, crate, version,
    feature, file, line, column); a finding without a location is a group of its own."""
    cut = finding.identity.cut
    if cut is None:
        return ("alone", position, finding.code, finding.member, finding.crate, finding.target)
    return (
        *cut,
        finding.severity.value,
        finding.confidence.value,
        _fix_key(finding),
    )


_CUT = 7
"""How many items of a located finding's key name its cut."""


def _fix_key(finding: Finding) -> tuple[object, ...]:
    """The edits of the fix, as reports show them; the suggestion's words when none holds."""
    if finding.fix is None:
        return ("suggestion", finding.suggestion)
    return tuple(
        (e.file, e.line, tuple(map(str, e.declaration)), e.action, e.features, e.version)
        for e in finding.fix.edits
    )


def _fold_libraries(
    groups: list[tuple[_GroupKey, list[Finding]]],
) -> list[tuple[_GroupKey, list[Finding]]]:
    """Groups of libraries only join the first group with a binary cut at the same place."""
    with_binary: dict[_GroupKey, list[Finding]] = {}
    for key, found in groups:
        if found[0].location is not None and not all(f.library for f in found):
            with_binary.setdefault(key[:_CUT], found)
    kept: list[tuple[_GroupKey, list[Finding]]] = []
    for key, found in groups:
        if found[0].location is not None and all(f.library for f in found):
            binary = with_binary.get(key[:_CUT])
            if binary is not None:
                binary.extend(found)
                continue
        kept.append((key, found))
    return kept


def _merged(edits: list[Edit]) -> tuple[Edit, ...]:
    """Edits adding features to one declaration, made one: the features of all of them."""
    merged: dict[tuple[object, ...], Edit] = {}
    for edit in edits:
        key: tuple[object, ...] = (edit.manifest, edit.declaration, edit.action)
        if edit.action not in ("add-features", "add-feature-values"):
            key = (*key, edit)
        known = merged.get(key)
        features = (*known.features, *edit.features) if known is not None else edit.features
        merged[key] = replace(edit, features=tuple(dict.fromkeys(features)))
    return tuple(merged.values())


def _lead_first(found: list[Finding]) -> tuple[Finding, ...]:
    """A binary's finding leads: its severity and wording are the build's own."""
    lead = next((f for f in found if not f.library), found[0])
    return (lead, *(f for f in found if f is not lead))


def _distinct(values: Iterable[_T]) -> tuple[_T, ...]:
    return tuple(dict.fromkeys(values))
