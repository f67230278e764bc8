"""Source positions for the keys and values of a TOML document, which tomlkit does not give:
`index_spans` makes one linear pass over the text and maps every key path to where its key and
its value are written.

The scanner trusts its input to be valid TOML (callers parse it first, and the parser words a
syntax error far better): some invalid documents are indexed without complaint. Whatever the
input, it never loops without consuming text and fails with nothing but `ValueError`.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from typing import NamedTuple, TypeAlias

from featcheck.manifest.toml_lexer import (
    LexError,
    basic_string_end,
    decode_basic,
    line_starts,
    literal_string_end,
    string_end,
)

KeyPath: TypeAlias = tuple[str | int, ...]
"""Where a value sits: table keys are ``str``, array item indexes are ``int``."""


class Span(NamedTuple):
    """A region of the text: 1-based, the end just past its last character. Columns count code
    points; a byte order mark at the start of the text is not counted."""

    line: int
    column: int
    end_line: int
    end_column: int


class Entry(NamedTuple):
    """Where one key path is defined. `key`: the key (or the last segment of a table header);
    for an array item the item itself, for an item of an array of tables the whole
    `[[header]]`. `value`: the whole value (a string with its quotes, an array with its
    brackets, an inline table); None for a table made by a header or by a dotted key."""

    key: Span
    value: Span | None


def index_spans(text: str) -> dict[KeyPath, Entry]:
    """Every key path `text` defines, in document order; where a path appears more than once
    (legal only for implicit tables) the first wins. ValueError where it is not TOML."""
    return _Scanner(text).scan()


def declaration_end(spans: dict[KeyPath, Entry], path: KeyPath) -> Span:
    """Where the declaration at `path` ends: the span of its key path, or of one inside it,
    that ends last (a `[dependencies.x]` table's last key, an inline table's `}`)."""
    inside = [e.value or e.key for p, e in spans.items() if p[: len(path)] == path]
    return max(inside, key=lambda s: (s.end_line, s.end_column))


# Valid nesting is never this deep; stopping here turns hostile input into a
# ValueError well before Python's recursion limit could raise RecursionError.
_MAX_DEPTH = 100

# Every pattern is a single character class repeated: it matches in linear time
# and cannot backtrack, while running far faster than a Python-level loop.
_BLANK = re.compile(r"[ \t]*")
_BLANK_AND_NEWLINES = re.compile(r"[ \t\r\n]*")
BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")  # also how cargo/ and probe/ write a key bare
# Numbers, booleans, inf/nan and date-times are made only of these characters
# (the space a date-time may contain is handled separately).
_SCALAR = re.compile(r"[A-Za-z0-9_+\-.:]+")
_FULL_DATE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")

# Holds a value's slot in document order until its span is known. Each one is
# replaced once the value is read; if reading fails, the whole dict is dropped.
_PLACEHOLDER = Entry(Span(0, 0, 0, 0), None)


class _Scanner:
    """One pass over one document; ``pos`` only ever moves forward."""

    def __init__(self, text: str) -> None:
        self._text = text
        self._line_starts = line_starts(text)
        self._pos = self._line_starts[0]
        self._entries: dict[KeyPath, Entry] = {}
        # How many items each array of tables has so far, so that headers
        # below ``[[bin]]`` resolve into its latest item.
        self._table_array_sizes: dict[KeyPath, int] = {}

    def scan(self) -> dict[KeyPath, Entry]:
        table: KeyPath = ()
        try:
            while True:
                self._skip_blank_lines()
                if self._pos >= len(self._text):
                    return self._entries
                if self._text[self._pos] == "[":
                    table = self._header()
                else:
                    self._keyval(table, depth=0)
                self._skip_blank()
                self._skip_comment()
                if self._pos < len(self._text) and self._text[self._pos] not in "\r\n":
                    raise self._error("expected the end of the line")
        except LexError as error:
            raise self._error(error.message, error.offset) from None

    def _location(self, offset: int) -> tuple[int, int]:
        line = bisect_right(self._line_starts, offset)
        return line, offset - self._line_starts[line - 1] + 1

    def _span(self, start: int, end: int) -> Span:
        return Span(*self._location(start), *self._location(end))

    def _error(self, message: str, offset: int | None = None) -> ValueError:
        line, column = self._location(self._pos if offset is None else offset)
        return ValueError(f"line {line}, column {column}: {message}")

    def _peek(self, length: int = 1) -> str:
        return self._text[self._pos : self._pos + length]

    def _expect(self, char: str) -> None:
        if self._peek() != char:
            raise self._error(f"expected {char!r}")
        self._pos += 1

    def _define(self, path: KeyPath, key: Span) -> None:
        # First appearance wins: later ones can only re-open implicit tables.
        self._entries.setdefault(path, Entry(key, None))

    def _define_value(self, path: KeyPath, key: Span | None, depth: int) -> None:
        """Read the value at `path` (`key` None: an array item, its own key). A new path is
        claimed before its value is read: the dict stays in document order (an inline table or
        array ahead of its entries)."""
        is_new = path not in self._entries
        if is_new:
            self._entries[path] = _PLACEHOLDER
        value = self._value(path, depth)
        if is_new:
            self._entries[path] = Entry(key or value, value)

    def _skip_blank(self) -> None:
        match = _BLANK.match(self._text, self._pos)
        assert match is not None  # a pattern that can match nothing always matches
        self._pos = match.end()

    def _skip_comment(self) -> None:
        if self._peek() == "#":
            newline = self._text.find("\n", self._pos)
            self._pos = len(self._text) if newline < 0 else newline

    def _skip_blank_lines(self) -> None:
        """Skip whitespace, newlines and comments (between expressions and
        inside arrays and, as TOML 1.1 and tomlkit allow, inline tables)."""
        while True:
            match = _BLANK_AND_NEWLINES.match(self._text, self._pos)
            assert match is not None
            self._pos = match.end()
            if self._peek() != "#":
                return
            self._skip_comment()

    def _simple_key(self) -> tuple[str, Span]:
        start = self._pos
        char = self._peek()
        if self._peek(3) in ('"""', "'''"):
            raise self._error("a key cannot be a multi-line string")
        if char == '"':
            body_end = basic_string_end(self._text, start)
            name = decode_basic(self._text, start + 1, body_end - 1)
        elif char == "'":
            body_end = literal_string_end(self._text, start)
            name = self._text[start + 1 : body_end - 1]
        else:
            match = BARE_KEY.match(self._text, start)
            if match is None:
                raise self._error("expected a key")
            body_end = match.end()
            name = match.group()
        self._pos = body_end
        return name, self._span(start, body_end)

    def _dotted_key(self) -> list[tuple[str, Span]]:
        segments = [self._simple_key()]
        while True:
            self._skip_blank()
            if self._peek() != ".":
                return segments
            self._pos += 1
            self._skip_blank()
            segments.append(self._simple_key())

    def _header(self) -> KeyPath:
        """Read ``[a.b]`` or ``[[a.b]]`` and return the table it opens."""
        start = self._pos
        is_array = self._peek(2) == "[["
        self._pos += 2 if is_array else 1
        self._skip_blank()
        segments = self._dotted_key()
        for _ in range(2 if is_array else 1):
            self._expect("]")
        header = self._span(start, self._pos)

        path: KeyPath = ()
        for name, key in segments[:-1]:
            path = (*path, name)
            self._define(path, key)
            # A header below an array of tables extends its latest item.
            size = self._table_array_sizes.get(path)
            if size is not None:
                path = (*path, size - 1)
        name, key = segments[-1]
        path = (*path, name)
        self._define(path, key)
        if is_array:
            index = self._table_array_sizes.get(path, 0)
            self._table_array_sizes[path] = index + 1
            path = (*path, index)
            self._define(path, header)
        return path

    def _keyval(self, table: KeyPath, depth: int) -> None:
        segments = self._dotted_key()
        path = table
        for name, key in segments[:-1]:
            path = (*path, name)
            self._define(path, key)
        name, key = segments[-1]
        path = (*path, name)
        self._skip_blank()
        self._expect("=")
        self._skip_blank()
        self._define_value(path, key, depth)

    def _value(self, path: KeyPath, depth: int) -> Span:
        if depth > _MAX_DEPTH:
            raise self._error("values nested too deeply")
        start = self._pos
        char = self._peek()
        if char in ("[", "{"):
            self._array_or_inline_table(path, depth, "]" if char == "[" else "}")
        elif char in ('"', "'"):
            self._pos = string_end(self._text, start)
        else:
            self._pos = self._scalar_end()
        return self._span(start, self._pos)

    def _array_or_inline_table(self, path: KeyPath, depth: int, close: str) -> None:
        self._pos += 1  # "[" or "{"
        index = 0
        while True:
            self._skip_blank_lines()
            if self._peek() == close:
                break
            if close == "}":
                self._keyval(path, depth + 1)
            else:
                self._define_value((*path, index), None, depth + 1)
                index += 1
            self._skip_blank_lines()
            if self._peek() == ",":
                self._pos += 1
            elif self._peek() != close:
                raise self._error(f"expected ',' or {close!r}")
        self._pos += 1  # the closing bracket

    def _scalar_end(self) -> int:
        match = _SCALAR.match(self._text, self._pos)
        if match is None:
            raise self._error("expected a value")
        end = match.end()
        # "1979-05-27 07:32:00": a date-time may separate date and time with a
        # space; only a full date directly followed by " <digit>" is one.
        if (
            _FULL_DATE.fullmatch(match.group())
            and self._text[end : end + 1] == " "
            and self._text[end + 1 : end + 2].isdigit()
        ):
            time = _SCALAR.match(self._text, end + 1)
            assert time is not None  # it starts with a digit
            end = time.end()
        return end
