"""One finding, made once from a rule's detection: everything a finding says is gathered first,
then `build` makes it, so no stage rebuilds a finding to add what it knows.

A finding has one primary location, the span to edit (None only for saved tree text, which
has no manifest, and said so: `at(None)`); `build` refuses a finding whose primary location
was never given. Its hidden locations are the other lines where an inline suppression counts
for it: the whole declaration, the `workspace = true` line inheriting it, the member's own
declarations on the way."""

from __future__ import annotations

from featcheck.featureset import FeatureSelection
from featcheck.report import Finding, Fix, Location
from featcheck.rules import Detection, Rule
from featcheck.rules.spec import CRATE_PLACEHOLDER, Kind
from featcheck.severity import Confidence, Severity
from featcheck.workspace.model import Package

_UNLOCATED = Location("", 0, 0, 0, 0)
"""Marks a builder whose primary location was never given."""


class FindingBuilder:
    """Gathers one finding of `rule` in `member`'s build on `target` (None: unknown)."""

    def __init__(
        self,
        rule: Rule,
        detection: Detection,
        member: Package | None,
        target: str | None,
        library: bool = False,
    ) -> None:
        self.rule, self.detection, self.member, self.target = rule, detection, member, target
        self.library = library
        """The member's build makes no final artifact (`Package.is_library_only`)."""
        self.member_name = member.name if member is not None else None
        self.location: Location | None = _UNLOCATED
        self.declaration: Location | None = None
        self.inherited_by: Location | None = None
        self.hidden: tuple[Location, ...] = ()
        self.placement = ""
        self.notes: tuple[str, ...] = ()
        self.chain: tuple[str, ...] = ()
        self.fix: Fix | None = None
        self.alternatives: tuple[Fix, ...] = ()
        self.configurations: tuple[FeatureSelection, ...] = ()
        self.confidence = Confidence.RESOLVED
        self.configured_severity: Severity | None = None
        """The project's severity for the rule in this member: it wins over the rule's own and
        over a library's `info`."""

    def at(
        self,
        location: Location | None,
        *,
        declaration: Location | None = None,
        inherited_by: Location | None = None,
    ) -> FindingBuilder:
        """The primary location, with the declaration it lies in and the member's line that
        inherits it (hidden: suppressions may sit there)."""
        self.location, self.declaration, self.inherited_by = location, declaration, inherited_by
        return self

    def build(self, suggestion: str) -> Finding:
        if self.location is _UNLOCATED:
            raise ValueError(f"{self.rule.code}: a finding needs its primary location")
        rule, detection, member = self.rule, self.detection, self.member
        library = member is not None and self.library
        severity = rule.severity if detection.severity is None else detection.severity
        message = detection.message
        if member is not None and library:
            # A library's features are chosen by the binaries that use it.
            severity = Severity.INFO
            # Said of the build, not of the effect after it ("never AVX2 when lib is built
            # alone" read as if AVX2 were used otherwise).
            what, colon, effect = message.partition(": ")
            message = f"{what} when {member.name} is built alone{colon}{effect}; " + (
                f"binaries that use this library must enable `{detection.feature}` themselves"
                if rule.kind is Kind.MISSING
                else f"binaries that use this library get `{detection.feature}` from it"
                if detection.feature
                else "binaries that use this library build it too"
            )
        if self.configured_severity is not None:
            severity = self.configured_severity
        notes = (*detection.notes, *self.notes)
        return Finding(
            code=rule.code,
            rule=rule.name,
            severity=severity,
            member=self.member_name,
            crate=detection.node.name,
            crate_version=detection.node.version,
            feature=detection.feature,
            target=self.target,
            message=message,
            location=self.location,
            # `{crate}` is this crate (burn-cuda, not every backend the rule knows).
            why=rule.doc.why_line.replace(CRATE_PLACEHOLDER, detection.node.name),
            suggestion=suggestion,
            notes=(detection.evidence, *notes) if detection.evidence else notes,
            chain=self.chain,
            fix=self.fix,
            alternatives=self.alternatives,
            declaration=self.declaration,
            inherited_by=self.inherited_by,
            member_declarations=self.hidden,
            confidence=self.confidence,
            configurations=self.configurations,
            library=library,
            placement=self.placement,
            deferred_to=detection.deferred_to,
        )
