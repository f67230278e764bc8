"""The git directory `--new-since` reads, checked before any git process starts.

It must be the checkout's own: a `.git` directory inside it, or, for a linked worktree or a
submodule, a git directory elsewhere that names this checkout back (the worktree's `gitdir`
file, the submodule's `core.worktree`). A `.git` file or link naming another repository of the
machine, or a `commondir` leading to one, would have git read that repository, and featcheck
write its manifests into the cache and quote them in a report. A FIFO where git reads its
state (`HEAD`, `config`, `packed-refs`...) would keep git waiting until --timeout: refused at
once, as every FIFO featcheck meets.
"""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path

from featcheck.boundary import TrustContext, is_inside
from featcheck.errors import FeatcheckError

_STATE = (
    *("HEAD", "config", "config.worktree", "packed-refs", "commondir", "gitdir", "index"),
    *("shallow", "objects/info/alternates"),
)
"""Where git reads its state on the way of `rev-parse`, `ls-tree` and `cat-file`."""
_WORKTREE = re.compile(r"^\s*worktree\s*=\s*(.+?)\s*$", re.M)
_FOREIGN = (
    "--new-since: `.git` names a repository outside the checkout that does not name this "
    "checkout back (no worktree or submodule of it), and featcheck reads no other repository"
)


def check_git_directory(repository: Path, trust: TrustContext) -> None:
    """Refuse, before git runs, a git directory that is not the checkout's (above)."""
    dot_git = repository / ".git"
    git_directory = Path(os.path.realpath(dot_git))
    mode = os.lstat(dot_git).st_mode
    if stat.S_ISREG(mode):
        written = _small_text(dot_git).strip()
        if not written.startswith("gitdir:"):
            raise FeatcheckError("--new-since: `.git` is a file that names no gitdir", path=dot_git)
        git_directory = Path(os.path.realpath(repository / written[len("gitdir:") :].strip()))
    elif not (stat.S_ISDIR(mode) or stat.S_ISLNK(mode)):
        raise FeatcheckError("--new-since: `.git` is a FIFO or device; git would wait on it")
    common = git_directory
    if (git_directory / "commondir").is_file():
        common = Path(os.path.realpath(git_directory / _small_text(git_directory / "commondir")))
    if not (is_inside(common, trust.checkout) or _names_back(git_directory, common, dot_git)):
        raise FeatcheckError(_FOREIGN, path=dot_git)
    if not is_inside(common / "objects", common):  # a link to another repository's objects
        raise FeatcheckError(_FOREIGN.replace("`.git` names", "`objects` is"), path=common)
    for directory in dict.fromkeys((git_directory, common)):
        for name in _STATE:
            path = directory / name
            if os.path.lexists(path) and not (path.is_file() or path.is_dir()):
                raise FeatcheckError(
                    "--new-since: not a regular file where git reads its state (a FIFO?); "
                    "git would wait on it",
                    path=path,
                )


def _names_back(git_directory: Path, common: Path, dot_git: Path) -> bool:
    """Whether a git directory outside the checkout is this checkout's: a linked worktree's
    (`COMMON/worktrees/NAME`, whose `gitdir` names this `.git`) or a submodule's (its
    `core.worktree` names this checkout)."""
    checkout_git = Path(os.path.realpath(dot_git))
    gitdir = git_directory / "gitdir"
    if git_directory.parent == common / "worktrees" and gitdir.is_file():
        named = git_directory / _small_text(gitdir).strip()
        return Path(os.path.realpath(named)) == checkout_git
    config = git_directory / "config"
    if common == git_directory and config.is_file():
        found = _WORKTREE.search(_small_text(config))
        worktree = git_directory / found.group(1) if found else None
        return worktree is not None and Path(os.path.realpath(worktree)) == checkout_git.parent
    return False


def _small_text(path: Path) -> str:
    """A small state file of git's, read only where it is a regular file."""
    if not path.is_file() or path.stat().st_size > 1 << 16:
        raise FeatcheckError("--new-since: not a state file git writes", path=path)
    return path.read_text(encoding="utf-8", errors="replace").strip()
