"""`--output FILE`: a report written to a file that only featcheck's report can end up in.

In CI the file's name often lies inside the checkout under review, and a pull request may commit
that name as a symlink to any file the runner's user can write (a shell profile, a git hook).
So an existing name must be a regular file; a symlink, directory, FIFO or device there is
refused. Missing directories on the way are made (`-o out/x.sarif` in a fresh checkout), after
that check. The report goes to a fresh temporary file created next to the name (O_EXCL: never an
existing file), which then replaces the name by rename; rename replaces the name itself, never
what a link points to, and a reader sees the old report or the new one, never half of one.
"""

from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path

from featcheck.errors import FeatcheckError


def write_report(path: Path, text: str) -> None:
    """Replace (or create) the regular file `path` with `text`, never writing through a link.

    A relative `path` must not pass through a symlinked directory either (a checkout could
    commit `reports` as a link to a directory outside it); an absolute one was chosen whole by
    whoever wrote the command line, so its directories are taken as they are.
    """
    linked = _linked_directory(path)
    if linked is not None:
        raise FeatcheckError(
            f"the directory {linked} is a symlink; featcheck writes a report only into a real "
            "directory",
            path=path,
        )
    try:
        status: os.stat_result | None = os.lstat(path)
    except FileNotFoundError:
        status = None
    except OSError as error:
        raise FeatcheckError(f"cannot write: {error.strerror or error}", path=path) from None
    if status is not None and not stat.S_ISREG(status.st_mode):
        kind = "a symlink" if stat.S_ISLNK(status.st_mode) else "not a regular file"
        raise FeatcheckError(
            f"is {kind}; featcheck writes a report only to a regular file or a new name",
            path=path,
        )
    directory = path.parent if str(path.parent) else Path(".")
    try:
        directory.mkdir(parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(prefix=f".{path.name}.", dir=directory)
    except OSError as error:
        raise FeatcheckError(f"cannot write: {error.strerror or error}", path=path) from None
    try:
        with os.fdopen(handle, "w", encoding="utf-8", newline="") as stream:
            stream.write(text)
            os.fchmod(stream.fileno(), _new_file_mode())
        os.replace(temporary, path)
    except BaseException as error:
        Path(temporary).unlink(missing_ok=True)
        if isinstance(error, OSError):
            raise FeatcheckError(f"cannot write: {error.strerror or error}", path=path) from None
        raise


def _new_file_mode() -> int:
    """0o666 less the umask: the mode `>` redirection would give a new file."""
    mask = os.umask(0)
    os.umask(mask)
    return 0o666 & ~mask


def _linked_directory(path: Path) -> Path | None:
    """The first directory on the way to a relative `path` that is a symlink, if any."""
    if path.is_absolute():
        return None
    current = Path()
    for part in path.parts[:-1]:
        current = current / part
        if current.is_symlink():
            return current
    return None
