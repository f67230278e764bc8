"""Suppressions: config `allow` entries and `# featcheck: allow(...)` comments in manifests.

`apply_suppressions` takes an audit's findings and returns what to report: the findings no
suppression matches (with configured severities applied), the suppressed ones with the
suppression that matched, and an FC900 `unused-suppression` finding for every suppression that
matched nothing, so that stale or mistyped suppressions do not linger.

An inline comment suppresses the findings whose dependency declaration (`Finding.declaration`,
else `Finding.location`) spans the comment's line in the same file:

    burn = { version = "0.22", features = ["flex"] }  # featcheck: allow(FC001) wasm build

    [dependencies.burn]
    # featcheck: allow(FC001, flex-without-simd) measured: rayon is slower for our 8x8 matrices
    version = "0.22"
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass, replace
from pathlib import Path

from featcheck.config import (
    ANY_CODE,
    UNUSED_SUPPRESSION_CODE,
    UNUSED_SUPPRESSION_NAME,
    Allow,
    Config,
    Origin,
    canonical_code,
)
from featcheck.errors import FeatcheckError
from featcheck.manifest.document import ManifestDocument, read_manifest, read_manifest_text
from featcheck.names import same_crate
from featcheck.report import Finding, Location, Severity
from featcheck.rules import Catalogue
from featcheck.rules.spec import RuleDoc


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
            "Entries for a member, target or rule that was not audited are not reported."
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


@dataclass(frozen=True)
class InlineAllow:
    """One code of a `# featcheck: allow(CODE, ...) reason` comment."""

    code: str
    """Canonical rule code, or `*`."""
    reason: str
    origin: Origin
    """The code's place in the comment; `origin.line` is the comment's line."""

    def describe(self) -> str:
        """E.g. `FC001`, for messages."""
        return "all rules" if self.code == ANY_CODE else self.code


Suppression = Allow | InlineAllow
"""A config allow entry or one code of an inline comment."""


@dataclass(frozen=True)
class Suppressed:
    """A finding that a suppression hid."""

    finding: Finding
    by: Suppression
    """The first suppression that matched (inline comments are tried before allow entries)."""

    @property
    def reason(self) -> str:
        """The reason the suppression gives."""
        return self.by.reason


@dataclass(frozen=True)
class SuppressionResult:
    """What remains to report after suppressions."""

    kept: list[Finding]
    """Findings no suppression matched, in input order, with severity overrides applied."""
    suppressed: list[Suppressed]
    """Findings suppressions hid (severity overrides applied too)."""
    unused: list[Finding]
    """One FC900 finding per suppression that matched nothing, in file and line order."""

    @property
    def findings(self) -> list[Finding]:
        """What to report: the kept findings, then the unused-suppression ones."""
        return [*self.kept, *self.unused]

    def suppressed_counts(self) -> dict[str, int]:
        """How many findings each rule code had suppressed, for summaries."""
        counts: dict[str, int] = {}
        for item in self.suppressed:
            counts[item.finding.code] = counts.get(item.finding.code, 0) + 1
        return dict(sorted(counts.items()))


# --- inline comments -------------------------------------------------------------------------


@dataclass(frozen=True)
class Comment:
    """A TOML comment: where its `#` is and its text (from `#` to the end of the line)."""

    line: int
    column: int
    text: str


def scan_comments(text: str) -> list[Comment]:
    """Every comment of a TOML document; `#` inside strings (of any kind) does not count.

    Trusts `text` to be valid TOML (parse it first). Columns count characters, 1-based; a byte
    order mark at the start is not counted, as in `featcheck.manifest.spans`.
    """
    comments: list[Comment] = []
    pos = 1 if text.startswith("\ufeff") else 0
    line, line_start = 1, pos
    end = len(text)
    while pos < end:
        char = text[pos]
        if char == "\n":
            pos += 1
            line, line_start = line + 1, pos
        elif char == "#":
            newline = text.find("\n", pos)
            stop = end if newline < 0 else newline
            comments.append(Comment(line, pos - line_start + 1, text[pos:stop].rstrip("\r")))
            pos = stop
        elif char in "\"'":
            stop = _string_end(text, pos)
            newlines = text.count("\n", pos, stop)
            if newlines:
                line += newlines
                line_start = text.rfind("\n", pos, stop) + 1
            pos = stop
        else:
            pos += 1
    return comments


def _string_end(text: str, pos: int) -> int:
    """Offset just past the string (basic or literal, single- or multi-line) starting at pos."""
    quote = text[pos]
    if text.startswith(quote * 3, pos):
        index = pos + 3
        while index < len(text):
            if quote == '"' and text[index] == "\\":
                index += 2
            elif text.startswith(quote * 3, index):
                index += 3
                # Up to two more quotes belong to the content: `"""a""""` holds `a"`.
                for _ in range(2):
                    if text[index : index + 1] == quote:
                        index += 1
                return index
            else:
                index += 1
        return len(text)
    index = pos + 1
    while index < len(text):
        char = text[index]
        if quote == '"' and char == "\\":
            index += 2
        elif char == quote:
            return index + 1
        elif char == "\n":  # not valid TOML; do not let it swallow the rest
            return index
        else:
            index += 1
    return len(text)


_DIRECTIVE = re.compile(r"#[ \t]*featcheck[ \t]*:", re.IGNORECASE)
_ALLOW = re.compile(r"[ \t]*allow[ \t]*\(([^)]*)\)", re.IGNORECASE)
_REASON_LEAD = re.compile(r"[ \t]*(?:[:\-\u2013\u2014][ \t]*)?")


def inline_allows(
    document: ManifestDocument, catalogue: Catalogue | None = None
) -> list[InlineAllow]:
    """The `# featcheck: allow(...)` comments of a manifest, one entry per code.

    Syntax: `# featcheck: allow(CODE[, CODE...]) REASON`; codes are rule codes or kebab-case
    names (or `*`), the reason is required (a leading `:` or dash is dropped). The directive
    may follow other comment text (`# the CPU backend  # featcheck: allow(...) ...`). Raises
    FeatcheckError at the directive (or the bad code) for a malformed one. Codes are looked up
    in `catalogue` (the project's, with its own rules; the built-in rules when None).
    """
    allows: list[InlineAllow] = []
    for comment in scan_comments(document.text):
        directive = _DIRECTIVE.search(comment.text)
        if directive is None:
            continue
        allows.extend(
            _parse_directive(document, comment, directive.start(), directive.end(), catalogue)
        )
    return allows


def _parse_directive(
    document: ManifestDocument,
    comment: Comment,
    start: int,
    end: int,
    catalogue: Catalogue | None,
) -> list[InlineAllow]:
    def fail(message: str, offset: int = start) -> FeatcheckError:
        return FeatcheckError(
            message, path=document.path, line=comment.line, column=comment.column + offset
        )

    text = comment.text
    match = _ALLOW.match(text, end)
    if match is None:
        raise fail("expected `# featcheck: allow(CODE, ...) reason`")
    reason_start = _REASON_LEAD.match(text, match.end())
    assert reason_start is not None  # every part of the pattern is optional
    reason = text[reason_start.end() :].strip()
    if not reason:
        raise fail("a `# featcheck: allow(...)` comment needs a reason after the codes")
    source_line = document.line_text(comment.line)
    found: dict[str, InlineAllow] = {}
    offset = match.start(1)
    for part in match.group(1).split(","):
        stripped = part.strip()
        column_offset = offset + (len(part) - len(part.lstrip()))
        offset += len(part) + 1
        if not stripped:
            raise fail("expected a rule code in `allow(...)`", column_offset)
        code = ANY_CODE if stripped == ANY_CODE else canonical_code(stripped, catalogue)
        if code is None:
            raise fail(f"unknown rule `{stripped}` (see `featcheck rules`)", column_offset)
        if code == UNUSED_SUPPRESSION_CODE:
            raise fail(
                "FC900 cannot be allowed: remove the unused suppression, or ignore FC900",
                column_offset,
            )
        column = comment.column + column_offset
        origin = Origin(
            path=document.path,
            line=comment.line,
            column=column,
            end_line=comment.line,
            end_column=column + len(stripped),
            source_line=source_line,
        )
        found.setdefault(code, InlineAllow(code, reason, origin))
    return list(found.values())


# --- applying them ---------------------------------------------------------------------------


def apply_suppressions(
    findings: Iterable[Finding],
    config: Config,
    audited_root: Path,
    manifests: Iterable[Path] = (),
    *,
    members: Collection[str] | None = None,
    targets: Collection[str] | None = None,
    rules: Collection[str] | None = None,
    read: Callable[[Path], ManifestDocument] = read_manifest,
    read_text: Callable[[Path], str] = read_manifest_text,
    spans: Callable[[Finding], Iterable[Location]] | None = None,
) -> SuppressionResult:
    """Split `findings` into kept and suppressed ones, and report unused suppressions.

    `config` is the workspace-wide configuration (`load_config`); each finding is judged by
    `config.for_member(finding.member)`. `manifests` are the files whose inline comments count
    (pass every manifest the audit covered: members, the workspace root, path dependencies);
    the files that findings' declarations point into are read too. Finding locations are
    resolved against `audited_root`, and FC900 locations are made relative to it.

    An unused allow entry is not reported when its member is not in `members`, its target
    not in `targets`, or its rule not in `rules` (rule codes that ran) -- each None meaning
    "everything was audited" -- since the audit could not have matched it. An unused inline
    code is not reported when its rule is not in `rules`. FC900s are off when the
    configuration ignores FC900; their severity follows `severity.FC900`.

    `read` reads a manifest and `read_text` only its text (pass a cache's getters to avoid
    reading files twice): only manifests whose text holds a `# featcheck:` directive are
    parsed. `spans`
    gives the declarations whose lines a finding's inline comments may sit on; the default,
    `declaration_spans`, is `finding.declaration`, else `finding.location`. Pass one that adds
    more (e.g. the member's `burn = { workspace = true }` line besides the workspace entry
    that the location points at). Raises FeatcheckError for a malformed `# featcheck:` comment.
    """
    findings = list(findings)
    root = Path(audited_root)
    spans_of = spans or declaration_spans
    finding_spans = [tuple(spans_of(finding)) for finding in findings]
    inline = _inline_by_file(finding_spans, root, manifests, read, read_text, config.catalogue)
    used: set[Suppression] = set()
    kept: list[Finding] = []
    suppressed: list[Suppressed] = []
    resolved_files: dict[str, Path] = {}
    for finding, places in zip(findings, finding_spans, strict=True):
        view = config.for_member(finding.member)
        override = view.severity.get(finding.code)
        if override is not None and override != finding.severity:
            finding = replace(finding, severity=override)
        matches: list[Suppression] = [
            item
            for place in places
            for item in _inline_matches(finding.code, place, root, inline, resolved_files)
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

    unused: list[Finding] = []
    if config.reports_unused:
        candidates: list[Suppression] = [
            allow
            for allow in config.all_allows()
            if allow not in used and _could_match(allow, members, targets, rules)
        ]
        candidates += [
            item
            for items in inline.values()
            for item in items
            if item not in used and (rules is None or item.code in (ANY_CODE, *rules))
        ]
        severity = config.severity.get(UNUSED_SUPPRESSION_CODE, UNUSED_SUPPRESSION.severity)
        unused = [_unused_finding(item, root, severity) for item in candidates]
        unused.sort(key=_location_order)
    return SuppressionResult(kept=kept, suppressed=suppressed, unused=unused)


def declaration_spans(finding: Finding) -> tuple[Location, ...]:
    """Where inline comments for `finding` may sit: its declaration, else its location."""
    span = finding.declaration or finding.location
    return (span,) if span is not None else ()


def _inline_by_file(
    finding_spans: list[tuple[Location, ...]],
    root: Path,
    manifests: Iterable[Path],
    read: Callable[[Path], ManifestDocument],
    read_text: Callable[[Path], str],
    catalogue: Catalogue,
) -> dict[Path, list[InlineAllow]]:
    """Inline allows of every manifest to consider, keyed by resolved path."""
    paths = list(manifests)
    paths += [root / span.file for places in finding_spans for span in places]
    result: dict[Path, list[InlineAllow]] = {}
    for path in dict.fromkeys(paths):
        # Every directive lies in the text: a file without any needs no parse, no scan and no
        # resolved name (hundreds of members, as many findings).
        if not path.is_file() or _DIRECTIVE.search(read_text(path)) is None:
            continue
        key = path.resolve()
        if key not in result:
            result[key] = inline_allows(read(path), catalogue)
    return result


def _inline_matches(
    code: str,
    span: Location,
    root: Path,
    inline: dict[Path, list[InlineAllow]],
    resolved_files: dict[str, Path],
) -> list[InlineAllow]:
    if not inline:
        return []
    path = resolved_files.get(span.file)
    if path is None:
        path = resolved_files[span.file] = (root / span.file).resolve()
    return [
        item
        for item in inline.get(path, ())
        if span.line <= item.origin.line <= span.end_line and item.code in (ANY_CODE, code)
    ]


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
    return rules is None or allow.code == ANY_CODE or allow.code in rules


def _unused_finding(item: Suppression, root: Path, severity: Severity) -> Finding:
    kind = "`allow` entry" if isinstance(item, Allow) else "`# featcheck: allow` comment"
    location = item.origin.location(root) if item.origin is not None else None
    return Finding(
        code=UNUSED_SUPPRESSION.code,
        rule=UNUSED_SUPPRESSION.name,
        severity=severity,
        member=item.member if isinstance(item, Allow) else None,
        crate=(item.crate or "") if isinstance(item, Allow) else "",
        crate_version="",
        feature="",
        target=None,
        message=(
            f"this suppression of {item.describe()} (reason: {item.reason}) matches no finding"
        ),
        location=location,
        why=UNUSED_SUPPRESSION.why,
        suggestion=f"Remove this {kind}, or correct its code, crate, member or target.",
    )


def _location_order(finding: Finding) -> tuple[str, int, int]:
    location: Location | None = finding.location
    if location is None:
        return ("", 0, 0)
    return (location.file, location.line, location.column)
