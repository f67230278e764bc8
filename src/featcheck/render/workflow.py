"""GitHub Actions workflow commands that featcheck writes itself, and the block that keeps
everything else inert in an Actions log (see `github` for the annotations of findings).

Apart from `github` so that the command line's error lines, which may quote the checkout, can be
written as an annotation without loading the report model that the findings' renderer needs.
"""

from __future__ import annotations

import os
from collections.abc import Iterable

from featcheck.render.safe_text import inert


def escape_data(text: str) -> str:
    """Escape a workflow command's message (what follows the second `::`)."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    """Escape a workflow command's property value (`file=`, `title=`, ...)."""
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def stop_commands(lines: Iterable[str]) -> str:
    """`lines` (each printable, without line breaks) between `::stop-commands::` and its end.

    The token is 128 random bits drawn when the block is printed, so no checkout can know it,
    and it is redrawn in the (astronomically unlikely) case that it occurs in the text. Each line
    is defused as well, so the text stays inert even for a runner that ignored stop-commands.
    """
    body = [inert(line) for line in lines]
    if not body:
        return ""
    token = _token()
    while any(token in line for line in body):
        token = _token()
    return f"::stop-commands::{token}\n" + "".join(f"{line}\n" for line in body) + f"::{token}::\n"


def _token() -> str:
    # What secrets.token_hex(16) returns, without importing secrets (and random) at start-up.
    return os.urandom(16).hex()


def error_annotation(lines: Iterable[str]) -> str:
    """featcheck's own error (exit 2) as one `::error` annotation, so that the job shows why the
    step failed instead of only "Process completed with exit code 2". The lines (each
    printable, without line breaks) may quote the checkout: each is made inert as well, then the
    whole is escaped as the annotation's message, which the runner never reads for commands."""
    message = "\n".join(inert(line) for line in lines)
    return f"::error title=featcheck::{escape_data(message)}\n"
