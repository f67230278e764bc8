"""Git objects as an attacker writes them: trees git's porcelain would refuse (two entries of one
name, a link beside a directory), commits of such trees, loose objects whose content does not
match their name, and a blob of any size written without holding it in memory."""

from __future__ import annotations

import hashlib
import os
import subprocess
import zlib
from pathlib import Path

from history_support import git

LINK = "120000"
FILE = "100644"
TREE = "40000"


def write_blob(repository: Path, content: bytes) -> str:
    return _hash_object(repository, "blob", content)


def write_tree(repository: Path, entries: list[tuple[str, str, str]]) -> str:
    """A tree of `(mode, name, id)` entries in the order given, duplicates and all (git's
    `hash-object --literally` checks nothing)."""
    raw = b"".join(
        mode.encode() + b" " + name.encode() + b"\0" + bytes.fromhex(object_id)
        for mode, name, object_id in entries
    )
    return _hash_object(repository, "tree", raw)


def write_commit(repository: Path, tree: str, parent: str, message: str = "old") -> str:
    return git(repository, "commit-tree", tree, "-p", parent, "-m", message).strip()


def tree_of(repository: Path, revision: str) -> list[tuple[str, str, str]]:
    """The entries of `revision`'s root tree, to build a changed copy of it."""
    listing = git(repository, "ls-tree", revision)
    entries = []
    for line in listing.splitlines():
        header, name = line.split("\t", 1)
        mode, _, object_id = header.split(" ")
        entries.append(("40000" if mode == "040000" else mode, name, object_id))
    return entries


def loose_path(repository: Path, object_id: str) -> Path:
    return repository / ".git" / "objects" / object_id[:2] / object_id[2:]


def forge_loose(repository: Path, object_id: str, kind: str, content: bytes) -> None:
    """Replace the loose object `object_id` with `content`, which has another id: git reads it
    back as it is (no read checks the hash)."""
    path = loose_path(repository, object_id)
    path.chmod(0o644)
    path.write_bytes(zlib.compress(f"{kind} {len(content)}\0".encode() + content))


def write_zero_blob(repository: Path, size: int) -> str:
    """A loose blob of `size` zero bytes, hashed and compressed a MiB at a time (a few hundred
    KiB on disk for hundreds of MiB of content)."""
    header = f"blob {size}\0".encode()
    digest = hashlib.sha1(header)
    packer = zlib.compressobj(1)
    chunks = [packer.compress(header)]
    block = bytes(1 << 20)
    left = size
    while left:
        piece = block[: min(left, len(block))]
        digest.update(piece)
        chunks.append(packer.compress(piece))
        left -= len(piece)
    chunks.append(packer.flush())
    object_id = digest.hexdigest()
    path = loose_path(repository, object_id)
    path.parent.mkdir(exist_ok=True)
    path.write_bytes(b"".join(chunks))
    return object_id


def _hash_object(repository: Path, kind: str, content: bytes) -> str:
    done = subprocess.run(
        ["git", "-C", str(repository), "hash-object", "-t", kind, "-w", "--literally", "--stdin"],
        input=content,
        capture_output=True,
        check=True,
        env=dict(os.environ),
    )
    return done.stdout.decode().strip()
