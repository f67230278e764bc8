"""Suppressions: config `allow` entries and `# featcheck: allow(...)` comments in manifests.

Every suppression that matched nothing is an FC900 `unused-suppression` finding. An inline
comment (settings.py) suppresses the findings whose dependency declaration
(`Finding.declaration`, else `Finding.location`) spans the comment's line in the same file.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass, replace
from pathlib import Path

from featcheck.manifest.document import ManifestDocument, read_manifest
from featcheck.policy.settings import ANY_CODE, Allow, Config, inline_allows, relative_file
from featcheck.report import Finding, Location
from featcheck.rules import UNUSED_SUPPRESSION, Catalogue
from featcheck.severity import Confidence, Severity
from featcheck.workspace.model import same_crate


@dataclass(frozen=True)
class Suppressed:
    finding: Finding
    by: Allow
    """The first suppression that matched (inline comments are tried before allow entries)."""


@dataclass(frozen=True)
class SuppressionResult:
    """What remains to report after suppressions."""

    kept: list[Finding]
    """Findings no suppression matched, in input order."""
    suppressed: list[Suppressed]
    unused: list[Finding]
    """One FC900 finding per suppression that matched nothing, in file and line order."""

    def suppressed_counts(self) -> dict[str, int]:
        """How many findings each rule code had suppressed, for summaries."""
        return dict(sorted(Counter(item.finding.code for item in self.suppressed).items()))


def apply_suppressions(
    findings: Iterable[Finding],
    config: Config,
    root: Path,
    manifests: Iterable[Path] = (),
    *,
    members: Collection[str] | None = None,
    targets: Collection[str] | None = None,
    rules: Collection[str] | None = None,
    read: Callable[[Path], ManifestDocument] = read_manifest,
    misnamed: Callable[[Allow], str | None] | None = None,
    unused_confidence: Confidence = Confidence.RESOLVED,
    report_unused: bool = True,
) -> SuppressionResult:
    """Split `findings` into kept and suppressed ones, and report unused suppressions.

    Each finding is judged by `config.for_member(finding.member)`. The inline comments of
    `manifests` count (every manifest the audit covered), and of the files findings point into.
    An unused allow entry is not reported when its member is not in `members`, its target not
    in `targets`, or its rule not in `rules` (None: everything was audited): the audit could not
    have matched it; unless `misnamed` says why it can never match (`KnownNames` in
    stages/finish.py). `read`: the audit's parsed manifests. `report_unused`: False where the
    command line ignores FC900 (the configuration's `ignore` is the config's own).
    """
    findings = list(findings)
    # Where an inline comment counts for a finding: the edited declaration (else its location),
    # the `workspace = true` line inheriting it, and the member's own declarations on the way.
    finding_spans = [
        (*(s for s in (f.declaration or f.location, f.inherited_by) if s), *f.member_declarations)
        for f in findings
    ]
    inline = _inline_by_file(finding_spans, root, manifests, read, config.catalogue)
    kept, suppressed, used = _match(findings, finding_spans, config, root, inline)
    unused: list[Finding] = []
    if config.reports_unused and report_unused:
        severity = config.severity.get(UNUSED_SUPPRESSION.code, UNUSED_SUPPRESSION.severity)
        for allow in config.all_allows():
            why = misnamed(allow) if misnamed is not None and allow not in used else None
            if why is not None or (
                allow not in used and _could_match(allow, members, targets, rules)
            ):
                unused.append(_unused_finding(allow, root, severity, unused_confidence, why))
        unused += [
            _unused_finding(item, root, severity, unused_confidence)
            for items in inline.values()
            for item in items
            if item not in used and _ran(item.code, rules)
        ]
        unused.sort(
            key=lambda f: (
                (f.location.file, f.location.line, f.location.column) if f.location else ("", 0, 0)
            )
        )
    return SuppressionResult(kept=kept, suppressed=suppressed, unused=unused)


def _match(
    findings: list[Finding],
    finding_spans: list[tuple[Location, ...]],
    config: Config,
    root: Path,
    inline: dict[Path, list[Allow]],
) -> tuple[list[Finding], list[Suppressed], set[Allow]]:
    used: set[Allow] = set()
    kept: list[Finding] = []
    suppressed: list[Suppressed] = []
    resolved_files: dict[str, Path] = {}
    for finding, places in zip(findings, finding_spans, strict=True):
        view = config.for_member(finding.member)
        matches: list[Allow] = []
        for place in places if inline else ():  # the comments on the lines of `places`
            path = resolved_files.get(place.file)
            if path is None:
                path = resolved_files[place.file] = (root / place.file).resolve()
            matches += [
                item
                for item in inline.get(path, ())
                if item.origin and place.line <= item.origin.line <= place.end_line
                if item.code in (ANY_CODE, finding.code)
            ]
        matches += [
            allow
            for allow in view.allows
            if allow.matches(finding.code, finding.crate, finding.member, finding.target)
        ]
        if matches:
            used.update(matches)
            suppressed.append(Suppressed(finding, matches[0]))
        else:
            kept.append(finding)
    return kept, suppressed, used


def _inline_by_file(
    finding_spans: list[tuple[Location, ...]],
    root: Path,
    manifests: Iterable[Path],
    read: Callable[[Path], ManifestDocument],
    catalogue: Catalogue,
) -> dict[Path, list[Allow]]:
    """Inline allows of every manifest to consider, keyed by resolved path."""
    paths = list(manifests)
    paths += [root / span.file for places in finding_spans for span in places]
    result: dict[Path, list[Allow]] = {}
    for path in dict.fromkeys(paths):
        # A file without any directive needs no resolved name.
        if path.is_file() and (allows := inline_allows(read(path), catalogue)):
            result.setdefault(path.resolve(), allows)
    return result


def _could_match(
    allow: Allow,
    members: Collection[str] | None,
    targets: Collection[str] | None,
    rules: Collection[str] | None,
) -> bool:
    """Whether this audit covered what the allow entry is about (else it is not "unused")."""
    if (
        members is not None
        and allow.member is not None
        and not any(same_crate(allow.member, m) for m in members)
    ):
        return False
    if targets is not None and allow.target is not None and allow.target not in targets:
        return False
    return _ran(allow.code, rules)


def _ran(code: str, rules: Collection[str] | None) -> bool:
    """Whether the audit ran the rule `code` (`*`: any rule at all)."""
    return rules is None or code in rules or (code == ANY_CODE and bool(rules))


def _unused_finding(
    item: Allow, root: Path, severity: Severity, confidence: Confidence, misnamed: str | None = None
) -> Finding:
    kind = "`# featcheck: allow` comment" if item.inline else "`allow` entry"
    location = item.origin
    if location is not None:  # as the loader was given the file: relative to the report root
        location = replace(location, file=relative_file(Path(location.file), root))
    matches = f"can never match: {misnamed}" if misnamed else "matches no finding"
    return Finding(
        code=UNUSED_SUPPRESSION.code,
        rule=UNUSED_SUPPRESSION.name,
        severity=severity,
        # A member that does not exist heads no group of its own: the entry is configuration.
        member=None if misnamed else item.member,
        crate=item.crate or "",
        crate_version="",
        feature="",
        target=None,
        message=(f"this suppression of {item.describe()} (reason: {item.reason}) {matches}"),
        location=location,
        why=UNUSED_SUPPRESSION.why,
        suggestion=f"Remove this {kind}, or correct its code, crate, member or target.",
        confidence=confidence,
    )
