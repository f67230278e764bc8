"""The comments of a TOML document, with their places: where `# featcheck: allow(...)`
suppressions are read from (tomlkit keeps comments but reports no line numbers)."""

from __future__ import annotations

from dataclasses import dataclass


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
