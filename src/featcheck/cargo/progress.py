"""What cargo is doing while it downloads, read from its own stderr, for a progress line.

cargo's stderr is a pipe to featcheck, so cargo prints one line per event instead of its own
progress bar: `Updating crates.io index`, `Downloading crates ...`, one `Downloaded NAME vX`
per crate and, at the end, `Downloaded 670 crates (96.0 MB) in 10.34s`. Only counts and sizes
are taken from them; names (the lockfile's, so the checkout's) are never shown.
"""

from __future__ import annotations

import re
from collections.abc import Callable

_TOTAL = re.compile(r"Downloaded (\d+) crates? \((\d+(?:\.\d+)? [KMGT]?i?B)\)")


class DownloadProgress:
    """Turns chunks of cargo's stderr into short progress texts for `say`."""

    def __init__(self, say: Callable[[str], None]) -> None:
        self._say = say
        self._partial = b""
        self._downloaded = 0

    def feed(self, chunk: bytes) -> None:
        """Read what cargo printed; `say` what changed, once per chunk at most."""
        lines = (self._partial + chunk).split(b"\n")
        self._partial = lines.pop()[-4096:]  # a line still being written (bounded)
        news = ""
        for raw in lines:
            line = raw.decode("utf-8", errors="replace").strip()
            total = _TOTAL.fullmatch(line.split(" in ", 1)[0])
            if total is not None:
                news = f"downloaded {total.group(1)} crates ({total.group(2)})"
            elif line.startswith("Downloaded "):
                self._downloaded += 1
                news = f"downloading crates… {self._downloaded}"
            elif line.startswith("Downloading "):
                news = "downloading crates…"
            elif line.startswith("Updating ") and line.endswith(" index"):
                news = "updating the registry index…"
        if news:
            self._say(news)
