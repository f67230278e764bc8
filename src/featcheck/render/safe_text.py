"""Checkout text made safe for each kind of output featcheck writes, in one place.

Everything the checkout controls (package, member and feature names, paths, quoted manifest
lines, cargo's messages, a project rule's documentation) is hostile. What it could do depends on
where it lands:

- a terminal acts on control characters (ESC sequences recolour, retitle, plant OSC 8 links and
  OSC 52 clipboard text; CR hides what came before it), and bidi overrides or zero-width
  characters make text read differently from what it is: `printable` shows all of them escaped;
- a CI log acts on workflow commands in any line printed: GitHub's `::name::` at the start of a
  line (after leading whitespace) and its legacy `##[name]` anywhere in a line, Azure Pipelines'
  `##vso[name]` (and `##[name]` formatting) anywhere in a line. `inert` breaks each of them, in
  every format and whether or not a runner was detected: a report is often printed by a CI step
  that featcheck cannot see (a script, `cat report.txt`, another CI system);
- a JSON document keeps C1 controls, bidi and other invisible characters raw under
  `ensure_ascii=False`: `json_document` writes them as `\\uXXXX` (the parsed values
  are the same) and breaks the workflow-command openers the same way;
- Markdown would render links, images, HTML and emphasis: `markdown_text` (one line) and
  `markdown_block` (a whole text) show them literally;
- a link is given only when `https_link` accepts it: one absolute `https://` URL, nothing more.

Last, the GitHub Actions workflow commands that featcheck writes itself (escaped messages and
properties, featcheck's own error annotation), and the stop-commands block that keeps everything
else inert in an Actions log (see `github` for the annotations of findings): here, not in
`github`, so that the command line's error lines, which may quote the checkout, can be written as
an annotation without loading the report model that the findings' renderer needs.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable
from typing import Any
from urllib.parse import urlsplit


def printable(text: str, *, tabs: bool = False) -> str:
    """`text` with everything `str.isprintable` rejects shown as Python's escape (`\\x1b`,
    `\\u202e`); with `tabs`, a tab is kept (a diff of a tab-indented manifest must stay a diff)."""
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() or (tabs and c == "\t") else ascii(c)[1:-1] for c in text)


def printable_lines(text: str) -> list[str]:
    """`text` split at line breaks, each line made printable; at least one line."""
    return [printable(line) for line in text.splitlines()] or [""]


# GitHub's legacy `##[name]` and Azure's `##vso[name]`, acted on anywhere in a line. The runners
# compare command names without case; the prefix is matched the same way here, to be safe.
WORKFLOW_OPENER = re.compile(r"##(vso)?\[", re.IGNORECASE)


def inert(line: str) -> str:
    """One line that no CI runner reads a workflow command from; `line` must already be
    printable (so it holds no line break and no whitespace but spaces and tabs)."""
    if "#" in line:
        line = WORKFLOW_OPENER.sub(lambda found: found.group()[:-1] + "\\x5b", line)
    body = line.lstrip(" \t")
    if body.startswith("::"):
        line = line[: len(line) - len(body)] + "\\x3a" + body[1:]
    return line


_AZURE = re.compile(r"##vso\[", re.IGNORECASE)


def without_azure_commands(command: str) -> str:
    """A GitHub workflow command (featcheck's own annotation) with Azure's `##vso[` broken.

    GitHub reads no `##[` inside a line it parsed as `::name::`, and its property escapes have
    no form for `[`: `##vso[` in a value is written as `##vso\\x5b`, which Azure does not read.
    """
    return _AZURE.sub("##vso\\\\x5b", command) if "#" in command else command


def safe_line(text: str, *, tabs: bool = False) -> str:
    """Checkout text as one line for a terminal or CI log: printable, then inert."""
    return inert(printable(text, tabs=tabs))


_MARKDOWN_SPECIAL = frozenset("\\`*_~[]|$@")
"""Characters that open inline Markdown (code, emphasis, strikethrough, links and images, table
cells, math, mentions); each is shown literally with a backslash, which GitHub's Markdown allows
before any ASCII punctuation. `(`, `)` and `!` form nothing without a `[`."""
_HTML_SPECIAL = {"<": "&lt;", ">": "&gt;", "&": "&amp;"}


def markdown_text(text: str) -> str:
    """One line of checkout text shown literally in Markdown: no HTML, link, image or emphasis."""
    return "".join(
        _HTML_SPECIAL.get(character)
        or (f"\\{character}" if character in _MARKDOWN_SPECIAL else character)
        for character in printable(text)
    )


_BACKTICKS = re.compile(r"`+")


def markdown_block(text: str) -> str:
    """Checkout text shown literally in Markdown, line breaks kept: a fenced code block whose
    fence is longer than any run of backticks in the text, so that no line can close it early."""
    lines = printable_lines(text)
    longest = max((len(run) for run in _BACKTICKS.findall(text)), default=0)
    fence = "`" * max(3, longest + 1)
    return "\n".join([fence + "text", *lines, fence])


_URL_LIMIT = 2048
# Printable ASCII without space and the characters that delimit a URL in Markdown, HTML or
# prose (a second link hides behind `](`, `<`, a quote or a backslash).
_URL_CHARACTERS = re.compile(r"[!#-&*-;=?-Z^_a-z~]+")


def https_link(text: str) -> str | None:
    """`text` when it is one absolute `https://` URL with a host and nothing else, else None.

    Refused: another scheme (`javascript:`, `http:`, `data:`), whitespace or control
    characters, non-ASCII (a look-alike host), brackets, parentheses, quotes, `<`, `>`, a
    backslash or a backtick (each could close this link and open a second one), user
    information (`https://trusted.example@evil.example/`) and URLs over 2048 characters.
    """
    if len(text) > _URL_LIMIT or _URL_CHARACTERS.fullmatch(text) is None:
        return None
    try:
        parts = urlsplit(text)
        _ = parts.port  # raises ValueError for a port that is not a number
    except ValueError:
        return None
    if parts.scheme != "https" or not text.startswith("https://") or "@" in parts.netloc:
        return None
    return text if parts.hostname else None


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
    # What secrets.token_hex(16) returns, without importing secrets (and random) at start-up.
    token = os.urandom(16).hex()
    while any(token in line for line in body):
        token = os.urandom(16).hex()
    return f"::stop-commands::{token}\n" + "".join(f"{line}\n" for line in body) + f"::{token}::\n"


def error_annotation(lines: Iterable[str], place: str = "") -> str:
    """featcheck's own error (exit 2) as one `::error` annotation, so that the job shows why the
    step failed instead of only "Process completed with exit code 2". The lines (each
    printable, without line breaks) may quote the checkout: each is made inert as well, then the
    whole is escaped as the annotation's message, which the runner never reads for commands.
    `place`: the annotation's `file=`, `line=` and `col=` properties, escaped, with a comma after
    each (the file and line the error names: the annotation then lands on it)."""
    message = "\n".join(inert(line) for line in lines)
    return f"::error {place}title=featcheck::{escape_data(message)}\n"


def annotation_place(
    path: str | os.PathLike[str], workspace: str, line: int | None, column: int | None
) -> str:
    """`file=PATH,line=N,col=N,` for `error_annotation`, each value escaped; PATH relative to
    `workspace` where it lies below it (by name: the file may be a link, or not exist)."""
    named, workspace = os.path.abspath(path), os.path.abspath(workspace)
    if os.path.commonpath([named, workspace]) == workspace:
        named = os.path.relpath(named, workspace)
    # Line breaks are the property's to escape (%0A); other control characters are shown.
    shown = "".join(c if c in "\r\n" else printable(c) for c in named.replace(os.sep, "/"))
    parts = [f"file={escape_property(shown)}"]
    parts += [f"{key}={value}" for key, value in (("line", line), ("col", column)) if value]
    return "".join(f"{part}," for part in parts)


# In a JSON document: anything not printable ASCII, except the line breaks of the indentation
# (a raw line break cannot occur inside a JSON string; json.dumps writes `\n`).
_NOT_PLAIN = re.compile(r"[^\n -~]")


def json_document(value: Any) -> str:
    """`value` as indented JSON whose text is printable and carries no workflow command: what
    is not printable gets json's own `\\uXXXX` escape (a surrogate pair beyond the BMP), so a
    parser reads the very same strings; `##[` and `##vso[` become `#\\u0023[` and `#\\u0023vso[`;
    an indented document has no line that starts with `::`."""
    document = json.dumps(value, indent=2, ensure_ascii=False)
    document = _NOT_PLAIN.sub(
        lambda found: found[0] if found[0].isprintable() else json.dumps(found[0])[1:-1], document
    )
    if "##" in document:
        document = WORKFLOW_OPENER.sub(lambda found: "#\\u0023" + found.group()[2:], document)
    return document
