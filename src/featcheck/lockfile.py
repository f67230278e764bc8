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

from featcheck.fileio import MAX_LOCKFILE_BYTES, read_regular_file, write_atomic


def _candidate_lockfiles(manifest: Path) -> list[Path]:
    """Cargo.lock beside the manifest and beside every ancestor that could be the workspace root."""
    found = []
    own = directory = manifest.resolve().parent
    while True:
        if directory == own or (directory / "Cargo.toml").is_file():
            found.append(directory / "Cargo.lock")
        if directory.parent == directory:
            return found
        directory = directory.parent


class LockfileGuard:
    """Snapshots the candidate lockfiles and restores any that cargo changed."""

    @staticmethod
    @contextmanager
    def around(manifest: Path) -> Iterator[None]:
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
            snapshots[path] = read_regular_file(path, "Cargo.lock", MAX_LOCKFILE_BYTES)
        try:
            yield
        finally:
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
