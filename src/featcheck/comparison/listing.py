"""The entries of a revision's tree, walked from its commit object by object, within bounds.

Every tree is read raw through `ObjectReader` (its size judged first, its content checked
against its id) and parsed here, so nothing of the listing is taken on git's word. A tree
reused many times (a few KB of objects can name a million paths) is read once but counted at
every place it appears: the walk stops past `MAX_ENTRIES` entries or a path longer than
`MAX_PATH_BYTES`, and reads at most `MAX_TREE_BYTES` of trees. A tree git would not check out
is refused: two entries of one name (a link beside a directory of its name would lead the
writing of the directory's files out), a name with `/`, an empty name, `.` or `..`. Names git
never checks out (`.git` in any case) and names that are not UTF-8 are left out, with what
lies below them.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import NamedTuple

from featcheck.boundary import TrustContext
from featcheck.comparison.git import READING, Budget, Git, first_line, start_git
from featcheck.errors import FeatcheckError
from featcheck.fileio import MAX_SCANNED_ENTRIES

MAX_ENTRIES = MAX_SCANNED_ENTRIES
"""As many as featcheck looks at in a checkout's own directories."""
MAX_PATH_BYTES = 4096
"""PATH_MAX on Linux: no longer path could be written anyway."""
MAX_TREE_BYTES = 64 << 20
"""All trees read, counted once each: 200,000 entries take about 10 MB."""

TREE, FILE, LINK, SUBMODULE = "tree", "file", "link", "submodule"
_KINDS = {0o040000: TREE, 0o100000: FILE, 0o120000: LINK, 0o160000: SUBMODULE}


class Entry(NamedTuple):
    kind: str
    path: tuple[str, ...]
    object: str


class Walk:
    """The walk of one commit's tree (see the module), a level of directories at a time: the
    trees of one level are asked for in one batch."""

    def __init__(self, reader: ObjectReader, budget: Budget, label: str) -> None:
        self._reader = reader
        self._budget = budget
        self._label = label
        self._trees: dict[str, list[tuple[str, str, str]]] = {}
        self._tree_bytes = 0
        self._parsed = 0
        """Entries of the distinct trees: each is at least one entry of the walk."""

    def entries(self, commit: str) -> Iterator[Entry]:
        """Every entry below the commit's tree that is not a tree itself."""
        [content] = self._read({commit: "the commit"}, "commit")
        kind, _, root = content.split(b"\n", 1)[0].decode("ascii", "replace").partition(" ")
        if kind != "tree" or len(root) != len(commit):
            raise self._malformed(f"the commit {commit[:12]} names no tree")
        level: list[tuple[str, tuple[str, ...], int]] = [(root, (), 0)]
        count = 0
        while level:
            unknown: dict[str, str] = {}
            for tree, directory, _ in level:
                if tree not in self._trees and tree not in unknown:
                    unknown[tree] = "/".join(directory) or "the top directory"
            read = self._read(unknown, "tree")
            for (tree, where), content in zip(unknown.items(), read, strict=True):
                self._trees[tree] = self._parse(content, len(tree) // 2, where)
            below: list[tuple[str, tuple[str, ...], int]] = []
            for tree, directory, length in level:
                for kind, name, object_id in self._trees[tree]:
                    count += 1
                    if count > MAX_ENTRIES:
                        raise self._too_many()
                    path = (*directory, name)
                    path_length = length + len(name.encode("utf-8")) + 1
                    if path_length > MAX_PATH_BYTES:
                        raise FeatcheckError(
                            f"--new-since: the tree of {self._label} has a path longer than "
                            f"{MAX_PATH_BYTES} bytes: {'/'.join(path)[:120]}..."
                        )
                    if kind == TREE:
                        below.append((object_id, path, path_length))
                    else:
                        yield Entry(kind, path, object_id)
            self._budget.check(READING)
            level = below

    def _read(self, objects: dict[str, str], kind: str) -> Iterator[bytes]:
        """The contents of `objects` (id: where it is), all of `kind`, within the bound on
        trees."""
        infos = self._reader.infos(list(objects))
        for (object_id, where), info in zip(objects.items(), infos, strict=True):
            if info is None:
                raise missing_object(where, object_id, self._label)
            if info.kind != kind:
                raise self._malformed(f"{where} is a {info.kind} where a {kind} belongs")
            self._tree_bytes += info.size
        if self._tree_bytes > MAX_TREE_BYTES:
            raise FeatcheckError(
                f"--new-since: the trees of {self._label} are larger than "
                f"{MAX_TREE_BYTES >> 20} MiB; featcheck reads no more"
            )
        wanted = [(object_id, info) for object_id, info in zip(objects, infos, strict=True) if info]
        return self._reader.contents(wanted)

    def _parse(self, raw: bytes, id_bytes: int, where: str) -> list[tuple[str, str, str]]:
        """`(kind, name, id)` of each entry of a raw tree (`<mode> <name>\\0<id>`...)."""
        parsed: list[tuple[str, str, str]] = []
        names: set[bytes] = set()
        position = 0
        while position < len(raw):
            space = raw.find(b" ", position)
            end = raw.find(b"\0", space + 1)
            if space < 0 or end < 0 or end + 1 + id_bytes > len(raw):
                raise self._malformed(f"the tree of {where} is cut short")
            mode, name = raw[position:space], raw[space + 1 : end]
            object_id = raw[end + 1 : end + 1 + id_bytes].hex()
            position = end + 1 + id_bytes
            try:
                kind = _KINDS.get(int(mode, 8) & 0o170000)
            except ValueError:
                kind = None
            if kind is None or name in (b"", b".", b"..") or b"/" in name:
                raise self._malformed(f"{where} has an entry git would not check out: {name!r}")
            if name in names:
                raise self._malformed(f"{where} holds `{name.decode('utf-8', 'replace')}` twice")
            names.add(name)
            self._parsed += 1
            if self._parsed > MAX_ENTRIES:
                raise self._too_many()
            try:
                text = name.decode("utf-8")
            except UnicodeDecodeError:
                continue
            if text.casefold() != ".git":
                parsed.append((kind, text, object_id))
        return parsed

    def _too_many(self) -> FeatcheckError:
        return FeatcheckError(
            f"--new-since: the tree of {self._label} has more than {MAX_ENTRIES:,} entries; "
            "featcheck reads no more"
        )

    def _malformed(self, what: str) -> FeatcheckError:
        return FeatcheckError(
            f"--new-since: the tree of {self._label} is malformed (git fsck would say so too): "
            f"{what}"
        )


def missing_object(where: str, object_id: str, label: str) -> FeatcheckError:
    return FeatcheckError(
        f"--new-since: {where} ({object_id[:12]}) is not in this repository: {label} was not "
        "fetched whole (a partial clone? `git show` fetches what it shows; featcheck fetches "
        "nothing)"
    )


# git objects read by id: the size first, the content only within a bound, and only content
# that hashes to its id.
#
# Two `git cat-file` processes answer: `--batch-check` says an object's kind
# and size without reading it (git reads a packed object's header, a loose one's first bytes),
# and only then `--batch` reads it whole. git checks no hash when it reads a loose object, so a
# repository can hold any content under any name; here every object is hashed again (SHA-1 or
# SHA-256, as long as its id) and refused where the hash differs, so what is kept in the cache
# under a commit is that commit's content, whichever repository it came from.

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
            # The id git gives the content: SHA-1 (40 hex digits) or SHA-256 (64).
            digest = hashlib.sha1() if len(object_id) == 40 else hashlib.sha256()
            digest.update(f"{expected.kind} {len(content)}\0".encode("ascii"))
            digest.update(content)
            if digest.hexdigest() != object_id:
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
