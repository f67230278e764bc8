"""Writing the user's files: all or nothing, same mode, never over someone else's change.

A write goes to a temporary file in the same directory, is flushed to disk, gets the original
file's mode, and replaces the original with one atomic rename: a process killed at any moment
leaves either the old file or the new one, never half of either.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from featcheck.errors import FeatcheckError


def write_atomic(path: Path, content: bytes, *, expected: bytes | None = None) -> None:
    """Replace `path` with `content` atomically, keeping its mode.

    With `expected`, the file must still hold exactly those bytes (what featcheck read);
    otherwise nothing is written and a FeatcheckError says why.
    """
    if expected is not None:
        try:
            current = path.read_bytes()
        except OSError as error:
            raise FeatcheckError(f"cannot read: {error.strerror or error}", path=path) from None
        if current != expected:
            raise FeatcheckError(
                "changed since featcheck read it; not overwritten (run featcheck again)", path=path
            )
    if path.exists() and not os.access(path, os.W_OK):
        raise FeatcheckError("is read-only; not changed", path=path)
    mode = path.stat().st_mode & 0o7777 if path.exists() else 0o644
    try:
        handle, temporary = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    except OSError as error:
        raise FeatcheckError(f"cannot write here: {error.strerror or error}", path=path) from None
    try:
        with os.fdopen(handle, "wb") as stream:
            stream.write(content)
            stream.flush()
            os.fsync(stream.fileno())
        os.chmod(temporary, mode)
        os.replace(temporary, path)
    except BaseException as error:
        Path(temporary).unlink(missing_ok=True)
        if isinstance(error, OSError):
            raise FeatcheckError(f"cannot write: {error.strerror or error}", path=path) from None
        raise
