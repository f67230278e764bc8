"""Counts in words, for every line featcheck prints: `1 file`, `2 files`, never `1 file(s)`.

On the ground floor (it imports nothing), so that the report, the command line and the probe
say counts the same way."""

from __future__ import annotations


def plural(count: int, word: str, many: str | None = None) -> str:
    """`1 error`, `2 errors`; `many` for a word whose plural is not word + s (`entries`)."""
    return f"{count} {word if count == 1 else many or word + 's'}"
