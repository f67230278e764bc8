"""One section of configuration checked strictly: `[workspace.metadata.featcheck]`,
`[package.metadata.featcheck]` or `featcheck.toml`, each error at the offending key or value."""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from featcheck.boundary import configured_path_stays_inside
from featcheck.cargo.argv_gate import GateError, target_triple
from featcheck.cargo.failures import printable
from featcheck.errors import FeatcheckError
from featcheck.featureset import FeatureSelection, feature_value_error
from featcheck.manifest.document import ManifestDocument
from featcheck.manifest.spans import KeyPath
from featcheck.policy.settings import (
    ANY_CODE,
    CONFIG_FILE,
    FAIL_ON_VALUES,
    FC900_NOT_ALLOWED,
    FIX_LEVEL_VALUES,
    Allow,
    Layer,
    canonical_code,
)
from featcheck.report import Location
from featcheck.rules import FC900_UNSELECTABLE, UNUSED_SUPPRESSION, Catalogue
from featcheck.severity import Severity

_KEYS = (
    "select",
    "ignore",
    "severity",
    "targets",
    "configurations",
    "each-feature",
    "fail-on",
    "fix-level",
    "allow",
    "rule",
    "baseline",
)
_CONFIGURATION_KEYS = ("features", "no-default-features", "all-features")
_ALLOW_KEYS = ("code", "reason", "crate", "member", "target")
_WORKSPACE_ONLY = {
    "rule": "rules are defined for the whole workspace: move this [[rule]] to "
    "[workspace.metadata.featcheck] or featcheck.toml (select it per member here)",
    "baseline": "a baseline covers the whole workspace: name it in "
    "[workspace.metadata.featcheck] or featcheck.toml",
}


@dataclass(frozen=True)
class SectionReader:
    """Validates the section at `prefix` of `doc` (all of `doc` when `prefix` is empty), raising
    errors positioned at the offending key or value; a path it names must stay inside
    `checkout` (the root of the checkout `doc` belongs to)."""

    doc: ManifestDocument
    prefix: tuple[str, ...]
    member: str | None
    catalogue: Catalogue
    checkout: Path | None = None

    @property
    def section(self) -> str:
        return f"[{'.'.join(self.prefix)}]" if self.prefix else CONFIG_FILE

    def error(self, message: str, path: KeyPath, *, at_key: bool = False) -> FeatcheckError:
        """An error at `path`, else at the nearest key around it that is written."""
        try:
            spans = self.doc.spans
        except ValueError:
            spans = {}
        while path and path not in spans:
            path = path[:-1]
        entry = spans.get(path)
        if entry is None:
            return FeatcheckError(message, path=self.doc.path)
        span = entry.key if at_key or entry.value is None else entry.value
        return FeatcheckError(message, path=self.doc.path, line=span.line, column=span.column)

    def origin(self, path: KeyPath) -> Location | None:
        try:
            entry = self.doc.spans.get(path)
        except ValueError:
            return None
        if entry is None:
            return None
        span = entry.value or entry.key
        return Location(
            file=str(self.doc.path),
            line=span.line,
            column=span.column,
            end_line=span.end_line,
            end_column=span.end_column,
            source_line=self.doc.line_text(span.line),
        )

    def layer(self) -> Layer:
        """The section's settings (none where it is not written)."""
        p = self.prefix
        table = self.doc.get(*p)
        if table is None:
            return Layer()
        if not isinstance(table, dict):
            raise self.error(f"{self.section} must be a table", p)
        self.known(table, _KEYS, self.section, p)
        for key, message in _WORKSPACE_ONLY.items():
            if key in table and self.member is not None:
                raise self.error(message, (*p, key), at_key=True)
        select = self.codes(table, "select")
        ignore = self.codes(table, "ignore")
        if UNUSED_SUPPRESSION.code in select:
            index = select.index(UNUSED_SUPPRESSION.code)
            raise self.error(FC900_UNSELECTABLE, (*p, "select", index))
        targets = tuple(self.targets(table)) if "targets" in table else None
        each_feature = table.get("each-feature")
        if each_feature is not None and not isinstance(each_feature, bool):
            raise self.error("`each-feature` must be true or false", (*p, "each-feature"))
        return Layer(
            select=tuple(dict.fromkeys(select)),
            ignore=tuple(dict.fromkeys(ignore)),
            severity=self.severities(table),
            targets=targets,
            configurations=self.configurations(table),
            each_feature=each_feature,
            fail_on=self.level(table, "fail-on", FAIL_ON_VALUES),
            fix_level=self.level(table, "fix-level", FIX_LEVEL_VALUES),
            allows=self.allows(table),
            baseline=self.baseline(table),
        )

    def known(self, keys: Iterable[str], known: tuple[str, ...], where: str, path: KeyPath) -> None:
        for key in keys:
            if key not in known:
                close = difflib.get_close_matches(key.replace("_", "-"), known, n=1)
                listed = ", ".join(known)
                hint = f"; did you mean `{close[0]}`?" if close else f" (expected one of: {listed})"
                raise self.error(f"unknown key `{key}` in {where}{hint}", (*path, key), at_key=True)

    def level(self, table: dict[str, Any], key: str, values: tuple[str, ...]) -> str | None:
        """`fail-on` or `fix-level`: one of `values`, or None when not set."""
        value = table.get(key)
        if value is not None and value not in values:
            expected = ", ".join(f'"{v}"' for v in values)
            raise self.error(f"`{key}` must be one of {expected}", (*self.prefix, key))
        return value if value is None else str(value)

    def baseline(self, table: dict[str, Any]) -> Path | None:
        """`baseline`: a file relative to the directory of the file that names it, inside the
        checkout: a configured path that left it would have featcheck read (and quote) any
        file of the machine. A baseline elsewhere is the user's to name, with `--baseline`."""
        value = table.get("baseline")
        if value is None:
            return None
        at = (*self.prefix, "baseline")
        if not isinstance(value, str) or not value.strip() or "\x00" in value:
            raise self.error("`baseline` must be the path of a file", at)
        directory = self.doc.path.parent
        if self.checkout is not None and not configured_path_stays_inside(
            directory, value, self.checkout
        ):
            raise self.error(
                f"`baseline` names `{printable(value)}`, outside the checkout: a configured "
                "baseline lies inside it (name one elsewhere with --baseline PATH)",
                at,
            )
        return directory / value

    def strings(self, table: dict[str, Any], key: str, within: KeyPath | None = None) -> list[str]:
        """The non-empty strings of the array `key` (none where it is not set)."""
        path = (*(self.prefix if within is None else within), key)
        value = table.get(key, [])
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

    def code(self, text: str, key: str, path: KeyPath, *, at_key: bool = False) -> str:
        """The rule code `text` names (`*` too in `allow`), else an error at `path`."""
        code = (
            ANY_CODE if (key, text) == ("allow", ANY_CODE) else canonical_code(text, self.catalogue)
        )
        if code is None:
            message = f"unknown rule `{text}` in `{key}` (see `featcheck rules`)"
            raise self.error(message, path, at_key=at_key)
        return code

    def codes(self, table: dict[str, Any], key: str) -> list[str]:
        texts = enumerate(self.strings(table, key))
        return [self.code(text, key, (*self.prefix, key, index)) for index, text in texts]

    def severities(self, table: dict[str, Any]) -> dict[str, Severity]:
        path = (*self.prefix, "severity")
        value = table.get("severity", {})
        if not isinstance(value, dict):
            raise self.error(
                '`severity` must be a table of rule = "error" | "warning" | "info"', path
            )
        result: dict[str, Severity] = {}
        for name, level in value.items():
            code = self.code(name, "severity", (*path, name), at_key=True)
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
                self.known((key,), _CONFIGURATION_KEYS, "a `configurations` entry", at)
                if key != "features" and not isinstance(item, bool):
                    raise self.error(f"`{key}` must be true or false", (*at, key))
            features = self.strings(entry, "features", at)
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
        value = table.get("allow", [])
        if not isinstance(value, list):
            raise self.error("`allow` must be an array of tables ([[allow]] entries)", path)
        return tuple(self.allow(item, (*path, index)) for index, item in enumerate(value))

    def allow(self, item: Any, path: KeyPath) -> Allow:
        if not isinstance(item, dict):
            raise self.error("an `allow` entry must be a table", path)
        self.known(item, _ALLOW_KEYS, f"an `allow` entry of {self.section}", path)
        for key, value in item.items():
            if not isinstance(value, str):
                raise self.error(f"`{key}` of an `allow` entry must be a string", (*path, key))
        if "code" not in item:
            raise self.error(
                'an `allow` entry needs `code` (a rule code or name, or "*")', path, at_key=True
            )
        code = self.code(item["code"].strip(), "allow", (*path, "code"))
        if code == UNUSED_SUPPRESSION.code:
            raise self.error(FC900_NOT_ALLOWED, (*path, "code"))
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
        if self.member is not None and fields["member"] not in (None, self.member):
            raise self.error(
                f"this `allow` entry is in {self.member}'s manifest and applies only to "
                f"{self.member}; move it to the workspace configuration",
                (*path, "member"),
            )
        return Allow(
            code=code,
            reason=reason,
            crate=fields["crate"],
            member=fields["member"] if self.member is None else self.member,
            target=fields["target"],
            origin=self.origin(path),
        )
