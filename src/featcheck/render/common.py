"""Wording every format shares, so the terminal, annotations and SARIF say the same thing, and
the one place where checkout text is made safe to print (`printable`)."""

from __future__ import annotations

import re

from featcheck.report import AuditResult, Finding, Severity


def plural(count: int, word: str) -> str:
    """`1 error`, `2 errors`."""
    return f"{count} {word}{'' if count == 1 else 's'}"


def count_line(result: AuditResult) -> str:
    """`1 error (1 member, x86_64-unknown-linux-gnu; 2 suppressed)`, or `no findings (...)`;
    `(1 member, 5 configurations, …)` when builds other than the default ones were audited."""
    scope = plural(len(result.members), "member")
    audited = [c for found in result.configurations.values() for c in found]
    if any(not c.is_default for c in audited):
        # Only named when the user asked for more than the default builds.
        scope += f", {plural(len(audited), 'configuration')}"
    if result.targets:
        scope += f", {', '.join(printable(target) for target in result.targets)}"
    if result.suppressed:
        scope += f"; {sum(result.suppressed.values())} suppressed"
    if not result.findings:
        verdict = "no findings, audit incomplete" if result.incomplete else "no findings"
        if result.no_verdict:
            verdict = f"no verdict: {'; '.join(result.no_verdict)}"
        return f"{verdict} ({scope})"
    counts = [
        plural(sum(1 for f in result.findings if f.severity is s), s.label)
        for s in sorted(Severity, reverse=True)
        if any(f.severity is s for f in result.findings)
    ]
    return f"{', '.join(counts)} ({scope})"


def build_of(finding: Finding) -> str:
    """`member app, target x86_64-unknown-linux-gnu`: whose build the finding is about, with
    `with --features …` for a build other than the default one."""
    configuration = finding.configuration
    parts = [
        f"member {printable(finding.member)}" if finding.member else "",
        f"target {printable(finding.target)}" if finding.target else "",
        f"with {printable(configuration.label)}"
        if configuration is not None and not configuration.is_default
        else "",
    ]
    return ", ".join(part for part in parts if part)


_NAMED_ESCAPES = {"\t": "\\t", "\n": "\\n", "\r": "\\r"}


def printable(text: str, *, tabs: bool = False) -> str:
    """`text` with every character a terminal or CI log could act on shown as an escape.

    Checkout-controlled strings (package, member and feature names, paths, quoted manifest lines,
    cargo's messages) pass through here before any renderer prints them. A raw ESC can recolour
    the terminal, move the cursor, retitle the window or plant links (OSC 8) and clipboard text
    (OSC 52); CR hides what came before it, and to the GitHub Actions runner it starts a new
    line; bidi overrides and zero-width characters make text read differently from what it is.
    Everything `str.isprintable` rejects (controls, format characters, line and paragraph
    separators, unusual spaces, lone surrogates) is shown as `\\t`, `\\n`, `\\r`, `\\x1b`,
    `\\u202e` or `\\U000e0001`; a plain space is kept, and with `tabs` a tab too (a diff of a
    tab-indented manifest must stay a diff).
    """
    if text.isprintable():
        return text
    return "".join(
        character if tabs and character == "\t" else _escape_character(character)
        for character in text
    )


def _escape_character(character: str) -> str:
    if character == " " or character.isprintable():
        return character
    named = _NAMED_ESCAPES.get(character)
    if named is not None:
        return named
    code = ord(character)
    if code < 0x100:
        return f"\\x{code:02x}"
    if code < 0x10000:
        return f"\\u{code:04x}"
    return f"\\U{code:08x}"


def printable_lines(text: str) -> list[str]:
    """`text` split at line breaks, each line made printable; at least one line."""
    return [printable(line) for line in text.splitlines()] or [""]


_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z`(])")
_WHY_LINE_LIMIT = 200


def why_line(finding: Finding) -> str:
    """The first sentence of the finding's why: what the missing feature does, in one line.

    The whole paragraph (with the measurements and their source) is for `-v`, JSON, SARIF and
    `featcheck rule CODE`; a sentence longer than the limit is cut at a word and marked `…`.
    """
    text = " ".join(finding.why.split())
    first = _SENTENCE_END.split(text, maxsplit=1)[0]
    if len(first) <= _WHY_LINE_LIMIT:
        return first
    return first[: _WHY_LINE_LIMIT - 1].rsplit(" ", 1)[0].rstrip(",;:") + "…"
