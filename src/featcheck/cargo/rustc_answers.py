"""rustc's answers that depend only on its binary and the question, kept between runs.

`rustc -vV` (the host) and `rustc --print=cfg --target=T FLAGS` (what `cfg(...)` tables see)
are asked by every audit, and each costs a process start beside cargo's own. cargo keeps the
same answers in `target/.rustc_info.json`, keyed by the compiler binary; featcheck keeps them in
`$XDG_CACHE_HOME/featcheck/rustc-answers.json` (default `~/.cache/featcheck/`), keyed by the
binary's path, size, modification time and inode, the question, and the environment variables
that can change an answer (`RUST_TARGET_PATH`, `RUSTC_BOOTSTRAP`). A `rustup update` writes new
binaries, so it starts afresh. Questions naming a target specification file are never kept: the
file can change under the same name. Only answers of the real toolchain binaries are kept (not of
a rustup proxy, whose answers change with the toolchain it picks), only successful ones, and a
cache that cannot be read or written is ignored.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from featcheck.fileio import read_cache, write_cache

_VERSION = 1
_ENVIRONMENT = ("RUST_TARGET_PATH", "RUSTC_BOOTSTRAP")
_MAX_ENTRIES = 64


class RustcAnswers:
    """The kept answers of one rustc binary (see the module's docstring)."""

    def __init__(self, rustc: Path, directory: Path | None, environment: Mapping[str, str]) -> None:
        self._file = directory / "rustc-answers.json" if directory is not None else None
        self._identity = _identity(rustc, environment)
        self._entries: dict[str, Any] | None = None

    def ask(self, question: Sequence[str], answer: Callable[[], str | None]) -> str | None:
        """The kept answer to `question`, else `answer()` (kept when it is not None)."""
        if (
            self._file is None
            or self._identity is None
            or any(a.endswith(".json") for a in question)
        ):
            return answer()
        key = json.dumps([self._identity, list(question)])
        entries = self._load()
        known = entries.get(key)
        if isinstance(known, str):
            return known
        found = answer()
        if found is not None:
            entries[key] = found
            self._save(entries)
        return found

    def _load(self) -> dict[str, Any]:
        if self._entries is None:
            assert self._file is not None
            self._entries = read_cache(self._file, _VERSION, "answers")
        return self._entries

    def _save(self, entries: dict[str, Any]) -> None:
        assert self._file is not None
        # A toolchain updated now and then leaves answers nobody asks again: keep the newest.
        write_cache(self._file, _VERSION, "answers", dict(list(entries.items())[-_MAX_ENTRIES:]))


def _identity(rustc: Path, environment: Mapping[str, str]) -> list[Any] | None:
    try:
        real = os.path.realpath(rustc)
        stat = os.stat(real)
    except (OSError, ValueError):
        return None
    settings = [environment.get(name) for name in _ENVIRONMENT]
    return [real, stat.st_size, stat.st_mtime_ns, stat.st_ino, settings]
