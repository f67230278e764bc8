"""featcheck's configuration: rules to run, severities, targets, build configurations, fail level
and allow entries.

Three places are read, in this order; a later one wins for single values (`fail-on`, `targets`,
`configurations`, `each-feature`, each `severity` entry, a rule's `select`/`ignore` state) and
`allow` entries accumulate:

1. `[workspace.metadata.featcheck]` in the workspace root's Cargo.toml;
2. `[package.metadata.featcheck]` in a member's Cargo.toml (for that member's findings only);
3. `featcheck.toml` at the workspace root (the same keys at top level).

The schema is strict: an unknown key, a value of the wrong type, an unknown rule code or an
allow entry without a reason is a `FeatcheckError` at the offending key or value.
"""

from __future__ import annotations

import difflib
import os
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from featcheck.cargo.argv_gate import GateError, target_triple
from featcheck.cargo.metadata import WorkspaceMetadata
from featcheck.errors import FeatcheckError
from featcheck.featureset import FeatureSelection, feature_value_error
from featcheck.manifest.document import ManifestDocument, read_manifest
from featcheck.manifest.spans import KeyPath, Span
from featcheck.names import same_crate
from featcheck.report import Location
from featcheck.rules import Catalogue, Rule
from featcheck.rules.load import SpecError, parse_rule
from featcheck.severity import FailOn, Severity

CONFIG_FILE = "featcheck.toml"
"""The optional configuration file at the workspace root."""

UNUSED_SUPPRESSION_CODE = "FC900"
"""The code of the findings that report suppressions matching nothing (see `suppress.py`)."""
UNUSED_SUPPRESSION_NAME = "unused-suppression"

FAIL_ON_VALUES = tuple(level.value for level in FailOn)
"""What `fail-on` accepts, as the CLI's `--fail-on` does."""

ANY_CODE = "*"
"""An allow entry's `code` that matches every rule."""

_KEYS = (
    "select",
    "ignore",
    "severity",
    "targets",
    "configurations",
    "each-feature",
    "fail-on",
    "allow",
    "rule",
)
_CONFIGURATION_KEYS = ("features", "no-default-features", "all-features")
_ALLOW_KEYS = ("code", "reason", "crate", "member", "target")


def canonical_code(text: str, catalogue: Catalogue | None = None) -> str | None:
    """The rule code that `text` (a code or kebab-case name, any case) names, or None.

    Knows `FC900` (`unused-suppression`) besides the catalogue (the built-in rules unless a
    project's catalogue, with its own rules, is given).
    """
    wanted = text.strip().lower()
    if wanted in (UNUSED_SUPPRESSION_CODE.lower(), UNUSED_SUPPRESSION_NAME):
        return UNUSED_SUPPRESSION_CODE
    rule = (catalogue or Catalogue.builtin()).find(wanted)
    return rule.code if rule is not None else None


@dataclass(frozen=True)
class Origin:
    """Where a suppression is written: a span in a manifest, `featcheck.toml` or a comment."""

    path: Path
    """The file, as the loader was given it (workspace root joined with the file name)."""
    line: int
    """1-based."""
    column: int
    """1-based, in characters."""
    end_line: int
    end_column: int
    """1-based, just past the span's last character."""
    source_line: str = ""
    """The text of the start line."""

    def location(self, audited_root: Path) -> Location:
        """This span as a finding's Location, relative to the report root with `/`."""
        return Location(
            file=relative_file(self.path, audited_root),
            line=self.line,
            column=self.column,
            end_line=self.end_line,
            end_column=self.end_column,
            source_line=self.source_line,
        )


def relative_file(path: Path, root: Path) -> str:
    """`path` relative to `root` with forward slashes, as findings name files."""
    try:
        relative = os.path.relpath(path, root)
    except ValueError:  # another drive on Windows: no relative path exists
        return path.as_posix()
    return relative.replace(os.sep, "/")


@dataclass(frozen=True)
class Allow:
    """One `[[allow]]` entry: suppresses findings that match every field it gives."""

    code: str
    """A rule code (canonical, e.g. `FC001`) or `*` for every rule."""
    reason: str
    crate: str | None = None
    member: str | None = None
    """Set to the member itself for entries in a member's `[package.metadata.featcheck]`."""
    target: str | None = None
    origin: Origin | None = None
    """Where the entry is written (None for entries built in code)."""

    def matches(self, code: str, crate: str, member: str | None, target: str | None) -> bool:
        """Whether a finding with these fields is suppressed by this entry."""
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
        scope = [
            f"{label} {value}"
            for label, value in (
                ("crate", self.crate),
                ("member", self.member),
                ("target", self.target),
            )
            if value is not None
        ]
        return what + (" for " + ", ".join(scope) if scope else "")


@dataclass(frozen=True)
class Config:
    """The merged configuration; `for_member(name)` adds that member's own settings.

    `select` and `ignore` hold canonical rule codes of `catalogue` (use `rules()`,
    which also applies the command line's flags). `ignore` may hold `FC900`: then unused
    suppressions are not reported.
    """

    select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    severity: Mapping[str, Severity] = field(default_factory=dict)
    """Severity overrides by rule code (may include `FC900`)."""
    targets: tuple[str, ...] = ()
    """Targets to audit when the command line gives none; empty means the host."""
    configurations: tuple[FeatureSelection, ...] = ()
    """Feature selections to audit when the command line gives none; empty means the default
    features."""
    each_feature: bool = False
    """Audit each feature of each member on its own too (as `--each-feature`)."""
    fail_on: str | None = None
    """One of `FAIL_ON_VALUES`, or None when not configured (the CLI's default applies)."""
    allows: tuple[Allow, ...] = ()
    member: str | None = None
    """The member this view is for; None for the workspace-wide view."""
    members: Mapping[str, Config] = field(default_factory=dict, repr=False, compare=False)
    """Per-member views (only on the workspace-wide view); use `for_member`."""
    catalogue: Catalogue = field(default_factory=Catalogue.builtin, repr=False, compare=False)
    """The built-in rules plus the project's own (`[[rule]]` entries)."""

    def for_member(self, name: str | None) -> Config:
        """The configuration that applies to findings of member `name`.

        Members without settings of their own, unknown names and None get the workspace view.
        """
        if name is None or self.member is not None:
            return self
        return self.members.get(name, self)

    def all_allows(self) -> tuple[Allow, ...]:
        """Every allow entry of the workspace view and of every member view, once each."""
        seen: dict[Allow, None] = dict.fromkeys(self.allows)
        for view in self.members.values():
            seen.update(dict.fromkeys(view.allows))
        return tuple(seen)

    def rules(self, select: Iterable[str] = (), ignore: Iterable[str] = ()) -> tuple[Rule, ...]:
        """The rules to run: the defaults, this configuration, then the command line's
        `--select`/`--ignore` (codes or names) on top.

        Raises FeatcheckError for an unknown code on the command line.
        """
        chosen_select = set(self.select)
        chosen_ignore = set(self.ignore)
        flags_select = _codes_from_flags(select, self.catalogue)
        flags_ignore = _codes_from_flags(ignore, self.catalogue)
        chosen_select = (chosen_select | flags_select) - flags_ignore
        chosen_ignore = (chosen_ignore - flags_select) | flags_ignore
        chosen_select.discard(UNUSED_SUPPRESSION_CODE)
        chosen_ignore.discard(UNUSED_SUPPRESSION_CODE)
        return self.catalogue.select(sorted(chosen_select), sorted(chosen_ignore))

    @property
    def reports_unused(self) -> bool:
        """Whether unused suppressions become FC900 findings (not when FC900 is ignored)."""
        return UNUSED_SUPPRESSION_CODE not in self.ignore


def _codes_from_flags(codes: Iterable[str], catalogue: Catalogue) -> set[str]:
    found: set[str] = set()
    unknown: list[str] = []
    for text in codes:
        code = canonical_code(text, catalogue)
        if code is None:
            unknown.append(text)
        else:
            found.add(code)
    if unknown:
        raise FeatcheckError(f"unknown rule {', '.join(unknown)} (see `featcheck rules`)")
    return found


@dataclass(frozen=True)
class _Layer:
    """The settings one place gives, before merging."""

    select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    severity: Mapping[str, Severity] = field(default_factory=dict)
    targets: tuple[str, ...] | None = None
    configurations: tuple[FeatureSelection, ...] | None = None
    each_feature: bool | None = None
    fail_on: str | None = None
    allows: tuple[Allow, ...] = ()


def _merge(base: Config, layer: _Layer) -> Config:
    select = (set(base.select) | set(layer.select)) - set(layer.ignore)
    ignore = (set(base.ignore) - set(layer.select)) | set(layer.ignore)
    return replace(
        base,
        select=tuple(sorted(select)),
        ignore=tuple(sorted(ignore)),
        severity={**base.severity, **layer.severity},
        targets=layer.targets if layer.targets is not None else base.targets,
        configurations=(
            layer.configurations if layer.configurations is not None else base.configurations
        ),
        each_feature=layer.each_feature if layer.each_feature is not None else base.each_feature,
        fail_on=layer.fail_on if layer.fail_on is not None else base.fail_on,
        allows=base.allows + layer.allows,
    )


def load_config(
    workspace_root: Path,
    member_manifests: Mapping[str, Path],
    read_document: Callable[[Path], ManifestDocument] | None = None,
    checkout: Path | None = None,
) -> Config:
    """Read and merge the configuration of a workspace.

    `member_manifests` maps each member's package name to its Cargo.toml. Missing files are
    skipped (`featcheck.toml` is optional). Raises FeatcheckError, at the offending key or
    value, for anything that is not valid configuration. `read_document` reads a manifest (the
    audit passes its cache, so that no manifest is parsed twice). `checkout`: the root that no
    link on the way to `featcheck.toml` may leave (boundary.py).
    """
    documents: dict[Path, ManifestDocument] = {}

    def document(path: Path) -> ManifestDocument:
        if read_document is not None and path.name == "Cargo.toml":
            return read_document(path)
        key = path.resolve()
        if key not in documents:
            documents[key] = read_manifest(path, root=checkout)
        return documents[key]

    root_manifest = workspace_root / "Cargo.toml"
    config_file = workspace_root / CONFIG_FILE
    if config_file.exists() and not config_file.is_file():
        raise FeatcheckError("is not a file", path=config_file)
    # The project's own rules first: `select`, `severity` and `allow` may name them.
    sections: list[tuple[ManifestDocument, tuple[str, ...]]] = []
    if root_manifest.is_file():
        sections.append((document(root_manifest), ("workspace", "metadata", "featcheck")))
    if config_file.is_file():
        sections.append((document(config_file), ()))
    catalogue = Catalogue.builtin()
    for doc, prefix in sections:
        catalogue = _Reader(doc, prefix, None, catalogue).user_rules(catalogue)

    def read(doc: ManifestDocument, prefix: tuple[str, ...], member: str | None) -> _Layer:
        return _read_section(doc, prefix, member, catalogue)

    workspace_layer = _Layer()
    if root_manifest.is_file():
        workspace_layer = read(
            document(root_manifest), ("workspace", "metadata", "featcheck"), member=None
        )
    file_layer = _Layer()
    if config_file.is_file():
        file_layer = read(document(config_file), (), member=None)

    workspace = _merge(_merge(Config(catalogue=catalogue), workspace_layer), file_layer)
    members: dict[str, Config] = {}
    for name, manifest in member_manifests.items():
        if not manifest.is_file():
            continue
        layer = read(document(manifest), ("package", "metadata", "featcheck"), name)
        if layer != _Layer():
            own = Config(member=name, catalogue=catalogue)
            merged = _merge(_merge(own, workspace_layer), layer)
            members[name] = _merge(merged, file_layer)
    return replace(workspace, members=members)


def members_with_settings(metadata: WorkspaceMetadata) -> dict[str, Path]:
    """The manifest of each member that may hold `[package.metadata.featcheck]`, by name.

    cargo's metadata carries each package's `[package.metadata]` table (null without one), so
    the other members' manifests need not be read; a description without that entry
    (`--no-exec` builds its own) says nothing, and its member's manifest is read.
    """
    found: dict[str, Path] = {}
    for member in metadata.members:
        package = metadata.packages.document(member.id)
        if "metadata" in package:
            table = package["metadata"]
            if not isinstance(table, dict) or "featcheck" not in table:
                continue
        found[member.name] = member.manifest_path
    return found


def project_catalogue(path: Path) -> Catalogue:
    """The rules of the project at `path` (a directory or manifest, or any directory inside
    the project): the built-in ones plus its `[[rule]]` entries (`featcheck rules PATH`).

    The workspace root is found as cargo finds it, from the nearest Cargo.toml upwards; a
    directory with only a featcheck.toml counts as a root too.
    """
    from featcheck.boundary import checkout_root
    from featcheck.noexec.workspace import discover_workspace

    path = path.absolute()
    directory = path if path.is_dir() else path.parent
    for candidate in (directory, *directory.parents):
        if (candidate / "Cargo.toml").is_file():
            layout = discover_workspace(candidate / "Cargo.toml")
            return load_config(layout.root, {}, checkout=layout.checkout).catalogue
        if (candidate / CONFIG_FILE).is_file():
            return load_config(candidate, {}, checkout=checkout_root(candidate)).catalogue
    return Catalogue.builtin()


# --- reading one section ---------------------------------------------------------------------


def _read_section(
    doc: ManifestDocument, prefix: tuple[str, ...], member: str | None, catalogue: Catalogue
) -> _Layer:
    """The settings under `prefix` in `doc` (all of `doc` when `prefix` is empty)."""
    table = doc.get(*prefix) if prefix else doc.data
    if table is None:
        return _Layer()
    reader = _Reader(doc, prefix, member, catalogue)
    if not isinstance(table, dict):
        raise reader.error(f"{reader.section} must be a table", prefix)
    return reader.layer(table)


class _Reader:
    """Validates one section, raising errors positioned at the offending key or value."""

    def __init__(
        self,
        doc: ManifestDocument,
        prefix: tuple[str, ...],
        member: str | None,
        catalogue: Catalogue,
    ):
        self.doc = doc
        self.prefix = prefix
        self.member = member
        self.catalogue = catalogue
        self.section = f"[{'.'.join(prefix)}]" if prefix else CONFIG_FILE

    def error(self, message: str, path: KeyPath, *, at_key: bool = False) -> FeatcheckError:
        span = self._span(path, at_key=at_key)
        if span is None:
            return FeatcheckError(message, path=self.doc.path)
        return FeatcheckError(message, path=self.doc.path, line=span.line, column=span.column)

    def _span(self, path: KeyPath, *, at_key: bool) -> Span | None:
        try:
            spans = self.doc.spans
        except ValueError:
            return None
        while True:
            entry = spans.get(path)
            if entry is not None:
                return entry.key if at_key or entry.value is None else entry.value
            if not path:
                return None
            path = path[:-1]

    def origin(self, path: KeyPath) -> Origin | None:
        try:
            entry = self.doc.spans.get(path)
        except ValueError:
            return None
        if entry is None:
            return None
        span = entry.value or entry.key
        return Origin(
            path=self.doc.path,
            line=span.line,
            column=span.column,
            end_line=span.end_line,
            end_column=span.end_column,
            source_line=self.doc.line_text(span.line),
        )

    def layer(self, table: dict[str, Any]) -> _Layer:
        p = self.prefix
        for key in table:
            if key not in _KEYS:
                raise self.error(_unknown_key(key, _KEYS, self.section), (*p, key), at_key=True)
        if "rule" in table and self.member is not None:
            raise self.error(
                "rules are defined for the whole workspace: move this [[rule]] to "
                "[workspace.metadata.featcheck] or featcheck.toml (select it per member here)",
                (*p, "rule"),
                at_key=True,
            )
        fail_on = table.get("fail-on")
        if fail_on is not None and fail_on not in FAIL_ON_VALUES:
            expected = ", ".join(f'"{v}"' for v in FAIL_ON_VALUES)
            raise self.error(f"`fail-on` must be one of {expected}", (*p, "fail-on"))
        select = self.codes(table, "select")
        ignore = self.codes(table, "ignore")
        if UNUSED_SUPPRESSION_CODE in select:
            index = select.index(UNUSED_SUPPRESSION_CODE)
            raise self.error(
                "FC900 (unused-suppression) is reported unless ignored; it cannot be selected",
                (*p, "select", index),
            )
        targets = None
        if "targets" in table:
            targets = tuple(self.targets(table))
        each_feature = table.get("each-feature")
        if each_feature is not None and not isinstance(each_feature, bool):
            raise self.error("`each-feature` must be true or false", (*p, "each-feature"))
        return _Layer(
            select=tuple(dict.fromkeys(select)),
            ignore=tuple(dict.fromkeys(ignore)),
            severity=self.severities(table),
            targets=targets,
            configurations=self.configurations(table),
            each_feature=each_feature,
            fail_on=fail_on,
            allows=self.allows(table),
        )

    def user_rules(self, catalogue: Catalogue) -> Catalogue:
        """`catalogue` plus the `[[rule]]` entries of this section, each checked strictly."""
        table = self.doc.get(*self.prefix) if self.prefix else self.doc.data
        if not isinstance(table, dict) or "rule" not in table:
            return catalogue
        path = (*self.prefix, "rule")
        entries = table["rule"]
        if not isinstance(entries, list):
            raise self.error("`rule` must be an array of tables ([[rule]] entries)", path)
        rules: list[Rule] = []
        for index, entry in enumerate(entries):
            try:
                rule = parse_rule(entry, builtin=False)
            except SpecError as error:
                raise self.error(
                    error.message, (*path, index, *error.path), at_key=error.at_key
                ) from None
            for key, value in (("code", rule.code), ("name", rule.name)):
                clash = catalogue.find(value) or next(
                    (r for r in rules if value in (r.code, r.name)), None
                )
                if clash is not None or value.lower() in (
                    UNUSED_SUPPRESSION_CODE.lower(),
                    UNUSED_SUPPRESSION_NAME,
                ):
                    what = f"{clash.code} `{clash.name}`" if clash else UNUSED_SUPPRESSION_CODE
                    message = f"rule {key} `{value}` is taken by {what}"
                    raise self.error(message, (*path, index, key))
            rules.append(rule)
        return catalogue.with_user_rules(rules)

    def strings(self, table: dict[str, Any], key: str, within: KeyPath | None = None) -> list[str]:
        path = (*(self.prefix if within is None else within), key)
        value = table[key]
        if not isinstance(value, list):
            raise self.error(f"`{key}` must be an array of strings", path)
        for index, item in enumerate(value):
            if not isinstance(item, str) or not item.strip():
                raise self.error(f"`{key}` must hold non-empty strings", (*path, index))
        return [item.strip() for item in value]

    def targets(self, table: dict[str, Any]) -> list[str]:
        """`targets`, each a target triple (or `.json` spec path) by the argument gate: these
        reach rustc's and cargo's command lines."""
        values = self.strings(table, "targets")
        for index, value in enumerate(values):
            try:
                target_triple(value)
            except GateError as error:
                raise self.error(f"`targets`: {error}", (*self.prefix, "targets", index)) from None
        return values

    def codes(self, table: dict[str, Any], key: str) -> list[str]:
        if key not in table:
            return []
        codes: list[str] = []
        for index, text in enumerate(self.strings(table, key)):
            code = canonical_code(text, self.catalogue)
            if code is None:
                raise self.error(
                    f"unknown rule `{text}` in `{key}` (see `featcheck rules`)",
                    (*self.prefix, key, index),
                )
            codes.append(code)
        return codes

    def severities(self, table: dict[str, Any]) -> dict[str, Severity]:
        path = (*self.prefix, "severity")
        value = table.get("severity")
        if value is None:
            return {}
        if not isinstance(value, dict):
            raise self.error(
                '`severity` must be a table of rule = "error" | "warning" | "info"', path
            )
        result: dict[str, Severity] = {}
        for name, level in value.items():
            code = canonical_code(name, self.catalogue)
            if code is None:
                raise self.error(
                    f"unknown rule `{name}` in `severity` (see `featcheck rules`)",
                    (*path, name),
                    at_key=True,
                )
            if code in result:
                raise self.error(f"`severity` sets {code} twice", (*path, name), at_key=True)
            if not isinstance(level, str):
                raise self.error(
                    f'the severity of {name} must be "error", "warning" or "info"', (*path, name)
                )
            try:
                result[code] = Severity.parse(level)
            except ValueError as error:
                raise self.error(f"{name}: {error}", (*path, name)) from None
        return result

    def configurations(self, table: dict[str, Any]) -> tuple[FeatureSelection, ...] | None:
        """`configurations = [{}, { features = ["backend-ndarray"] }, ...]`: each entry is
        cargo's feature selection flags; `{}` is the default features."""
        if "configurations" not in table:
            return None
        path: KeyPath = (*self.prefix, "configurations")
        value = table["configurations"]
        if not isinstance(value, list):
            raise self.error(
                "`configurations` must be an array of tables such as "
                '{ features = ["a"], no-default-features = true }',
                path,
            )
        found: list[FeatureSelection] = []
        for index, entry in enumerate(value):
            at: KeyPath = (*path, index)
            if not isinstance(entry, dict):
                raise self.error("a `configurations` entry must be a table", at)
            for key, item in entry.items():
                if key not in _CONFIGURATION_KEYS:
                    where = "a `configurations` entry"
                    message = _unknown_key(key, _CONFIGURATION_KEYS, where)
                    raise self.error(message, (*at, key), at_key=True)
                if key != "features" and not isinstance(item, bool):
                    raise self.error(f"`{key}` must be true or false", (*at, key))
            features = self.strings(entry, "features", at) if "features" in entry else []
            for position, name in enumerate(features):
                error = feature_value_error(name)
                if error is not None:
                    raise self.error(error, (*at, "features", position))
            found.append(
                FeatureSelection.of(
                    features,
                    no_default=entry.get("no-default-features", False),
                    all_features=entry.get("all-features", False),
                )
            )
        return tuple(dict.fromkeys(found))

    def allows(self, table: dict[str, Any]) -> tuple[Allow, ...]:
        path = (*self.prefix, "allow")
        value = table.get("allow")
        if value is None:
            return ()
        if not isinstance(value, list):
            raise self.error("`allow` must be an array of tables ([[allow]] entries)", path)
        return tuple(self.allow(item, (*path, index)) for index, item in enumerate(value))

    def allow(self, item: Any, path: KeyPath) -> Allow:
        if not isinstance(item, dict):
            raise self.error("an `allow` entry must be a table", path)
        for key in item:
            if key not in _ALLOW_KEYS:
                where = f"an `allow` entry of {self.section}"
                raise self.error(_unknown_key(key, _ALLOW_KEYS, where), (*path, key), at_key=True)
        for key, value in item.items():
            if not isinstance(value, str):
                raise self.error(f"`{key}` of an `allow` entry must be a string", (*path, key))
        if "code" not in item:
            raise self.error(
                'an `allow` entry needs `code` (a rule code or name, or "*")', path, at_key=True
            )
        code_text = item["code"].strip()
        code = ANY_CODE if code_text == ANY_CODE else canonical_code(code_text, self.catalogue)
        if code is None:
            raise self.error(
                f"unknown rule `{code_text}` in `allow` (see `featcheck rules`)", (*path, "code")
            )
        if code == UNUSED_SUPPRESSION_CODE:
            raise self.error(
                "FC900 cannot be allowed: remove the unused suppression, or ignore FC900",
                (*path, "code"),
            )
        reason = item.get("reason", "").strip()
        if not reason:
            at = (*path, "reason") if "reason" in item else path
            raise self.error(
                "an `allow` entry needs a non-empty `reason`", at, at_key="reason" not in item
            )
        fields: dict[str, str | None] = {}
        for key in ("crate", "member", "target"):
            text = item.get(key)
            if text is not None and not text.strip():
                raise self.error(f"`{key}` of an `allow` entry must not be empty", (*path, key))
            fields[key] = text.strip() if text is not None else None
        member = fields["member"]
        if self.member is not None:
            if member is not None and member != self.member:
                raise self.error(
                    f"this `allow` entry is in {self.member}'s manifest and applies only to "
                    f"{self.member}; move it to the workspace configuration",
                    (*path, "member"),
                )
            member = self.member
        return Allow(
            code=code,
            reason=reason,
            crate=fields["crate"],
            member=member,
            target=fields["target"],
            origin=self.origin(path),
        )


def _unknown_key(key: str, known: tuple[str, ...], section: str) -> str:
    message = f"unknown key `{key}` in {section}"
    close = difflib.get_close_matches(key.replace("_", "-"), known, n=1)
    if close:
        return f"{message}; did you mean `{close[0]}`?"
    return f"{message} (expected one of: {', '.join(known)})"
