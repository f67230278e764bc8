"""The settings configuration gives: rules to run, severities, targets, build configurations,
the fail level and `allow` entries, merged from every place that sets them (see `load.py`); and
the `# featcheck: allow(...)` comments of manifests, which suppress findings as `allow` entries
do."""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path

from featcheck.errors import FeatcheckError
from featcheck.featureset import FeatureSelection
from featcheck.manifest.document import ManifestDocument
from featcheck.manifest.toml_lexer import Comment, scan_comments
from featcheck.report import Location
from featcheck.rules import UNUSED_SUPPRESSION, Catalogue, Rule, find_by_code
from featcheck.severity import FailOn, Severity
from featcheck.workspace.model import same_crate

CONFIG_FILE = "featcheck.toml"
"""The optional configuration file at the workspace root."""

FAIL_ON_VALUES = tuple(level.value for level in FailOn)
"""What `fail-on` accepts, as the CLI's `--fail-on` does."""

FIX_LEVEL_VALUES = tuple(level.label for level in sorted(Severity, reverse=True))
"""What `fix-level` accepts, as the CLI's `--fix-level` does: error, warning, info."""

ANY_CODE = "*"
"""An allow entry's `code` that matches every rule."""

FC900_NOT_ALLOWED = "FC900 cannot be allowed: remove the unused suppression, or ignore FC900"


def canonical_code(text: str, catalogue: Catalogue | None = None) -> str | None:
    """The rule code that `text` (a code or kebab-case name, any case) names, or None: FC900
    (`unused-suppression`) or a rule of `catalogue` (by default the built-in rules)."""
    rule = find_by_code((UNUSED_SUPPRESSION, *(catalogue or Catalogue.builtin()).rules), text)
    return rule.code if rule is not None else None


def relative_file(path: Path, root: Path) -> str:
    """`path` relative to `root` with forward slashes, as findings name files."""
    try:
        relative = os.path.relpath(path, root)
    except ValueError:  # another drive on Windows: no relative path exists
        return path.as_posix()
    return relative.replace(os.sep, "/")


@dataclass(frozen=True)
class Allow:
    """One `[[allow]]` entry, which suppresses findings that match every field it gives; or
    one code of an inline comment (see below)."""

    code: str
    """A rule code (canonical, e.g. `FC001`) or `*` for every rule."""
    reason: str
    crate: str | None = None
    member: str | None = None
    """Set to the member itself for entries in a member's `[package.metadata.featcheck]`."""
    target: str | None = None
    origin: Location | None = None
    """Where the entry is written, its file as read (None for entries built in code); for an
    inline comment, the code's place in it (`origin.line` is the comment's line)."""
    inline: bool = False
    """One code of a `# featcheck: allow(CODE, ...) reason` comment (crate, member and target
    unset), not an `[[allow]]` entry."""

    def matches(self, code: str, crate: str, member: str | None, target: str | None) -> bool:
        if self.code not in (ANY_CODE, code):
            return False
        if self.crate is not None and not same_crate(self.crate, crate):
            return False
        if self.member is not None and (member is None or not same_crate(self.member, member)):
            return False
        return self.target is None or self.target == target

    def describe(self) -> str:
        """E.g. `FC001 for crate burn-flex on member app`, for messages."""
        what = "all rules" if self.code == ANY_CODE else self.code
        values = {"crate": self.crate, "member": self.member, "target": self.target}
        scope = [f"{label} {value}" for label, value in values.items() if value is not None]
        return what + (" for " + ", ".join(scope) if scope else "")


@dataclass(frozen=True)
class Config:
    """The merged configuration; `for_member(name)` adds that member's own settings.

    `select` and `ignore` hold canonical rule codes of `catalogue` (use `rules()`,
    which also applies the command line's flags).
    """

    select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    severity: Mapping[str, Severity] = field(default_factory=dict)
    """Severity overrides by rule code (may include `FC900`)."""
    targets: tuple[str, ...] = ()
    """Targets to audit when the command line gives none; empty means the host."""
    configurations: tuple[FeatureSelection, ...] = ()
    """Feature selections to audit when the command line gives none; empty: the default ones."""
    each_feature: bool = False
    """Audit each feature of each member on its own too (as `--each-feature`)."""
    fail_on: str | None = None
    """One of `FAIL_ON_VALUES`, or None when not configured (the CLI's default applies)."""
    fix_level: str | None = None
    """One of `FIX_LEVEL_VALUES`: the least severity `--fix` fixes; None: the failing level."""
    allows: tuple[Allow, ...] = ()
    baseline: Path | None = None
    """The baseline file (`baseline`), resolved against the file that names it."""
    member: str | None = None
    """The member this view is for; None for the workspace-wide view."""
    members: Mapping[str, Config] = field(default_factory=dict, repr=False, compare=False)
    """Per-member views (only on the workspace-wide view); use `for_member`."""
    catalogue: Catalogue = field(default_factory=Catalogue.builtin, repr=False, compare=False)
    """The built-in rules plus the project's own (`[[rule]]` entries)."""

    def for_member(self, name: str | None) -> Config:
        """The configuration for findings of member `name`: the workspace view for None,
        unknown names and members without settings of their own."""
        if name is None or self.member is not None:
            return self
        return self.members.get(name, self)

    def all_allows(self) -> tuple[Allow, ...]:
        every = [*self.allows, *(a for view in self.members.values() for a in view.allows)]
        return tuple(dict.fromkeys(every))

    def rules(self, select: Iterable[str] = (), ignore: Iterable[str] = ()) -> tuple[Rule, ...]:
        """The rules to run: the defaults, this configuration, then the command line's
        `--select`/`--ignore` (codes or names) on top; a FeatcheckError for an unknown one."""
        selected, ignored = (_codes_from_flags(codes, self.catalogue) for codes in (select, ignore))
        chosen = merged(self, Layer(select=selected, ignore=ignored))
        return self.catalogue.select(
            [c for c in chosen.select if c != UNUSED_SUPPRESSION.code],
            [c for c in chosen.ignore if c != UNUSED_SUPPRESSION.code],
        )

    @property
    def reports_unused(self) -> bool:
        """Whether unused suppressions become FC900 findings (not when FC900 is ignored)."""
        return UNUSED_SUPPRESSION.code not in self.ignore


def _codes_from_flags(codes: Iterable[str], catalogue: Catalogue) -> tuple[str, ...]:
    found = [(text, canonical_code(text, catalogue)) for text in codes]
    unknown = [text for text, code in found if code is None]
    if unknown:
        raise FeatcheckError(f"unknown rule {', '.join(unknown)} (see `featcheck rules`)")
    return tuple(code for _, code in found if code is not None)


@dataclass(frozen=True)
class Layer:
    """The settings one place gives, before merging."""

    select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    severity: Mapping[str, Severity] = field(default_factory=dict)
    targets: tuple[str, ...] | None = None
    configurations: tuple[FeatureSelection, ...] | None = None
    each_feature: bool | None = None
    fail_on: str | None = None
    fix_level: str | None = None
    allows: tuple[Allow, ...] = ()
    baseline: Path | None = None


_SINGLE_VALUES = ("targets", "configurations", "each_feature", "fail_on", "fix_level", "baseline")
"""The settings a later place overrides whole (None in a `Layer`: not set there)."""


def merged(base: Config, layer: Layer) -> Config:
    """`base` with `layer`'s settings on top."""
    select = (set(base.select) | set(layer.select)) - set(layer.ignore)
    ignore = (set(base.ignore) - set(layer.select)) | set(layer.ignore)
    given = {name: getattr(layer, name) for name in _SINGLE_VALUES}
    return replace(
        base,
        select=tuple(sorted(select)),
        ignore=tuple(sorted(ignore)),
        severity={**base.severity, **layer.severity},
        allows=base.allows + layer.allows,
        **{name: value for name, value in given.items() if value is not None},
    )


# `# featcheck: allow(...)` comments in manifests, one suppression per code (README,
# "Configuration and suppressions"; suppress.py says which findings each covers).


_DIRECTIVE = re.compile(r"#[ \t]*featcheck[ \t]*:", re.IGNORECASE)
_ALLOW = re.compile(r"[ \t]*allow[ \t]*\(([^)]*)\)", re.IGNORECASE)
_REASON_LEAD = re.compile(r"[ \t]*(?:[:\-\u2013\u2014][ \t]*)?")


def inline_allows(document: ManifestDocument, catalogue: Catalogue | None = None) -> list[Allow]:
    """The `# featcheck: allow(...)` comments of a manifest, one entry per code.

    Syntax: `# featcheck: allow(CODE[, CODE...]) REASON`; codes are rule codes or kebab-case
    names (or `*`), the reason is required (a leading `:` or dash is dropped). The directive
    may follow other comment text (`# the CPU backend  # featcheck: allow(...) ...`). Raises
    FeatcheckError at the directive (or the bad code) for a malformed one.
    """
    if _DIRECTIVE.search(document.text) is None:
        # Every directive lies in the text: a file without any needs no comment scan (hundreds
        # of members, as many findings).
        return []
    allows: list[Allow] = []
    for comment in scan_comments(document.text):
        if directive := _DIRECTIVE.search(comment.text):
            allows += _parse_directive(document, comment, directive, catalogue)
    return allows


def _parse_directive(
    document: ManifestDocument,
    comment: Comment,
    directive: re.Match[str],
    catalogue: Catalogue | None,
) -> list[Allow]:
    def fail(message: str, offset: int = directive.start()) -> FeatcheckError:
        return FeatcheckError(
            message, path=document.path, line=comment.line, column=comment.column + offset
        )

    text = comment.text
    match = _ALLOW.match(text, directive.end())
    if match is None:
        raise fail("expected `# featcheck: allow(CODE, ...) reason`")
    reason_start = _REASON_LEAD.match(text, match.end())
    assert reason_start is not None  # every part of the pattern is optional
    reason = text[reason_start.end() :].strip()
    if not reason:
        raise fail("a `# featcheck: allow(...)` comment needs a reason after the codes")
    source_line = document.line_text(comment.line)
    found: dict[str, Allow] = {}
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
        if code == UNUSED_SUPPRESSION.code:
            raise fail(FC900_NOT_ALLOWED, column_offset)
        column = comment.column + column_offset
        origin = Location(
            file=str(document.path),
            line=comment.line,
            column=column,
            end_line=comment.line,
            end_column=column + len(stripped),
            source_line=source_line,
        )
        found.setdefault(code, Allow(code, reason, origin=origin, inline=True))
    return list(found.values())
