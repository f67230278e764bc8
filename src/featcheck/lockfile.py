"""Keep the user's Cargo.lock exactly as it was, whatever cargo does while resolving.

`cargo metadata` and `cargo tree` write Cargo.lock when it is missing or out of date with the
manifests (a commit hook often runs right after Cargo.toml was edited). featcheck audits what the
next build would resolve, but it must not change the user's files, so the lockfile that cargo may
write is put back byte for byte afterwards (or removed, if there was none).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from featcheck.fileio import write_atomic


def _candidate_lockfiles(manifest: Path) -> list[Path]:
    """Cargo.lock beside the manifest and beside every ancestor that could be the workspace root."""
    found = []
    directory = manifest.resolve().parent
    while True:
        if directory == manifest.resolve().parent or (directory / "Cargo.toml").is_file():
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
            if path.exists() and not path.is_file():
                continue  # a FIFO or device would block or never end; cargo cannot use it
            try:
                snapshots[path] = path.read_bytes()
            except FileNotFoundError:
                snapshots[path] = None
            except OSError:
                continue  # unreadable: cargo cannot have used it either
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
