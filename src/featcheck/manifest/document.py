"""A Cargo.toml read once: its text, its tomlkit document, and where each key is written."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

import tomlkit
import tomlkit.exceptions

from featcheck.errors import FeatcheckError
from featcheck.manifest.spans import Entry, KeyPath, index_spans


@dataclass
class ManifestDocument:
    """A parsed manifest; `data` is plain Python values, `entry()` gives positions."""

    path: Path
    text: str
    data: dict[str, Any]
    _lines: list[str] = field(default_factory=list, repr=False)

    @cached_property
    def spans(self) -> dict[KeyPath, Entry]:
        """Positions of every key path (computed on first use: most manifests need none)."""
        return index_spans(self.text)

    def entry(self, path: KeyPath) -> Entry | None:
        """Where `path` is written, if it is."""
        return self.spans.get(path)

    def line_text(self, line: int) -> str:
        """The text of a 1-based line, without its line ending."""
        if not self._lines:
            self._lines = self.text.splitlines()
        return self._lines[line - 1] if 0 < line <= len(self._lines) else ""

    def get(self, *keys: str) -> Any:
        """The value at a key path, or None."""
        node: Any = self.data
        for key in keys:
            if not isinstance(node, dict) or key not in node:
                return None
            node = node[key]
        return node


def read_manifest(path: Path) -> ManifestDocument:
    """Read and parse a manifest; any problem becomes a one-line `path:line:col: message`."""
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise FeatcheckError("no such file", path=path) from None
    except IsADirectoryError:
        raise FeatcheckError("is a directory, not a Cargo.toml", path=path) from None
    except OSError as error:
        raise FeatcheckError(f"cannot read: {error.strerror or error}", path=path) from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as error:
        line = raw[: error.start].count(b"\n") + 1
        column = error.start - (raw.rfind(b"\n", 0, error.start) + 1) + 1
        raise FeatcheckError("invalid UTF-8", path=path, line=line, column=column) from None
    try:
        data = tomlkit.parse(text).unwrap()
    except tomlkit.exceptions.ParseError as error:
        message = str(error)
        # tomlkit appends " at line L col C" to its message; the location is reported apart.
        message = message.split(" at line ")[0]
        raise FeatcheckError(
            f"invalid TOML: {message}", path=path, line=error.line, column=error.col
        ) from None
    except (tomlkit.exceptions.TOMLKitError, ValueError, RecursionError) as error:
        raise FeatcheckError(f"invalid TOML: {error}", path=path) from None
    return ManifestDocument(path, text, data)
