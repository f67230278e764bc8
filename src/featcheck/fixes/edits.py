"""Apply an Edit to a manifest's text, touching nothing but the edited declaration.

Edits are made in the text at the positions the span index gives, so that every comment, quote
style, order and blank line stays as the user wrote it (a multi-line features array keeps its
indentation, trailing comma and commented-out items). tomlkit then checks the result: the new
document must parse and equal the old one with exactly the intended change, or the edit is
refused.
"""

from __future__ import annotations

import copy
import re
from typing import Any

import tomlkit
import tomlkit.exceptions

from featcheck.manifest.document import toml_lines
from featcheck.manifest.spans import Entry, KeyPath, Span, declaration_end, index_spans
from featcheck.manifest.toml_lexer import line_starts
from featcheck.report import Edit, table_key

_ANY_HEADER = re.compile(r"^\s*\[")
_DOTTED_DEPENDENCY_HEADER = re.compile(r"^\s*\[\s*dependencies\s*\.")
_DEFAULT_FEATURES_KEYS = ("default-features", "default_features")


class EditError(ValueError):
    """The edit cannot be made safely; the message says why."""


class _Text:
    """The manifest text with 1-based (line, column) <-> offset conversion."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.starts = line_starts(text)  # no byte order mark: apply_edit keeps it apart
        self.newline = "\r\n" if "\r\n" in text else "\n"

    def start(self, span: Span) -> int:
        return self.starts[span.line - 1] + span.column - 1

    def end(self, span: Span) -> int:
        return self.starts[span.end_line - 1] + span.end_column - 1

    def line_of(self, offset: int) -> tuple[int, int]:
        """(start, end) offsets of the line holding `offset`, end excluding the newline."""
        start = self.text.rfind("\n", 0, offset) + 1
        end = self.text.find("\n", offset)
        return start, len(self.text) if end < 0 else end


def _add_to_array(
    doc: _Text, spans: dict[KeyPath, Entry], path: KeyPath, new: tuple[str, ...]
) -> str:
    array = spans[path].value
    assert array is not None
    items = [spans[p] for p in spans if len(p) == len(path) + 1 and p[:-1] == path]
    # The quote character the array already uses, so an added item looks like its siblings.
    single = any(i.value is not None and doc.text[doc.start(i.value)] == "'" for i in items)
    quote = "'" if single else '"'
    rendered = [f"{quote}{f}{quote}" for f in new]
    text = doc.text
    if not items:
        open_bracket = doc.start(array)
        return text[: open_bracket + 1] + ", ".join(rendered) + text[open_bracket + 1 :]
    last = items[-1].value or items[-1].key
    last_end = doc.end(last)
    close = doc.end(array) - 1  # the `]`
    if array.line == array.end_line:
        return text[:last_end] + "".join(", " + r for r in rendered) + text[last_end:]
    # Multi-line: one item per line at the last item's indentation, keeping the comma style.
    line_start, _ = doc.line_of(doc.start(last))
    line = text[line_start:]
    indent = line[: len(line) - len(line.lstrip(" \t"))]
    between = re.sub(r"#[^\n]*", "", text[last_end:close])
    trailing_comma = "," in between
    close_line_start, _ = doc.line_of(close)
    if text[close_line_start:close].strip():
        raise EditError("the features array closes on a line with items; edit it by hand")
    nl, comma = doc.newline, "," if trailing_comma else ""
    block = f",{nl}".join(indent + r for r in rendered) + comma + nl
    if trailing_comma:
        return text[:close_line_start] + block + text[close_line_start:]
    return text[:last_end] + "," + text[last_end:close_line_start] + block + text[close_line_start:]


def _add_features(doc: _Text, spans: dict[KeyPath, Entry], edit: Edit) -> str:
    path = edit.declaration
    if (declaration := spans.get(path)) is None:
        raise EditError(f"cannot find {'.'.join(map(str, path))}")
    features_path = (*path, "features")
    if features_path in spans and spans[features_path].value is not None:
        return _add_to_array(doc, spans, features_path, edit.features)
    text = doc.text
    listed = "[" + ", ".join(f'"{f}"' for f in edit.features) + "]"
    value = declaration.value
    if value is not None:
        start, end = doc.start(value), doc.end(value)
        if text[start] == "{":
            inner = text[start + 1 : end - 1]
            if not inner.strip():
                return text[:start] + f"{{ features = {listed} }}" + text[end:]
            last = start + 1 + len(inner.rstrip())
            return text[:last] + f", features = {listed}" + text[last:]
        # `burn = "0.22"`: the version string becomes an inline table.
        return text[:start] + f"{{ version = {text[start:end]}, features = {listed} }}" + text[end:]
    # A [dependencies.burn] table or dotted keys: a new line after the declaration's last line.
    end_span = declaration_end(spans, path)
    _, line_end = doc.line_of(doc.end(end_span) - 1)
    key_line_start, _ = doc.line_of(doc.start(declaration.key))
    key_line = text[key_line_start : doc.end(declaration.key)].strip()
    dotted = "" if key_line.startswith("[") else f"{key_line}."
    return text[:line_end] + doc.newline + f"{dotted}features = {listed}" + text[line_end:]


def _remove_default_features(doc: _Text, spans: dict[KeyPath, Entry], edit: Edit) -> str:
    path = edit.declaration
    found = [(*path, k) for k in _DEFAULT_FEATURES_KEYS if (*path, k) in spans]
    if not found:
        raise EditError("no `default-features` key to remove")
    entry = spans[found[0]]
    assert entry.value is not None
    text = doc.text
    start, end = doc.start(entry.key), doc.end(entry.value)
    declaration = spans.get(path)
    if declaration is not None and declaration.value is not None:
        # Inside an inline table: take one neighbouring comma with it.
        if after := re.match(r"\s*,[ \t]*", text[end:]):
            return text[:start] + text[end + after.end() :]
        if before := re.search(r",\s*$", text[:start]):
            start = before.start()
        return text[:start] + text[end:]
    line_start, line_end = doc.line_of(start)
    rest = re.sub(r"^\s*(#.*)?$", "", text[end:line_end])
    prefix = text[line_start:start].strip()  # `burn.` for dotted keys
    if (prefix and not prefix.endswith(".")) or rest:
        raise EditError("`default-features` shares its line with other keys; edit it by hand")
    next_line = line_end + (2 if text[line_end : line_end + 2] == "\r\n" else 1)
    return text[:line_start] + text[min(next_line, len(text)) :]


def _array(edit: Edit) -> str:
    return "[" + ", ".join(f'"{f}"' for f in edit.features) + "]"


def _add_dependency(doc: _Text, edit: Edit) -> str:
    """The new line at the end of `[dependencies]`; where the manifest writes each dependency
    as a table of its own (`[dependencies.png]`, as cargo publishes manifests), a new such
    table after the last of them; else a new `[dependencies]` at the end."""
    key = edit.declaration[-1]
    lines = toml_lines(doc.text)
    if edit.declaration[0] == "target":
        platform = str(edit.declaration[1])
        quoted = "|".join(re.escape(q) for q in (f"'{platform}'", f'"{platform}"', platform))
        header = re.compile(rf"^\s*\[\s*target\s*\.\s*(?:{quoted})\s*\.\s*dependencies\s*\]")
        table = f"target.{table_key(platform)}.dependencies"
        return _add_line(doc, table, f"{key} = {edit.declared_value()}", header)
    if not any(_header("dependencies").match(line) for line in lines):
        dotted = [i for i, line in enumerate(lines) if _DOTTED_DEPENDENCY_HEADER.match(line)]
        if dotted:
            added = ["", f"[dependencies.{key}]", *edit.declared_pairs()]
            return _insert_in_table(lines, dotted[-1], added, doc.newline)
    return _add_line(doc, "dependencies", f"{key} = {edit.declared_value()}")


def _add_line(
    doc: _Text, table: str, added: str, header_line: re.Pattern[str] | None = None
) -> str:
    """`added` at the end of the manifest's `[table]` (its header matching `header_line`, where
    the table's name may be written more ways than one), else in a new one at the end."""
    lines = toml_lines(doc.text)
    matches = header_line or _header(table)
    header = next((i for i, line in enumerate(lines) if matches.match(line)), None)
    if header is not None:
        return _insert_in_table(lines, header, [added], doc.newline)
    text, nl = doc.text, doc.newline
    separator = "" if text.endswith("\n") or not text else nl
    return text + separator + nl + f"[{table}]" + nl + added + nl


def _header(table: str) -> re.Pattern[str]:
    return re.compile(rf"^\s*\[\s*{table}\s*\]\s*(#.*)?$")


def _insert_in_table(lines: list[str], header: int, added: list[str], nl: str) -> str:
    """The lines with `added` after the last line of the table whose header is at `header`."""
    end = header + 1
    while end < len(lines) and not _ANY_HEADER.match(lines[end]):
        end += 1
    if end < len(lines):  # comment lines right above the next header are that table's
        while end > header + 1 and lines[end - 1].lstrip().startswith("#"):
            end -= 1
    while end > header + 1 and not lines[end - 1].strip():
        end -= 1  # keep the blank lines before the next table where they are
    if not lines[end - 1].endswith("\n"):
        lines[end - 1] += nl
    lines[end:end] = [line + nl for line in added]
    return "".join(lines)


def _expected(data: dict[str, Any], edit: Edit) -> dict[str, Any]:
    """The document's values after the edit, to check the text edit against."""
    expected = copy.deepcopy(data)
    node: Any = expected
    for key in edit.declaration[:-1]:
        node = node.setdefault(key, {})
    key = edit.declaration[-1]
    if edit.adds_declaration:
        node[key] = edit.declared_table()
        return expected
    if edit.action == "add-feature-values":
        node[key] = [*node.get(key, ()), *edit.features]
        return expected
    value = node[key]
    if isinstance(value, str):
        value = node[key] = {"version": value}
    if edit.action == "add-features":
        value["features"] = [*value.get("features", []), *edit.features]
    else:
        for name in _DEFAULT_FEATURES_KEYS:
            value.pop(name, None)
    return expected


def apply_edit(text: str, edit: Edit) -> str:
    """The manifest text with `edit` made; raises EditError when it cannot be made safely."""
    if text.startswith("\ufeff"):  # a byte order mark (cargo accepts one) stays where it is
        return "\ufeff" + apply_edit(text[1:], edit)
    try:
        before = tomlkit.parse(text).unwrap()
        spans = index_spans(text)
    except (tomlkit.exceptions.TOMLKitError, ValueError) as error:
        raise EditError(f"cannot read the manifest: {error}") from None
    doc = _Text(text)
    if edit.action == "add-features":
        result = _add_features(doc, spans, edit)
    elif edit.action == "remove-default-features":
        result = _remove_default_features(doc, spans, edit)
    elif edit.action == "add-feature-values":
        # Values appended to a feature's array in `[features]`, or an optional dependency's
        # implicit feature written (`NAME = ["dep:NAME", ...]`, fixes/direct.py).
        entry = spans.get(edit.declaration)
        if entry is None:
            result = _add_line(doc, "features", f"{edit.declaration[-1]} = {_array(edit)}")
        elif entry.value is None or text[doc.start(entry.value)] != "[":
            raise EditError(f"cannot find the feature {edit.declaration[-1]} in [features]")
        else:
            result = _add_to_array(doc, spans, edit.declaration, edit.features)
    else:
        result = _add_dependency(doc, edit)
    try:
        after = tomlkit.parse(result).unwrap()
    except tomlkit.exceptions.TOMLKitError as error:
        raise EditError(f"the edit would break the manifest ({error})") from None
    if after != _expected(before, edit):
        raise EditError("the edit would change more than the declaration; edit it by hand")
    return result
