"""A Cargo.toml read once: its text, its tomlkit document, and where each key is written."""

from __future__ import annotations

import re
from functools import cached_property
from pathlib import Path
from typing import Any

from featcheck.boundary import MAX_MANIFEST_BYTES, decode_text, read_checkout_file
from featcheck.errors import FeatcheckError
from featcheck.manifest.spans import Entry, KeyPath, index_spans
from featcheck.toml_read import toml_data


class ManifestDocument:
    """A parsed manifest; `data` is plain Python values, `spans` gives positions. Not a
    dataclass (nor are the span index's records): cargo's configuration files are read before
    cargo starts (see audit.py), where that import would cost more than the whole read."""

    def __init__(self, path: Path, text: str, data: dict[str, Any]) -> None:
        self.path = path
        self.text = text
        self.data = data

    def __repr__(self) -> str:
        return f"ManifestDocument({str(self.path)!r})"

    @cached_property
    def spans(self) -> dict[KeyPath, Entry]:
        """Positions of every key path (computed on first use: most manifests need none)."""
        return index_spans(self.text)

    def line_text(self, line: int) -> str:
        """The text of a 1-based line, without its line ending (see `toml_lines`)."""
        lines = self.text.split("\n")
        return lines[line - 1].removesuffix("\r") if 0 < line <= len(lines) else ""

    def get(self, *keys: str) -> Any:
        node: Any = self.data
        for key in keys:
            if not isinstance(node, dict) or key not in node:
                return None
            node = node[key]
        return node


def toml_lines(text: str) -> list[str]:
    """`text` split where TOML ends a line (LF; CRLF keeps its CR), each line with its end.

    Not `str.splitlines`: that also breaks at NEL (U+0085), U+2028, form feeds and other
    characters a TOML comment or string may hold, which would shift every later line (a quote
    of the wrong line, an edit in the middle of a comment).
    """
    lines = text.split("\n")
    return [f"{line}\n" for line in lines[:-1]] + ([lines[-1]] if lines[-1] else [])


def read_manifest(path: Path, *, root: Path | None = None) -> ManifestDocument:
    """Read and parse a manifest; any problem becomes a one-line `path:line:col: message`.
    `root`: the checkout it belongs to, which a link on the way may not leave (boundary.py);
    None for a file of no checkout."""
    raw = read_checkout_file(path, path.name, MAX_MANIFEST_BYTES, root)  # featcheck.toml too
    return parse_text(path, decode_text(raw, path))


def parse_text(path: Path, text: str) -> ManifestDocument:
    """`text` (that of `path`) as a parsed TOML document, or a one-line FeatcheckError."""
    # Valid TOML by tomli (a twenty-fifth of tomlkit's time: a large workspace reads hundreds
    # of manifests); what it rejects goes to tomlkit, which says what is wrong, and where.
    try:
        return ManifestDocument(path, text, toml_data(text))
    except ValueError:
        pass
    # tomlkit reads whatever it accepts of what tomli rejects, and says where the rest is
    # wrong. Imported here: every run reads its cargo configuration before cargo starts, where
    # its import would be waited for (about 14 ms), and almost every file is valid.
    import tomlkit.exceptions  # binds `tomlkit` too

    try:
        return ManifestDocument(path, text, tomlkit.parse(text).unwrap())
    except tomlkit.exceptions.ParseError as error:
        line, column, message = _located(text, error)
        raise FeatcheckError(
            f"invalid TOML: {message}", path=path, line=line, column=column
        ) from None
    except (tomlkit.exceptions.TOMLKitError, ValueError, RecursionError) as error:
        raise FeatcheckError(f"invalid TOML: {error}", path=path) from None


def _located(text: str, error: Exception) -> tuple[int, int, str]:
    """The 1-based line and column of tomlkit's `error` in `text`, and its message.

    tomlkit counts columns from 0 and appends " at line L col C" to its message; the location is
    reported apart, 1-based like every location featcheck prints. At the end of the input it
    reads a NUL character and places it at the start of the line it began on: that is the end of
    the file, said as such and placed there.
    """
    message = str(error).split(" at line ")[0]
    line, column = getattr(error, "line", 1), getattr(error, "col", 0) + 1
    at_end = "'\\x00'" in message and "\x00" not in text
    if at_end or message.startswith("Unexpected end of file"):
        lines = text.split("\n")
        if lines[-1] == "" and len(lines) > 1:
            lines.pop()
        line, column, message = len(lines), len(lines[-1]) + 1, "unexpected end of file"
    elif (duplicate := _DUPLICATE.match(message)) is not None:
        # tomlkit is past the repeated key's line when it notices: the key's own line, the
        # nearest at or above where it stopped.
        key = re.escape(duplicate.group(1))
        defines = re.compile(rf'\s*(?:\[+\s*)?(?:"{key}"|{key})\s*[\].=]')
        lines = text.split("\n")
        for number in range(min(line, len(lines)), 0, -1):
            if (found := defines.match(lines[number - 1])) is not None:
                stripped = lines[number - 1][: found.end()].lstrip(" \t[")
                line, column = number, found.end() - len(stripped) + 1
                break
    return line, column, message


_DUPLICATE = re.compile(r'Key "(.+)" already exists')
