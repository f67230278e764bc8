"""The text `cargo metadata` printed at a project's last audit, parsed again while cargo works.

Parsing burn's 2.4 MB of metadata takes ~12 ms once cargo has answered, on the path the user
waits on. Between two audits of a project the answer rarely changes (a manifest, the lockfile
or the toolchain must change first; cargo's target directory, which it prints too, is
featcheck's own): so the last answer is kept in the user cache, read and parsed while cargo
works, and used only when cargo prints exactly that text again. Nothing of it ever stands in
for cargo's answer: a byte that differs, and cargo's own answer is parsed as before.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import threading
import time
from collections.abc import Sequence
from pathlib import Path

from featcheck.errors import FeatcheckError
from featcheck.fileio import replace_cache_file
from featcheck.workspace.cargo_metadata import parse_metadata
from featcheck.workspace.workspace import Workspace

MAX_KEPT = 8
"""Answers kept, one per project and command line: the oldest written go first."""

MAX_BYTES = 64 << 20
"""A larger answer is not kept (parsing it could outlast cargo's own work)."""


class LastAnswer:
    """One command line's kept answer: `read()` while cargo works, `matching()` once it has
    answered, `keep()` when it answered something else."""

    def __init__(self, file: Path, inputs: Sequence[Path] = ()) -> None:
        self.file = file
        self.inputs = inputs
        """Files cargo reads: one written after the kept answer (a manifest), and it is unread."""
        self._text: str | None = None
        self.metadata: Workspace | None = None
        """The kept answer, parsed (None when there is none, or once it did not match)."""
        self._writer: threading.Thread | None = None

    @classmethod
    def of_command(
        cls, cache: Path | None, arguments: Sequence[str], inputs: Sequence[Path] = ()
    ) -> LastAnswer | None:
        """The kept answer of `cargo ARGUMENTS` (which name the manifest by its absolute path),
        which reads `inputs` among other files."""
        if cache is None:
            return None
        key = hashlib.sha256("\0".join(arguments).encode("utf-8", "surrogatepass"))
        return cls(cache / "metadata" / f"{key.hexdigest()[:32]}.json", inputs)

    def read(self) -> None:
        """Read and parse the kept answer, unless one of the inputs was written since: after
        an edit cargo answers otherwise, as a rule, and reading the kept answer (~30 ms for a
        burn crate) and auditing it ahead (~60 ms) would be work thrown away, done on the cores
        cargo works on. Whatever it skips, the audit of cargo's answer does as before."""
        with contextlib.suppress(OSError, ValueError, FeatcheckError):
            kept = self.file.stat()
            if kept.st_size > MAX_BYTES or _written_since(self.inputs, kept.st_mtime_ns):
                return
            text = self.file.read_text(encoding="utf-8")
            metadata = parse_metadata(text)
            # A member's or path dependency's manifest edited since (a pre-commit hook's
            # usual run): cargo answers otherwise, and the audit ahead would be thrown away.
            local = [package.manifest_path for package in metadata.unpublished()]
            if _written_since(local, kept.st_mtime_ns):
                return
            self.metadata = metadata
            self._text = text

    def matching(self, text: str) -> Workspace | None:
        """The parsed answer when cargo printed exactly the kept text."""
        if self._text is not None and text == self._text:
            return self.metadata
        self.metadata = None
        return None

    def keep(self, text: str) -> None:
        """Keep `text` for the next audit, written in the background (`settle()` waits)."""
        if text == self._text or len(text) > MAX_BYTES:
            return
        self._writer = threading.Thread(target=self._write, args=(text,), daemon=True)
        self._writer.start()

    def settle(self) -> None:
        if self._writer is not None:
            self._writer.join()
            self._writer = None

    def _write(self, text: str) -> None:
        if not replace_cache_file(self.file, text):
            return
        # All but the MAX_KEPT answers written last go, and what a killed writer left.
        with contextlib.suppress(OSError):
            answers: list[tuple[float, str]] = []
            abandoned: list[str] = []
            for entry in os.scandir(self.file.parent):
                modified = entry.stat().st_mtime
                if entry.name.startswith("."):  # a writer's temporary file
                    if modified < time.time() - 3600:
                        abandoned.append(entry.path)
                elif entry.name.endswith(".json"):
                    answers.append((modified, entry.path))
            for path in [*abandoned, *(path for _, path in sorted(answers)[:-MAX_KEPT])]:
                with contextlib.suppress(OSError):
                    os.unlink(path)


def _written_since(inputs: Sequence[Path], moment: int) -> bool:
    """Whether a file among `inputs` was modified after `moment` (nanoseconds); a file that
    cannot be read is left to cargo to complain about."""
    for path in inputs:
        with contextlib.suppress(OSError):
            if path.stat().st_mtime_ns > moment:
                return True
    return False
