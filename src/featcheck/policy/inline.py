"""`# featcheck: allow(...)` comments in manifests, one suppression per code:

    burn = { version = "0.22", features = ["flex"] }  # featcheck: allow(FC001) wasm build

    [dependencies.burn]
    # featcheck: allow(FC001, flex-without-simd) measured: rayon is slower for our 8x8 matrices
    version = "0.22"

A comment suppresses the findings whose dependency declaration spans its line (see suppress.py).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from featcheck.errors import FeatcheckError
from featcheck.manifest.document import ManifestDocument
from featcheck.manifest.toml_lexer import Comment, scan_comments
from featcheck.policy.settings import ANY_CODE, Allow, canonical_code
from featcheck.report import Location
from featcheck.rules import UNUSED_SUPPRESSION_CODE, Catalogue


@dataclass(frozen=True)
class InlineAllow:
    """One code of a `# featcheck: allow(CODE, ...) reason` comment."""

    code: str
    """Canonical rule code, or `*`."""
    reason: str
    origin: Location
    """The code's place in the comment, its file as read; `origin.line` is the comment's line."""

    def describe(self) -> str:
        """E.g. `FC001`, for messages."""
        return "all rules" if self.code == ANY_CODE else self.code


Suppression = Allow | InlineAllow
"""A config allow entry or one code of an inline comment."""


_DIRECTIVE = re.compile(r"#[ \t]*featcheck[ \t]*:", re.IGNORECASE)
_ALLOW = re.compile(r"[ \t]*allow[ \t]*\(([^)]*)\)", re.IGNORECASE)
_REASON_LEAD = re.compile(r"[ \t]*(?:[:\-\u2013\u2014][ \t]*)?")


def has_directive(text: str) -> bool:
    """Whether `text` holds a `# featcheck:` directive anywhere (cheaper than parsing it)."""
    return _DIRECTIVE.search(text) is not None


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
        origin = Location(
            file=str(document.path),
            line=comment.line,
            column=column,
            end_line=comment.line,
            end_column=column + len(stripped),
            source_line=source_line,
        )
        found.setdefault(code, InlineAllow(code, reason, origin))
    return list(found.values())
