"""Reading a rule spec from a TOML table, strictly: a built-in file or a project's `[[rule]]`
(see `spec`; the keys and what each means: docs/writing-rules.md)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import fields
from typing import Any

from featcheck.rules.spec import (
    CAPABILITIES,
    CrateMatch,
    HandledBy,
    KeyPath,
    Kind,
    Rule,
    RuleDoc,
    SelectedBy,
    SpecError,
    TargetScope,
    ThirdParty,
    UsedWhen,
)
from featcheck.semantics import semver
from featcheck.severity import Severity

BUILTIN_CODE = re.compile(r"FC[0-9]{3}")
"""Built-in codes; the FC namespace is featcheck's alone."""
USER_CODE = re.compile(r"[A-Z]{2,10}[0-9]{1,4}")
"""User rule codes: a team prefix and a number, e.g. `ACME001` (not starting with FC)."""
FEATURE = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_+.-]{0,63}")
_NAME = re.compile(r"[a-z][a-z0-9]*(?:-[a-z0-9]+)*")
_TARGET_FEATURE = re.compile(r"[a-z][a-z0-9._]*")  # as rustc prints them: avx2, sse4.2
_CRATE = re.compile(r"[A-Za-z][A-Za-z0-9_-]{0,63}")
_TRIPLE_PATTERN = re.compile(r"[A-Za-z0-9_.*?-]{1,80}")

_KEYS = (
    "code",
    "name",
    "severity",
    "summary",
    "consequence",
    "crates",
    "feature",
    "used-when",
    "targets",
    "target-needs",
    "unless-target-features",
    "requires",
    "also-add",
    "enabled",
    "kind",
    "doc",
)
_CRATE_KEYS = ("name", "versions", "feature")
_USED_KEYS = (
    "built",
    "selected-by",
    "direct-dependency",
    "reachable",
    "unless-handled-by",
    "unless-dependency-has",
    "unless-dependent",
    "unless-built-with",
    "third-party",
)
_SELECTED_KEYS = ("feature", "crates", "means")
_REACHABLE_KEYS = ("avoiding",)
_HANDLED_KEYS = ("crate", "feature")
_THIRD_PARTY_KEYS = ("severity", "own")
_DOC_KEYS = tuple(f.name.replace("_", "-") for f in fields(RuleDoc))
"""`[doc]`'s sections, `references` last."""


def parse_rule(table: Any, *, builtin: bool) -> Rule:
    """The rule a TOML table describes; raises SpecError for anything else."""
    if not isinstance(table, Mapping):
        raise SpecError("a rule must be a table ([[rule]] entry)")
    known_keys(table, _KEYS, (), "a rule")
    kind = _kind(table)
    # A rule of kind "present" without a feature is about the crate being built at all.
    needed = ("code", "name", "crates", *(() if kind is Kind.PRESENT else ("feature",)))
    for required in needed:
        if required not in table:
            raise SpecError(f"a rule needs `{required}`", (), at_key=True)
    code = _code(table, builtin=builtin)
    name = string_value(table, "name", ())
    if not _NAME.fullmatch(name):
        raise SpecError("a rule name is kebab-case, e.g. `regex-without-perf`", ("name",))
    feature = feature_value(table, "feature", ()) if "feature" in table else ""
    crates = _crates(table)
    severity = _severity(table, ()) if "severity" in table else Severity.WARNING
    built = "with" if kind is Kind.PRESENT else "without"
    named = " or ".join(c.name for c in crates)
    default = f"{named} is built {built} `{feature}`" if feature else f"{named} is in the build"
    summary = string_value(table, "summary", ()) if "summary" in table else default
    return Rule(
        code=code,
        name=name,
        severity=severity,
        summary=summary,
        crates=crates,
        feature=feature,
        consequence=string_value(table, "consequence", ()) if "consequence" in table else "",
        kind=kind,
        used_when=_used_when(table.get("used-when")),
        targets=TargetScope(
            triples=strings_value(
                table, "targets", (), _TRIPLE_PATTERN, "a target triple or pattern"
            ),
            needs=_capabilities(table),
            unless_features=strings_value(
                table, "unless-target-features", (), _TARGET_FEATURE, "a target feature"
            ),
        ),
        requires=strings_value(table, "requires", (), FEATURE, "a feature name"),
        companions=strings_value(table, "also-add", (), FEATURE, "a feature name"),
        enabled_by_default=bool_value(table, "enabled", (), default=True),
        doc=_doc(table.get("doc")),
        builtin=builtin,
    )


def _code(table: Mapping[str, Any], *, builtin: bool) -> str:
    code = string_value(table, "code", ())
    if builtin and not BUILTIN_CODE.fullmatch(code):
        raise SpecError("a built-in rule's code is FC and three digits", ("code",))
    if not builtin and code.upper().startswith("FC"):
        raise SpecError(
            "codes starting with FC are featcheck's own; give your rules another prefix "
            "(e.g. ACME001)",
            ("code",),
        )
    if not builtin and not USER_CODE.fullmatch(code):
        raise SpecError(
            "a rule code is 2-10 capital letters and 1-4 digits, e.g. ACME001", ("code",)
        )
    return code


def _kind(table: Mapping[str, Any]) -> Kind:
    """`kind`: `missing` (the default) or `present`; what `also-add` and `requires` mean
    (features a fix adds) has no sense for a feature that should be off."""
    text = string_value(table, "kind", ()) if "kind" in table else Kind.MISSING.value
    try:
        kind = Kind(text)
    except ValueError:
        raise SpecError('`kind` is "missing" or "present"', ("kind",)) from None
    if kind is Kind.PRESENT and "also-add" in table:
        raise SpecError(
            '`also-add` names features a fix adds: not for kind = "present"', ("also-add",)
        )
    return kind


def _crates(table: Mapping[str, Any]) -> tuple[CrateMatch, ...]:
    value = table["crates"]
    if not isinstance(value, list) or not value:
        raise SpecError("`crates` must be a non-empty array of crate names or tables", ("crates",))
    crates: list[CrateMatch] = []
    for index, item in enumerate(value):
        path: KeyPath = ("crates", index)
        if isinstance(item, str):
            item = {"name": item}
        elif not isinstance(item, Mapping):
            raise SpecError("a crate is a name or a table { name, versions, feature }", path)
        known_keys(item, _CRATE_KEYS, path, "a crate entry", ("name",))
        name = string_value(item, "name", path)
        if not _CRATE.fullmatch(name):
            raise SpecError(f"not a crate name: {shown(name)}", (*path, "name"))
        versions = None
        if "versions" in item:
            versions = string_value(item, "versions", path)
            if not semver.is_requirement(versions):
                raise SpecError(
                    f"`versions` is not a cargo version requirement: {shown(versions)}",
                    (*path, "versions"),
                )
        feature = feature_value(item, "feature", path) if "feature" in item else None
        crates.append(CrateMatch(name, versions, feature))
    return tuple(crates)


def _used_when(value: Any) -> UsedWhen:
    path: KeyPath = ("used-when",)
    if value is None:
        return UsedWhen(reachable=True)
    if not isinstance(value, Mapping) or not value:
        raise SpecError(
            "`used-when` must be a table of one or more of: " + ", ".join(_USED_KEYS), path
        )
    known_keys(value, _USED_KEYS, path, "`used-when`")
    selected_by = None
    if "selected-by" in value:
        selected_by = _selected_by(value["selected-by"], (*path, "selected-by"))
    avoiding: tuple[str, ...] = ()
    raw = value.get("reachable")  # true, or a table { avoiding }
    reachable = isinstance(raw, Mapping) or bool_value(value, "reachable", path, default=False)
    if isinstance(raw, Mapping):
        known_keys(raw, _REACHABLE_KEYS, (*path, "reachable"), "`reachable`")
        avoiding = strings_value(raw, "avoiding", (*path, "reachable"), _CRATE, "a crate name")
    used = UsedWhen(
        built=bool_value(value, "built", path, default=False),
        selected_by=selected_by,
        direct=bool_value(value, "direct-dependency", path, default=False),
        reachable=reachable,
        avoiding=avoiding,
        handled_by=_handled_by(value.get("unless-handled-by"), (*path, "unless-handled-by")),
        unless_dependency_has=_handled_by(
            value.get("unless-dependency-has"), (*path, "unless-dependency-has")
        ),
        unless_dependent=strings_value(value, "unless-dependent", path, _CRATE, "a crate name"),
        unless_built_with=strings_value(
            value, "unless-built-with", path, FEATURE, "a feature name"
        ),
        third_party=_third_party(value.get("third-party"), (*path, "third-party")),
    )
    if not (used.built or used.selected_by or used.direct or used.reachable):
        raise SpecError("`used-when` turns every condition off: the rule could never fire", path)
    return used


def _handled_by(value: Any, path: KeyPath) -> tuple[HandledBy, ...]:
    """A list of { crate, feature } tables, at `path` (`unless-handled-by`,
    `unless-dependency-has`)."""
    if value is None:
        return ()
    key = f"`{path[-1]}`"
    if not isinstance(value, list) or not value:
        raise SpecError(f"{key} must be a list of tables {{ crate, feature }}", path)
    handled: list[HandledBy] = []
    for index, item in enumerate(value):
        where = (*path, index)
        if not isinstance(item, Mapping):
            raise SpecError(f"an {key} entry is a table {{ crate, feature }}", where)
        known_keys(item, _HANDLED_KEYS, where, f"an {key} entry", _HANDLED_KEYS)
        crate = string_value(item, "crate", where)
        if not _CRATE.fullmatch(crate):
            raise SpecError(f"not a crate name: {shown(crate)}", (*where, "crate"))
        many = isinstance(item.get("feature"), list)
        features = strings_value(item, "feature", where, FEATURE, "a feature name") if many else ()
        handled.append(HandledBy(crate, features or (feature_value(item, "feature", where),)))
    return tuple(handled)


def _third_party(value: Any, path: KeyPath) -> ThirdParty | None:
    if value is None:
        return None
    if not isinstance(value, Mapping):
        raise SpecError("`third-party` must be a table { severity, own }", path)
    known_keys(value, _THIRD_PARTY_KEYS, path, "`third-party`", ("severity",))
    severity = _severity(value, path)
    return ThirdParty(severity, strings_value(value, "own", path, _CRATE, "a crate name"))


def _severity(table: Mapping[str, Any], path: KeyPath) -> Severity:
    try:
        return Severity.parse(string_value(table, "severity", path))
    except ValueError as error:
        raise SpecError(str(error), (*path, "severity")) from None


def _selected_by(value: Any, path: KeyPath) -> SelectedBy:
    if not isinstance(value, Mapping):
        raise SpecError("`selected-by` must be a table { feature, crates, means }", path)
    known_keys(value, _SELECTED_KEYS, path, "`selected-by`", ("feature", "crates"))
    crates = strings_value(value, "crates", path, _CRATE, "a crate name")
    if not crates:
        raise SpecError("`crates` of `selected-by` must not be empty", (*path, "crates"))
    return SelectedBy(
        feature=feature_value(value, "feature", path),
        crates=crates,
        means=string_value(value, "means", path) if "means" in value else "",
    )


def _capabilities(table: Mapping[str, Any]) -> tuple[str, ...]:
    needs = strings_value(table, "target-needs", (), _NAME, "a capability")
    for index, capability in enumerate(needs):
        if capability not in CAPABILITIES:
            raise SpecError(
                f"unknown target capability `{capability}` (expected one of: "
                f"{', '.join(CAPABILITIES)})",
                ("target-needs", index),
            )
    return needs


def _doc(value: Any) -> RuleDoc:
    path: KeyPath = ("doc",)
    if value is None:
        return RuleDoc()
    if not isinstance(value, Mapping):
        raise SpecError("`doc` must be a table of documentation sections", path)
    known_keys(value, _DOC_KEYS, path, "`doc`")
    text = {
        key.replace("-", "_"): string_value(value, key, path, lines=True)
        for key in _DOC_KEYS[:-1]
        if key in value
    }
    raw = value.get("references", [])
    if not isinstance(raw, list):
        raise SpecError("`references` must be an array of non-empty strings", (*path, "references"))
    references = tuple(
        text_value(item, "a reference", (*path, "references", index))
        for index, item in enumerate(raw)
    )
    return RuleDoc(**text, references=references)


# The values a spec is made of, each read strictly: a `SpecError` names the key path of anything
# else, so that the caller can point at the file, line and column.


def shown(value: object) -> str:
    """`value` quoted for an error message, cut to 60 characters: a name or number of any size
    still gives one readable line."""
    text = repr(value)
    return text if len(text) <= 60 else f"{text[:59]}…"


def known_keys(
    table: Mapping[str, Any],
    known: tuple[str, ...],
    path: KeyPath,
    what: str,
    required: tuple[str, ...] = (),
) -> None:
    for key in table:
        if key not in known:
            raise SpecError(
                f"unknown key `{key}` in {what} (expected one of: {', '.join(known)})",
                (*path, key),
                at_key=True,
            )
    for key in required:
        if key not in table:
            raise SpecError(f"{what} needs `{key}`", path, at_key=True)


def string_value(table: Mapping[str, Any], key: str, path: KeyPath, *, lines: bool = False) -> str:
    return text_value(table[key], f"`{key}`", (*path, key), lines=lines)


def text_value(value: Any, what: str, path: KeyPath, *, lines: bool = False) -> str:
    """A non-empty string of printable characters (and line breaks where `lines`): the text
    is the checkout's and reaches terminals (`featcheck rules`, reports)."""
    if not isinstance(value, str) or not value.strip():
        raise SpecError(f"{what} must be a non-empty string", path)
    if (value.replace("\n", "") if lines else value).isprintable():
        return value.strip()  # every rule's docs are read on each run: no loop for them
    for character in value:
        if not (character.isprintable() or (lines and character == "\n")):
            kind = "line breaks" if character == "\n" else "control or format characters"
            raise SpecError(f"{what} must not hold {kind} (found {character!r})", path)
    return value.strip()


def bool_value(table: Mapping[str, Any], key: str, path: KeyPath, *, default: bool) -> bool:
    value = table.get(key, default)
    if not isinstance(value, bool):
        raise SpecError(f"`{key}` must be true or false", (*path, key))
    return value


def feature_value(table: Mapping[str, Any], key: str, path: KeyPath) -> str:
    value = string_value(table, key, path)
    if not FEATURE.fullmatch(value):
        raise SpecError(f"`{key}` is not a feature name: {shown(value)}", (*path, key))
    return value


def strings_value(
    table: Mapping[str, Any], key: str, path: KeyPath, pattern: re.Pattern[str], what: str
) -> tuple[str, ...]:
    value = table.get(key, [])
    if not isinstance(value, list):
        raise SpecError(f"`{key}` must be an array of strings", (*path, key))
    for index, item in enumerate(value):
        if not isinstance(item, str) or not pattern.fullmatch(item.strip()):
            raise SpecError(
                f"each of `{key}` must be {what}; got {shown(item)}", (*path, key, index)
            )
    return tuple(dict.fromkeys(item.strip() for item in value))
