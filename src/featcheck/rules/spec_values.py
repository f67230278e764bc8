"""The values a rule spec is made of, each read strictly: a `SpecError` names the key path of
anything else, so that the caller can point at the file, line and column (rules/load.py)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

KeyPath = tuple[str | int, ...]

FEATURE = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_+.-]{0,63}")


@dataclass
class SpecError(Exception):
    """A rule spec that is not valid, at `path` (relative to the rule's table)."""

    message: str
    path: KeyPath = ()
    at_key: bool = False
    """Point at the key rather than its value (unknown or missing keys)."""

    def __str__(self) -> str:
        return self.message


def shown(value: object, limit: int = 60) -> str:
    """`value` quoted for an error message, cut to `limit` characters: a name or number of any
    size still gives one readable line."""
    text = repr(value)
    return text if len(text) <= limit else f"{text[: limit - 1]}…"


def known_keys(table: Mapping[str, Any], known: tuple[str, ...], path: KeyPath, what: str) -> None:
    for key in table:
        if key not in known:
            raise SpecError(
                f"unknown key `{key}` in {what} (expected one of: {', '.join(known)})",
                (*path, key),
                at_key=True,
            )


def string_value(table: Mapping[str, Any], key: str, path: KeyPath, *, lines: bool = False) -> str:
    return text_value(table[key], f"`{key}`", (*path, key), lines=lines)


def text_value(value: Any, what: str, path: KeyPath, *, lines: bool = False) -> str:
    """A non-empty string of printable characters (and line breaks where `lines`): the text
    is the checkout's and reaches terminals (`featcheck rules`, reports)."""
    if not isinstance(value, str) or not value.strip():
        raise SpecError(f"{what} must be a non-empty string", path)
    for character in value:
        if not (character.isprintable() or (lines and character == "\n")):
            kind = "line breaks" if character == "\n" else "control or format characters"
            raise SpecError(f"{what} must not hold {kind} (found {character!r})", path)
    return value.strip()


def bool_value(table: Mapping[str, Any], key: str, path: KeyPath, *, default: bool) -> bool:
    if key not in table:
        return default
    value = table[key]
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
    if key not in table:
        return ()
    value = table[key]
    if not isinstance(value, list):
        raise SpecError(f"`{key}` must be an array of strings", (*path, key))
    for index, item in enumerate(value):
        if not isinstance(item, str) or not pattern.fullmatch(item.strip()):
            raise SpecError(f"`{key}` must hold {what}s; got {shown(item)}", (*path, key, index))
    return tuple(dict.fromkeys(item.strip() for item in value))
