#!/usr/bin/env python3
"""A release's notes: its section of CHANGELOG.md, printed for the GitHub release.

    python scripts/release_notes.py VERSION [CHANGELOG]

The section is the one headed `## [VERSION]` (with or without ` - DATE`), up to the next `## `
heading or the link definitions at the end. A version without a section, or with an empty one,
is an error (exit 1): the release workflow runs this before it publishes anything, so a tag
pushed before its CHANGELOG entry stops there.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

CHANGELOG = Path(__file__).resolve().parent.parent / "CHANGELOG.md"
# `[Unreleased]: https://...` and `[0.1.0]: https://...`: the links under the last section.
LINK_DEFINITION = re.compile(r"^\[[^\]]+\]: \S+$")


def section(text: str, version: str) -> str | None:
    """The body of VERSION's section, stripped; None where there is no such heading."""
    heading = re.compile(rf"^## \[{re.escape(version)}\](?: - \S+)?$")
    lines = text.splitlines()
    starts = [number for number, line in enumerate(lines) if heading.match(line)]
    if not starts:
        return None
    body: list[str] = []
    for line in lines[starts[0] + 1 :]:
        if line.startswith("## ") or LINK_DEFINITION.match(line):
            break
        body.append(line)
    return "\n".join(body).strip()


def main(argv: list[str]) -> int:
    if len(argv) not in (1, 2):
        print("usage: release_notes.py VERSION [CHANGELOG]", file=sys.stderr)
        return 2
    path = Path(argv[1]) if len(argv) == 2 else CHANGELOG
    notes = section(path.read_text(encoding="utf-8"), argv[0])
    if not notes:
        print(
            f"{path}: no section '## [{argv[0]}]' with notes: move [Unreleased] under it"
            " (with the date) and tag that commit",
            file=sys.stderr,
        )
        return 1
    print(notes)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
