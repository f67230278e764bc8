"""Writing the user's files: all or nothing, same mode, never over someone else's change.

A write goes to a temporary file in the same directory, is flushed to disk, gets the original
file's mode, and replaces the original with one atomic rename: a process killed at any moment
leaves either the old file or the new one, never half of either. On Linux the temporary file
has no name until it is complete (O_TMPFILE), so a killed write almost never leaves it behind.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import tempfile
from pathlib import Path

from featcheck.errors import FeatcheckError


def write_atomic(
    path: Path, content: bytes, *, expected: bytes | None = None, restoring: bool = False
) -> None:
    """Replace `path` with `content` atomically, keeping its mode.

    With `expected`, the file must still hold exactly those bytes (what featcheck read);
    otherwise nothing is written and a FeatcheckError says why. A file without write
    permission is refused (even for root, who could write it), unless `restoring` puts back
    bytes that another program (cargo, as root) wrote over it. A symlink is written through:
    its target is replaced and the link stays.

    Killed at any moment (SIGKILL included), the writer leaves `path` holding either the old
    bytes or the new ones. It may leave its temporary file behind (rarely on Linux, where the
    file gets a name only just before the rename), named `.NAME.XXXXXXXX` next to the target:
    hidden and never named like the original, so neither cargo nor featcheck reads it; it is
    safe to delete.
    """
    target = Path(os.path.realpath(path))
    if expected is not None:
        try:
            current = target.read_bytes()
        except OSError as error:
            raise FeatcheckError(f"cannot read: {error.strerror or error}", path=path) from None
        if current != expected:
            raise FeatcheckError(
                "changed since featcheck read it; not overwritten (run featcheck again)", path=path
            )
    try:
        mode: int | None = target.stat().st_mode & 0o7777
    except FileNotFoundError:
        mode = None
    except OSError as error:
        raise FeatcheckError(f"cannot write: {error.strerror or error}", path=path) from None
    if mode is not None and not restoring and (not mode & 0o222 or not os.access(target, os.W_OK)):
        raise FeatcheckError("is read-only; not changed", path=path)
    final_mode = 0o644 if mode is None else mode
    try:
        replaced = _replace_from_unnamed_file(target, content, final_mode)
    except OSError:
        replaced = False  # the file system has no O_TMPFILE: a named temporary file instead
    if not replaced:
        _replace_from_named_file(path, target, content, final_mode)
    _sync_directory(target.parent)


def _replace_from_named_file(path: Path, target: Path, content: bytes, mode: int) -> None:
    """Write a hidden `.NAME.XXXXXXXX` file, flush it, and rename it over `target`."""
    try:
        handle, temporary = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent)
    except OSError as error:
        raise FeatcheckError(f"cannot write here: {error.strerror or error}", path=path) from None
    try:
        with os.fdopen(handle, "wb") as stream:
            stream.write(content)
            stream.flush()
            os.fchmod(stream.fileno(), mode)
            os.fsync(stream.fileno())
        os.replace(temporary, target)
    except BaseException as error:
        Path(temporary).unlink(missing_ok=True)
        if isinstance(error, OSError):
            raise FeatcheckError(f"cannot write: {error.strerror or error}", path=path) from None
        raise


def _replace_from_unnamed_file(target: Path, content: bytes, mode: int) -> bool:
    """Linux: write `content` to a file without a name (O_TMPFILE), flush it, then give it a
    hidden name and at once rename that over `target`. A writer killed while writing leaves
    nothing; only a kill between the two calls that name and rename it leaves the hidden file.

    False where O_TMPFILE or /proc is missing; OSError where the file system lacks it.
    """
    flag = getattr(os, "O_TMPFILE", None)
    if flag is None or not os.path.isdir("/proc/self/fd"):
        return False
    handle = os.open(target.parent, flag | os.O_WRONLY, 0o600)
    with os.fdopen(handle, "wb") as stream:
        stream.write(content)
        stream.flush()
        os.fchmod(stream.fileno(), mode)
        os.fsync(stream.fileno())
        directory = os.open(target.parent, os.O_RDONLY)
        try:
            for _ in range(16):
                name = f".{target.name}.{secrets.token_hex(4)}"
                try:
                    # dst_dir_fd makes Python call linkat(..., AT_SYMLINK_FOLLOW), which links
                    # the open file itself rather than the /proc symlink (EXDEV).
                    os.link(
                        f"/proc/self/fd/{stream.fileno()}",
                        name,
                        dst_dir_fd=directory,
                        follow_symlinks=True,
                    )
                except FileExistsError:
                    continue
                try:
                    os.replace(name, target.name, src_dir_fd=directory, dst_dir_fd=directory)
                except BaseException:
                    with contextlib.suppress(OSError):
                        os.unlink(name, dir_fd=directory)
                    raise
                return True
        finally:
            os.close(directory)
    raise FileExistsError("no free temporary name")


def _sync_directory(directory: Path) -> None:
    """Make the rename itself durable (a power cut after it keeps the new file)."""
    try:
        descriptor = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(descriptor)
    except OSError:
        pass  # not supported everywhere (some file systems, Windows)
    finally:
        os.close(descriptor)
