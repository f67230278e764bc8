"""Where the checkout ends: the one line between what featcheck trusts and what it never trusts.

Everything under the checkout root is the checkout's: its manifests, its cargo configuration,
and also any cargo home, rustup home or cache directory that happens to lie there (CI caches
often put `CARGO_HOME` under the project directory). Only what lies outside it, found through
the user's own environment, is the user's.

The root is the outermost of: the audited directory, the highest directory above it whose
`Cargo.toml` declares a `[workspace]` (cargo may take it as the workspace root), and the nearest
directory above it holding `.git` (the repository a pull request changes). The search stops
below the user's home directory: a dotfiles repository or a stray manifest in `~` must not make
`~/.cargo` checkout content. Paths are compared resolved, so a link into the checkout counts as
inside and a link out of it as outside.
"""

from __future__ import annotations

import os
from pathlib import Path

from featcheck.errors import FeatcheckError
from featcheck.fileio import MAX_MANIFEST_BYTES, read_regular_file


def checkout_root(audited: Path) -> Path:
    """The root of the checkout that holds `audited` (a directory or a manifest), resolved."""
    start = Path(os.path.realpath(audited))
    if not start.is_dir():
        start = start.parent
    root = start
    stop = _home()
    repository: Path | None = None
    for directory in (start, *start.parents):
        if directory != start and stop is not None and stop.is_relative_to(directory):
            break
        if _declares_workspace(directory / "Cargo.toml"):
            root = directory
        if repository is None and os.path.lexists(directory / ".git"):
            repository = directory
    if repository is not None and root.is_relative_to(repository):
        root = repository
    return root


def _home() -> Path | None:
    try:
        return Path(os.path.realpath(Path.home()))
    except (RuntimeError, OSError):
        return None


def _declares_workspace(manifest: Path) -> bool:
    """Whether a manifest has a `[workspace]` table (a line-start check: only the root's
    extent depends on it, and a false yes only widens what is distrusted)."""
    if not os.path.isfile(manifest):
        return False
    try:
        text = read_regular_file(manifest, "Cargo.toml", MAX_MANIFEST_BYTES)
    except FeatcheckError:
        return False
    return any(line.lstrip().startswith(b"[workspace") for line in text.splitlines())


def is_inside(path: Path | str, root: Path) -> bool:
    """Whether `path`, with every link followed, lies at or below `root` (resolved already).
    A path that cannot be resolved counts as inside: it is not trusted either way."""
    try:
        return Path(os.path.realpath(path)).is_relative_to(root)
    except (OSError, ValueError):
        return True
