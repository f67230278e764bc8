"""Files created below a directory without following any link on the way.

Each directory is made and opened relative to its parent's open descriptor (`O_NOFOLLOW |
O_DIRECTORY`), and each file is created in its directory's descriptor with `O_CREAT | O_EXCL |
O_NOFOLLOW`: a link (or anything else already there) at any step is an error, never a way out.
The revision's tree is written into a directory featcheck has just made and holds no link, so
this is the second guard, not the only one.
"""

from __future__ import annotations

import os
from pathlib import Path

_DIRECTORY = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_NEW_FILE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC


class TreeWriter:
    """Writes files below `root` (an existing directory). Writing them in sorted order keeps
    one descriptor per directory level open; `close` frees them."""

    def __init__(self, root: Path) -> None:
        self._opened: list[tuple[str, int]] = [("", os.open(root, _DIRECTORY))]

    def write(self, path: tuple[str, ...], content: bytes) -> None:
        directory = self._directory(path[:-1])
        file = os.open(path[-1], _NEW_FILE, 0o644, dir_fd=directory)
        try:
            view = memoryview(content)
            while view:
                view = view[os.write(file, view) :]
        finally:
            os.close(file)

    def make_directory(self, path: tuple[str, ...]) -> None:
        self._directory(path)

    def close(self) -> None:
        while self._opened:
            os.close(self._opened.pop()[1])

    def _directory(self, parts: tuple[str, ...]) -> int:
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
