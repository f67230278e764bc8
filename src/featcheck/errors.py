"""The one error type the CLI turns into a single line and exit code 2.

Anything that stops an audit from giving a verdict (bad input, a missing tool, cargo refusing to
resolve) is raised as `FeatcheckError`; every other exception is a bug in featcheck.
"""

from __future__ import annotations

import itertools
from pathlib import Path


class FeatcheckError(Exception):
    def __init__(
        self,
        message: str,
        *,
        path: Path | str | None = None,
        line: int | None = None,
        column: int | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.path = path
        self.line = line
        self.column = column

    def __str__(self) -> str:
        parts = itertools.takewhile(lambda p: p is not None, (self.path, self.line, self.column))
        where = "".join(f"{part}:" for part in parts)
        return f"{where} {self.message}" if where else self.message
