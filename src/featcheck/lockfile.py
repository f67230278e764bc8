"""Keep the user's Cargo.lock exactly as it was, whatever cargo does while resolving.

`cargo metadata` and `cargo tree` write Cargo.lock when it is missing or out of date with the
manifests (a commit hook often runs right after Cargo.toml was edited). featcheck audits what the
next build would resolve, but it must not change the user's files, so the lockfile that cargo may
write is put back byte for byte afterwards (or removed, if there was none).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from featcheck.boundary import MAX_LOCKFILE_BYTES, check_within, read_checkout_file
from featcheck.errors import FeatcheckError
from featcheck.fileio import uninterrupted, write_atomic


def _candidate_lockfiles(manifest: Path) -> list[Path]:
    """Cargo.lock beside the manifest and beside every ancestor that could be the root."""
    found = []
    own = directory = manifest.resolve().parent
    while True:
        if directory == own or (directory / "Cargo.toml").is_file():
            found.append(directory / "Cargo.lock")
        if directory.parent == directory:
            return found
        directory = directory.parent


class LockfileWatch:
    """The lockfiles as they were before cargo ran (None: there was none)."""

    def __init__(self, snapshots: dict[Path, bytes | None]) -> None:
        self._snapshots = snapshots

    def out_of_date(self) -> bool:
        """Whether cargo rewrote a Cargo.lock that was there: it was out of date with the
        manifests before any fix (one cargo writes anew is not: it has no versions to keep)."""
        for path, content in self._snapshots.items():
            if content is None:
                continue
            try:
                if path.read_bytes() != content:
                    return True
            except OSError:
                continue
        return False


class LockfileGuard:
    """Snapshots the candidate lockfiles and restores any that cargo changed."""

    @staticmethod
    @contextmanager
    def around(manifest: Path, checkout: Path) -> Iterator[LockfileWatch]:
        """Around cargo's run on `manifest`, in the checkout rooted at `checkout`."""
        refuse_lockfile_links(manifest, checkout)
        snapshots: dict[Path, bytes | None] = {}
        for path in _candidate_lockfiles(manifest):
            try:
                path.stat()
            except FileNotFoundError:
                snapshots[path] = None
                continue
            except OSError:
                continue  # unreadable: cargo cannot use it either
            if path.is_file() and not os.access(path, os.R_OK):
                continue
            # A FIFO or device is refused at once: cargo would wait on it until the timeout.
            snapshots[path] = read_checkout_file(path, "Cargo.lock", MAX_LOCKFILE_BYTES, checkout)
        try:
            yield LockfileWatch(snapshots)
        finally:
            with uninterrupted():  # Ctrl-C waits until every lockfile is back
                _restore(snapshots)


def _restore(snapshots: dict[Path, bytes | None]) -> None:
    for path, content in snapshots.items():
        try:
            current: bytes | None = path.read_bytes()
        except FileNotFoundError:
            current = None
        except OSError:
            continue
        if current == content:
            continue
        if content is None:
            path.unlink(missing_ok=True)
        else:
            write_atomic(path, content, restoring=True)


def refuse_lockfile_links(manifest: Path, root: Path) -> None:
    """Refuse, before cargo runs on `manifest`, a lockfile of the checkout under `root` that
    cargo would write through to a file elsewhere: a link out of the checkout, or one pointing
    nowhere (cargo creates the file it names, wherever that is; putting the old state back
    would remove only the link)."""
    for lockfile in _candidate_lockfiles(manifest):
        check_within(lockfile, root, "cargo would write through it")
        if lockfile.is_relative_to(root) and os.path.islink(lockfile) and not lockfile.exists():
            raise FeatcheckError(
                "is a symlink to nothing; cargo would create the file it names",
                path=lockfile,
            )
