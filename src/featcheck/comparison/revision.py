"""The tree of an earlier revision, written from the repository's own objects into a directory
of featcheck's, for `--new-since REF`.

git is asked only to name the commit (`rev-parse`) and to read objects (`cat-file`), in the
environment git.py makes: no checkout, no index, no hook, filter or attribute, no replace ref,
no fetch. The commit and every tree below it are read raw and checked against their ids
(listing.py), within bounds on entries, path lengths and bytes, and within --timeout.

Only what the audit reads is written, and no link: every `Cargo.toml`, `Cargo.lock`,
`.cargo/config` and `.cargo/config.toml`, and `featcheck.toml`, with their contents (each
blob's size is judged before it is read: a larger one than featcheck reads from a checkout is
refused, as in the working tree), and, in each directory that holds a `Cargo.toml`, an empty
file at each place where cargo discovers targets (`src/lib.rs`, `src/main.rs`,
`src/bin/*.rs`, `src/bin/*/main.rs`, `build.rs`, and `*.rs` and `*/main.rs` in `examples`,
`tests` and `benches`), so that cargo finds the same targets without a byte of source (a
crate root says no `#![no_std]` there: a no_std member's findings at REF are never new). A link
at such a place is written as an empty file (it names a source); a link named like a manifest
is not followed (that package then reads as missing at REF, its audit fails with a note and
every finding counts as new). Submodules are left out, as in a clone that has not fetched them.
The toolchain files (`rust-toolchain`, `rust-toolchain.toml`) come from the working tree
instead, so that both audits run one toolchain.

Files are created without following any link on the way (`TreeWriter`): each directory is made
and opened relative to its parent's open descriptor (`O_NOFOLLOW | O_DIRECTORY`), and each file
is created in its directory's descriptor with `O_CREAT | O_EXCL | O_NOFOLLOW`: a link (or
anything else already there) at any step is an error, never a way out. The tree is written into
a directory featcheck has just made and holds no link, so this is the second guard, not the only
one.
"""

from __future__ import annotations

import contextlib
import hashlib
import math
import os
import shutil
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

from featcheck.boundary import (
    MAX_CONFIG_BYTES,
    MAX_LOCKFILE_BYTES,
    MAX_MANIFEST_BYTES,
    TrustContext,
    is_inside,
    too_large,
)
from featcheck.cargo.toolchain import TOOLCHAIN_FILES
from featcheck.comparison.git import DEFAULT_TIMEOUT, READING, Budget, Revision
from featcheck.comparison.listing import FILE, LINK, ObjectInfo, ObjectReader, Walk, missing_object
from featcheck.errors import FeatcheckError
from featcheck.manifest.crate_root import package_roots
from featcheck.policy.settings import CONFIG_FILE

MAX_CONTENT_BYTES = 4 * MAX_LOCKFILE_BYTES
"""All contents written for one revision (a blob written at many paths counts at each)."""

_READ_WHOLE = {
    "Cargo.toml": ("manifest", MAX_MANIFEST_BYTES),
    "Cargo.lock": ("lockfile", MAX_LOCKFILE_BYTES),
    CONFIG_FILE: ("featcheck configuration", MAX_MANIFEST_BYTES),
    # A vendored crate's (`cargo vendor`): cargo reads it beside the manifest to load it. It
    # lists every file of the crate (windows-sys: thousands), so it is bounded as a lockfile.
    ".cargo-checksum.json": ("vendored crate's checksum file", MAX_LOCKFILE_BYTES),
}


def write_tree(
    repository: Path,
    revision: Revision,
    destination: Path,
    trust: TrustContext,
    *,
    timeout: float = DEFAULT_TIMEOUT,
) -> None:
    """`destination`: empty. Past a bound or the timeout: a FeatcheckError, some files written."""
    budget = Budget(timeout)
    refuse_borrowed_objects(revision.git_directory, trust)
    reader = ObjectReader(repository, budget, trust)
    try:
        contents, empty = _selected(Walk(reader, budget, revision.label), revision.commit)
        blobs = _sized(reader, contents, revision.label)
        writer = TreeWriter(destination)
        try:
            read = reader.contents([(object_id, info) for object_id, info, _ in blobs])
            for (_, _, paths), content in zip(blobs, read, strict=True):
                for path in paths:
                    writer.write(path, content)
                budget.check(READING)
            for count, path in enumerate(sorted(empty)):
                writer.write(path, b"")
                if count % 1024 == 0:
                    budget.check(READING)
            # Marks the directory as a repository's top: the audit's checkout root is this one.
            writer.directory((".git",))
        finally:
            writer.close()
    except OSError as error:
        raise FeatcheckError(
            f"--new-since: cannot write the tree of {revision.label}: {error.strerror or error}"
        ) from None
    finally:
        reader.close()


def _selected(walk: Walk, commit: str) -> tuple[dict[tuple[str, ...], str], set[tuple[str, ...]]]:
    """The files read whole (path: blob id) and the target files written empty."""
    contents: dict[tuple[str, ...], str] = {}
    candidates: list[tuple[tuple[str, ...], list[tuple[str, ...]]]] = []
    for entry in walk.entries(commit):
        if entry.kind == FILE and _read_whole(entry.path) is not None:
            contents[entry.path] = entry.object
        elif entry.kind in (FILE, LINK) and (roots := package_roots(entry.path)):
            candidates.append((entry.path, roots))
    packages = {path[:-1] for path in contents if path[-1] == "Cargo.toml"}
    empty = {path for path, roots in candidates if any(root in packages for root in roots)}
    return contents, empty


def _read_whole(path: tuple[str, ...]) -> tuple[str, int] | None:
    """What the file is and how large featcheck reads it, where the audit reads it whole."""
    if path[-1] in ("config", "config.toml") and path[-2:-1] == (".cargo",):
        return ("cargo configuration file", MAX_CONFIG_BYTES)
    return _READ_WHOLE.get(path[-1])


def _sized(
    reader: ObjectReader, contents: dict[tuple[str, ...], str], label: str
) -> list[tuple[str, ObjectInfo, list[tuple[str, ...]]]]:
    """Each blob, its size and the paths it is written at, judged before any is read."""
    paths_of: dict[str, list[tuple[str, ...]]] = {}
    for path in sorted(contents):
        paths_of.setdefault(contents[path], []).append(path)
    blobs = []
    total = 0
    for (object_id, paths), info in zip(
        paths_of.items(), reader.infos(list(paths_of)), strict=True
    ):
        shown = "/".join(paths[0])
        if info is None:
            raise missing_object(shown, object_id, label)
        for path in paths:
            what, limit = _read_whole(path) or ("file", 0)
            if info.kind != "blob" or info.size > limit:
                raise FeatcheckError(
                    f"--new-since: at {label}, {'/'.join(path)} ({object_id[:12]}) "
                    + (too_large(what, limit) if info.kind == "blob" else f"is a {info.kind}")
                )
        total += info.size * len(paths)
        blobs.append((object_id, info, paths))
    if total > MAX_CONTENT_BYTES:
        raise FeatcheckError(
            f"--new-since: the manifests of {label} are larger than "
            f"{MAX_CONTENT_BYTES >> 20} MiB together; featcheck reads no more"
        )
    return blobs


def copy_toolchain_files(repository: Path, audited: Path, destination: Path) -> None:
    """The working tree's toolchain files from `audited` up to `repository`, into the same
    places under `destination` (the earlier tree's own are not written; one copied by an
    earlier run that the working tree no longer has is removed)."""
    relative = audited.relative_to(repository)
    for depth in range(len(relative.parts), -1, -1):
        here = Path(*relative.parts[:depth])
        for name in TOOLCHAIN_FILES:
            source, copy = repository / here / name, destination / here / name
            if source.is_file() and not source.is_symlink():
                copy.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(source, copy)
            elif copy.is_file() and not copy.is_symlink():
                copy.unlink()


_ALTERNATES_DEPTH = 5
"""How deep git follows alternates of alternates."""


def refuse_borrowed_objects(git_directory: Path, trust: TrustContext) -> None:
    """Refuse a repository that borrows objects (`objects/info/alternates`) from a place
    outside the checkout and its git directory: git would read another repository of the
    machine, and featcheck would write its manifests into the cache and quote them in a
    report. A repository cloned with `--reference` to a place outside is refused too: say
    `git repack -a -d` to make it whole."""
    borrowed = [git_directory / "objects"]
    for _ in range(_ALTERNATES_DEPTH):
        following = []
        for objects in borrowed:
            listing = objects / "info" / "alternates"
            try:
                text = listing.read_text(encoding="utf-8", errors="replace")
            except OSError:
                continue
            for line in text.splitlines():
                if not line.strip() or line.startswith("#"):
                    continue
                place = Path(os.path.realpath(objects / line.strip()))
                if not (place.is_relative_to(trust.checkout) or is_inside(place, git_directory)):
                    raise FeatcheckError(
                        "--new-since: the repository borrows objects from outside the checkout "
                        "(objects/info/alternates), and featcheck reads no other repository "
                        "(`git repack -a -d` makes it whole)",
                        path=listing,
                    )
                following.append(place)
        borrowed = following


_DIRECTORY = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_NEW_FILE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC


class TreeWriter:
    """Writes files below `root` (an existing directory). Writing them in sorted order keeps
    one descriptor per directory level open; `close` frees them."""

    def __init__(self, root: Path) -> None:
        self._opened: list[tuple[str, int]] = [("", os.open(root, _DIRECTORY))]

    def write(self, path: tuple[str, ...], content: bytes) -> None:
        directory = self.directory(path[:-1])
        with os.fdopen(os.open(path[-1], _NEW_FILE, 0o644, dir_fd=directory), "wb") as file:
            file.write(content)

    def close(self) -> None:
        while self._opened:
            os.close(self._opened.pop()[1])

    def directory(self, parts: tuple[str, ...]) -> int:
        """The descriptor of directory `parts` below the root, made where missing."""
        kept = 0
        while kept < len(parts) and kept + 1 < len(self._opened):
            if self._opened[kept + 1][0] != parts[kept]:
                break
            kept += 1
        while len(self._opened) > kept + 1:
            os.close(self._opened.pop()[1])
        for name in parts[kept:]:
            parent = self._opened[-1][1]
            try:  # made for an earlier file: opened without following a link
                opened = os.open(name, _DIRECTORY, dir_fd=parent)
            except FileNotFoundError:
                os.mkdir(name, 0o755, dir_fd=parent)
                opened = os.open(name, _DIRECTORY, dir_fd=parent)
            self._opened.append((name, opened))
        return self._opened[-1][1]


# Where `--new-since` keeps the trees of base revisions: one per commit in the user's cache.
#
# A commit's tree never changes, so it is written once (into a hidden directory, renamed into
# place when whole: a run killed half-way leaves nothing that looks complete) and found again by
# the next run, whose audit of it then starts from cargo's answer kept for that path as the
# audit of the working tree does (docs/speed.md). Without the reuse `--new-since` took 2.1-2.6x
# one audit of a 100-member workspace run after run, against a goal of 2x
# (benchmarks/bench_new_since.py). The newest `KEPT` trees stay; older ones are removed. Where
# the cache lies inside the audited checkout (its content is the checkout's), or cannot be
# written, a temporary directory serves one run.
#
# A tree is kept under its commit and its repository (the git directory's resolved path, hashed):
# what one repository holds never stands for another's commit, even where their ids agree. Only a
# tree written whole, every object checked against its id, is kept; a revision refused half-way
# (a bound, the timeout) leaves nothing behind.

KEPT = 8
_IN_USE_SECONDS = 3600
_COMPLETE = ".featcheck-complete"


@contextlib.contextmanager
def revision_tree(
    repository: Path, trust: TrustContext, revision: Revision, *, timeout: float = DEFAULT_TIMEOUT
) -> Iterator[Path]:
    root = None if trust.cache is None else trust.cache / "revisions"
    try:
        if root is not None:
            root.mkdir(parents=True, exist_ok=True)
    except OSError:
        root = None
    if root is None:
        scratch = Path(tempfile.mkdtemp(prefix="featcheck-revision-"))
        try:
            write_tree(repository, revision, scratch, trust, timeout=timeout)
            yield scratch
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
        return
    tree = root / cache_key(revision)
    if not (tree / _COMPLETE).is_file():
        partial = Path(tempfile.mkdtemp(prefix=".partial-", dir=root))
        try:
            write_tree(repository, revision, partial, trust, timeout=timeout)
            with contextlib.suppress(OSError):  # another run put it there first: seen below
                (partial / _COMPLETE).touch()
                if not (tree / _COMPLETE).is_file():  # another run's whole tree may be in use
                    shutil.rmtree(tree, ignore_errors=True)  # an incomplete one, older
                os.rename(partial, tree)
        finally:
            shutil.rmtree(partial, ignore_errors=True)
    try:
        os.utime(tree / _COMPLETE)
        os.utime(tree)
    except OSError:
        raise FeatcheckError(
            f"--new-since: cannot keep the tree of {revision.label} in {root}"
        ) from None
    # Keep the `KEPT` trees used last (and nothing half-written but this run's), and any used
    # within the hour: another run may be auditing it (parallel jobs on one runner).
    used = sorted((_last_used(p), p) for p in root.iterdir() if not p.name.startswith("."))
    for when, old in used[:-KEPT]:
        if when < time.time() - _IN_USE_SECONDS:
            shutil.rmtree(old, ignore_errors=True)
    yield tree


def _last_used(tree: Path) -> float:
    try:
        return tree.stat().st_mtime
    except OSError:
        return math.inf  # another run removed it already


def cache_key(revision: Revision) -> str:
    digest = hashlib.sha256(os.fsencode(revision.git_directory)).hexdigest()[:16]
    return f"{revision.commit}-{digest}"
