"""Where `--new-since` keeps the trees of base revisions: one per commit in the user's cache.

A commit's tree never changes, so it is written once (into a hidden directory, renamed into
place when whole: a run killed half-way leaves nothing that looks complete) and found again by
the next run, whose audit of it then starts from cargo's answer kept for that path as the
audit of the working tree does (docs/speed.md). Without the reuse `--new-since` took 2.1-2.6x
one audit of a 100-member workspace run after run, against a goal of 2x
(benchmarks/bench_new_since.py). The newest `KEPT` trees stay; older ones are removed. Where
the cache lies inside the audited checkout (its content is the checkout's), or cannot be
written, a temporary directory serves one run.

A tree is kept under its commit and its repository (the git directory's resolved path, hashed):
what one repository holds never stands for another's commit, even where their ids agree. Only a
tree written whole, every object checked against its id, is kept; a revision refused half-way
(a bound, the timeout) leaves nothing behind.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

from featcheck.boundary import TrustContext
from featcheck.comparison.revision import DEFAULT_TIMEOUT, Revision, write_tree
from featcheck.errors import FeatcheckError

KEPT = 8
_COMPLETE = ".featcheck-complete"


@contextlib.contextmanager
def revision_tree(
    repository: Path, trust: TrustContext, revision: Revision, *, timeout: float = DEFAULT_TIMEOUT
) -> Iterator[Path]:
    """The tree of `revision` (see `write_tree`, which takes at most `timeout` seconds), kept
    in the run's trusted cache or made for this run."""
    cache = trust.cache
    root = None if cache is None else cache / "revisions"
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
    yield _kept(root, repository, revision, trust, timeout)


def cache_key(repository: Path, revision: Revision) -> str:
    """`<commit>-<repository>`: the commit, and the repository's git directory hashed."""
    where = revision.git_directory or Path(os.path.realpath(repository))
    digest = hashlib.sha256(os.fsencode(where)).hexdigest()[:16]
    return f"{revision.commit}-{digest}"


def _kept(
    root: Path, repository: Path, revision: Revision, trust: TrustContext, timeout: float
) -> Path:
    tree = root / cache_key(repository, revision)
    if not (tree / _COMPLETE).is_file():
        partial = Path(tempfile.mkdtemp(prefix=".partial-", dir=root))
        try:
            write_tree(repository, revision, partial, trust, timeout=timeout)
            with contextlib.suppress(OSError):  # another run put it there first: seen below
                (partial / _COMPLETE).touch()
                shutil.rmtree(tree, ignore_errors=True)  # an incomplete one, of an older version
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
    _prune(root)
    return tree


def _prune(root: Path) -> None:
    """Keep the `KEPT` trees used last (and nothing half-written but this run's)."""
    trees = sorted(
        (p for p in root.iterdir() if not p.name.startswith(".")),
        key=lambda p: p.stat().st_mtime,
        reverse=True,
    )
    for old in trees[KEPT:]:
        shutil.rmtree(old, ignore_errors=True)
