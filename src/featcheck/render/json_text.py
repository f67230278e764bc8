"""JSON documents whose text is safe to print in a terminal or CI log (see `safe_text`).

Apart from `safe_text` so that what the command line loads before cargo starts (its error
lines are made safe there) does not import the json module.
"""

from __future__ import annotations

import json
import re
from typing import Any

from featcheck.render.safe_text import WORKFLOW_OPENER

# In a JSON document: anything not printable ASCII, except the line breaks of the indentation
# (a raw line break cannot occur inside a JSON string; json.dumps writes `\n`).
_NOT_PLAIN = re.compile(r"[^\n -~]")


def json_document(value: Any) -> str:
    """`value` as indented JSON whose text is printable and carries no workflow command.

    Non-ASCII text stays readable (`ensure_ascii=False`) except characters that are not
    printable (C1 controls, DEL, bidi overrides and isolates, zero-width and other format
    characters, line separators, lone surrogates), which become `\\uXXXX` escapes (a surrogate
    pair beyond the BMP): a parser reads the very same strings. `##[` and `##vso[` inside a
    string become `#\\u0023[` and `#\\u0023vso[`; an indented document has no line that starts
    with `::`.
    """
    document = json.dumps(value, indent=2, ensure_ascii=False)
    document = _NOT_PLAIN.sub(_json_escape, document)
    if "##" in document:
        document = WORKFLOW_OPENER.sub(lambda found: "#\\u0023" + found.group()[2:], document)
    return document


def _json_escape(found: re.Match[str]) -> str:
    character = found.group()
    if character.isprintable():
        return character
    code = ord(character)
    if code < 0x10000:
        return f"\\u{code:04x}"
    code -= 0x10000
    return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"
