"""git objects read by id: the size first, the content only within a bound, and only content
that hashes to its id.

Two `git cat-file` processes answer: `--batch-check` says an object's kind
and size without reading it (git reads a packed object's header, a loose one's first bytes),
and only then `--batch` reads it whole. git checks no hash when it reads a loose object, so a
repository can hold any content under any name; here every object is hashed again (SHA-1 or
SHA-256, as long as its id) and refused where the hash differs, so what is kept in the cache
under a commit is that commit's content, whichever repository it came from.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import NamedTuple

from featcheck.boundary import TrustContext
from featcheck.comparison.git import Budget, Git, first_line, start_git
from featcheck.errors import FeatcheckError

_HEADER_LIMIT = 200
"""`<id> <kind> <size>` is at most 64 + 1 + 6 + 1 + 20 bytes."""


class ObjectInfo(NamedTuple):
    kind: str
    size: int


class ObjectReader:
    """The objects of one repository, read as the module says; `close` ends both processes.
    Requests go in batches: one round trip per batch, not per object."""

    def __init__(self, repository: Path, budget: Budget, trust: TrustContext) -> None:
        self._repository = repository
        self._budget = budget
        self._trust = trust
        self._check: Git | None = None
        self._read: Git | None = None

    def infos(self, object_ids: Sequence[str]) -> list[ObjectInfo | None]:
        """The kind and size of each object; None for one the repository lacks."""
        if not object_ids:
            return []
        if self._check is None:
            self._check = self._start("--batch-check")
        self._check.ask([object_id.encode("ascii") for object_id in object_ids])
        return [self._header(self._check, object_id) for object_id in object_ids]

    def contents(self, wanted: Sequence[tuple[str, ObjectInfo]]) -> Iterator[bytes]:
        """The content of each object, which `infos` said is as given (the caller judged its
        size), checked against its id, one at a time."""
        if not wanted:
            return
        if self._read is None:
            self._read = self._start("--batch")
        process = self._read
        process.ask([object_id.encode("ascii") for object_id, _ in wanted])
        for object_id, expected in wanted:
            if self._header(process, object_id) != expected:
                raise FeatcheckError(f"--new-since: git changed its answer about {object_id[:12]}")
            content = process.read_exact(expected.size + 1)
            if content is None or not content.endswith(b"\n"):
                raise FeatcheckError(f"--new-since: git stopped while reading {object_id[:12]}")
            content = content[:-1]
            if object_hash(expected.kind, content, len(object_id)) != object_id:
                raise FeatcheckError(
                    f"--new-since: the {expected.kind} {object_id[:12]} does not match its id: "
                    "the repository holds content forged under another object's name"
                )
            yield content

    def close(self) -> None:
        for process in (self._check, self._read):
            if process is not None:
                process.close()

    def _start(self, mode: str) -> Git:
        return start_git(
            self._repository, ["cat-file", mode], self._budget, self._trust, batch=True
        )

    def _header(self, process: Git, object_id: str) -> ObjectInfo | None:
        line = process.read_line(_HEADER_LIMIT)
        if line is None:
            reason = first_line(process.complaint())
            raise FeatcheckError(f"--new-since: git could not read objects: {reason}")
        words = line.decode("ascii", "replace").split(" ")
        if words == [object_id, "missing"]:
            return None
        if len(words) != 3 or words[0] != object_id or not words[2].isdigit():
            raise FeatcheckError(f"--new-since: git answered `{line[:80]!r}` for {object_id[:12]}")
        return ObjectInfo(words[1], int(words[2]))


def object_hash(kind: str, content: bytes, length: int) -> str:
    """The id git gives `content` as a `kind` object: SHA-1 (40 hex digits) or SHA-256 (64)."""
    digest = hashlib.sha1() if length == 40 else hashlib.sha256()
    digest.update(f"{kind} {len(content)}\0".encode("ascii"))
    digest.update(content)
    return digest.hexdigest()
