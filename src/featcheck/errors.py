"""The one error type the CLI turns into a single line and exit code 2.

Anything that stops an audit from giving a verdict (bad input, a missing tool, cargo refusing to
resolve) is raised as `FeatcheckError`; every other exception is a bug in featcheck.
"""

from __future__ import annotations

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
        where = ""
        if self.path is not None:
            where = str(self.path)
            if self.line is not None:
                where += f":{self.line}"
                if self.column is not None:
                    where += f":{self.column}"
            where += ": "
        return where + self.message
