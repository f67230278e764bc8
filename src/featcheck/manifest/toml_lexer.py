"""The lexical pieces of TOML that featcheck reads by hand: strings, comments and lines.

tomlkit parses and edits manifests but says where nothing is written; `featcheck.manifest.spans`
(positions of keys and values) and the `# featcheck: allow(...)` comments both need to know where
a string ends and where a comment starts. Both use this one lexer, so that a `#` inside a string
is never a comment in one place and text in the other.

Columns count characters, 1-based; a byte order mark at the start of the text is not counted.
"""

from __future__ import annotations

import re
from typing import NamedTuple


class LexError(ValueError):
    """Text the lexer cannot follow: `offset` is where the problem is, `stop` where it gave up."""

    def __init__(self, message: str, offset: int, stop: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.offset = offset
        self.stop = offset if stop is None else stop


# Single character classes repeated: linear time, no backtracking.
_BASIC_CHARS = re.compile(r'[^"\\\n]*')
_MULTILINE_BASIC_CHARS = re.compile(r'[^"\\]*')
_NEWLINE = re.compile("\n")

_SIMPLE_ESCAPES = {
    "b": "\b",
    "t": "\t",
    "n": "\n",
    "f": "\f",
    "r": "\r",
    "e": "\x1b",
    '"': '"',
    "\\": "\\",
}
_HEX_ESCAPE_LENGTHS = {"x": 2, "u": 4, "U": 8}
_HEX_DIGITS = frozenset("0123456789abcdefABCDEF")


def first_offset(text: str) -> int:
    """Where the text proper starts: past a byte order mark."""
    return 1 if text.startswith("\ufeff") else 0


def line_starts(text: str) -> list[int]:
    """Offsets where each line starts; the first skips a byte order mark."""
    return [first_offset(text), *(newline.end() for newline in _NEWLINE.finditer(text))]


def string_end(text: str, pos: int) -> int:
    """Offset just past the string (basic or literal, single- or multi-line) starting at pos;
    LexError for one that does not end (`stop`: the end of the text, or the newline a
    single-line string ran into)."""
    if text[pos] == "'":
        return literal_string_end(text, pos)
    return basic_string_end(text, pos)


def basic_string_end(text: str, pos: int) -> int:
    """Offset just past the basic string (either kind) starting at pos."""
    if text.startswith('"""', pos):
        start, pos = pos, pos + 3
        while True:
            match = _MULTILINE_BASIC_CHARS.match(text, pos)
            assert match is not None
            pos = match.end()
            if pos >= len(text):
                raise LexError("unterminated string", start, len(text))
            if text[pos] == "\\":
                pos += 2
            elif text.startswith('"""', pos):
                return _past_extra_quotes(text, pos + 3, '"')
            else:
                pos += 1  # a lone quote inside the string
    pos += 1
    while True:
        match = _BASIC_CHARS.match(text, pos)
        assert match is not None
        pos = match.end()
        char = text[pos : pos + 1]
        if char == '"':
            return pos + 1
        if char != "\\":  # newline or end of text
            raise LexError("unterminated string", pos)
        pos += 2  # the escape's first character can never end the string


def literal_string_end(text: str, pos: int) -> int:
    """Offset just past the literal string (either kind) starting at pos."""
    if text.startswith("'''", pos):
        close = text.find("'''", pos + 3)
        if close < 0:
            raise LexError("unterminated string", pos, len(text))
        return _past_extra_quotes(text, close + 3, "'")
    close = text.find("'", pos + 1)
    newline = text.find("\n", pos + 1, len(text) if close < 0 else close)
    if close < 0 or newline >= 0:
        raise LexError("unterminated string", pos, newline if newline >= 0 else len(text))
    return close + 1


def _past_extra_quotes(text: str, pos: int, quote: str) -> int:
    '''Step over up to two quotes that end a multi-line string's content: TOML lets
    `"""a""""` hold `a"` (the delimiter is the last three quotes).'''
    for _ in range(2):
        if text[pos : pos + 1] != quote:
            break
        pos += 1
    return pos


def decode_basic(text: str, start: int, end: int) -> str:
    """Decode the escapes of the single-line basic string text[start:end] (without quotes)."""
    parts: list[str] = []
    pos = start
    while True:
        backslash = text.find("\\", pos, end)
        if backslash < 0:
            parts.append(text[pos:end])
            return "".join(parts)
        parts.append(text[pos:backslash])
        code = text[backslash + 1 : backslash + 2]
        pos = backslash + 2
        if code in _SIMPLE_ESCAPES:
            parts.append(_SIMPLE_ESCAPES[code])
            continue
        length = _HEX_ESCAPE_LENGTHS.get(code, 0)
        digits = text[pos : pos + length]
        if not length or len(digits) != length or not set(digits) <= _HEX_DIGITS:
            raise LexError("invalid escape sequence", backslash)
        code_point = int(digits, 16)
        if code_point > 0x10FFFF or 0xD800 <= code_point <= 0xDFFF:
            raise LexError("escape is not a Unicode scalar value", backslash)
        parts.append(chr(code_point))
        pos += length


class Comment(NamedTuple):
    """A TOML comment: where its `#` is and its text (from `#` to the end of the line)."""

    line: int
    column: int
    text: str


def scan_comments(text: str) -> list[Comment]:
    """Every comment of a TOML document; `#` inside strings (of any kind) does not count.
    Trusts `text` to be valid TOML (parse it first): a string that does not end runs to the end
    of its line (single-line) or of the text (multi-line)."""
    comments: list[Comment] = []
    pos = first_offset(text)
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
            try:
                stop = string_end(text, pos)
            except LexError as error:
                stop = error.stop
            newlines = text.count("\n", pos, stop)
            if newlines:
                line += newlines
                line_start = text.rfind("\n", pos, stop) + 1
            pos = stop
        else:
            pos += 1
    return comments
