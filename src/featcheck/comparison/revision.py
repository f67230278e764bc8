"""The tree of an earlier revision, written from the repository's own objects into a directory
of featcheck's, for `--new-since REF`.

git is asked only to read objects (`rev-parse`, `ls-tree`, `cat-file`): no checkout, no index,
no hook, no filter or attribute of the tree is applied, and the repository's replace refs are
ignored. What the audit reads is written with its contents: every `Cargo.toml`, `Cargo.lock`,
`.cargo/config` and `.cargo/config.toml`, and `featcheck.toml`. Every other file is created
empty, so that cargo discovers the same targets (`src/main.rs`, `src/bin/*.rs`) without a byte
of source, data or binary being copied. The toolchain files (`rust-toolchain`,
`rust-toolchain.toml`) come from the working tree instead, so that both audits run one
toolchain. A path that could leave the directory (absolute, `..`, `.git`) is refused, a link is
kept only where it stays inside the tree, and submodules are empty directories, as in a clone
that has not fetched them.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from featcheck.boundary import is_inside
from featcheck.cargo.toolchain_file import TOOLCHAIN_FILES
from featcheck.errors import FeatcheckError
from featcheck.fileio import MAX_MANIFEST_BYTES
from featcheck.policy.settings import CONFIG_FILE

_READ_WHOLE = frozenset({"Cargo.toml", "Cargo.lock", CONFIG_FILE})
_CARGO_CONFIGS = frozenset({"config", "config.toml"})
_LINK_MODE = "120000"
_SUBMODULE_MODE = "160000"
_GIT_TIMEOUT = 120.0


@dataclass(frozen=True)
class Revision:
    """A commit, as the user named it and as git resolved it."""

    name: str
    commit: str

    @property
    def label(self) -> str:
        """`main (1a2b3c4d)`, or the short commit alone when that is what was named."""
        short = self.commit[:8]
        return short if self.commit.startswith(self.name) else f"{self.name} ({short})"


@dataclass(frozen=True)
class _Entry:
    mode: str
    kind: str
    object: str
    path: PurePosixPath


def resolve_revision(repository: Path, name: str) -> Revision:
    """The commit `name` names in `repository`, or a FeatcheckError saying why not."""
    if not name or name.startswith("-") or "\x00" in name:
        raise FeatcheckError(f"--new-since: `{name}` is not a revision")
    output = _git(
        repository,
        ["rev-parse", "--verify", "--quiet", "--end-of-options", f"{name}^{{commit}}"],
        failure=f"--new-since: `{name}` is not a commit of this repository (in a shallow "
        f"clone, fetch it first: git fetch --depth=1 origin {name})",
    )
    return Revision(name, output.decode("ascii", "replace").strip())


def write_tree(repository: Path, revision: Revision, destination: Path) -> None:
    """The tree of `revision` under `destination` (an empty directory), as the module says."""
    entries = list(_tree_entries(repository, revision.commit))
    wanted = [e for e in entries if e.kind == "blob" and _read_whole(e.path)]
    links = [e for e in entries if e.mode == _LINK_MODE]
    contents = _blobs(repository, [e.object for e in (*wanted, *links)])
    try:
        for entry in entries:
            _write_entry(entry, destination, contents)
        _drop_links_out(destination, links)
        # Marks the directory as a repository's top: the audit's checkout root is this one.
        (destination / ".git").mkdir(exist_ok=True)
    except OSError as error:
        raise FeatcheckError(
            f"--new-since: cannot write the tree of {revision.label}: {error.strerror or error}"
        ) from None


def _write_entry(entry: _Entry, destination: Path, contents: dict[str, bytes]) -> None:
    target = destination.joinpath(*entry.path.parts)
    target.parent.mkdir(parents=True, exist_ok=True)
    if entry.mode == _SUBMODULE_MODE:
        target.mkdir(exist_ok=True)
    elif entry.mode == _LINK_MODE:
        pointed = contents.get(entry.object, b"").decode("utf-8", "replace")
        if pointed and not os.path.isabs(pointed) and "\x00" not in pointed:
            os.symlink(pointed, target)
    elif entry.kind == "blob" and entry.path.name not in TOOLCHAIN_FILES:
        with open(target, "xb") as written:
            written.write(contents.get(entry.object, b""))


def _drop_links_out(destination: Path, links: list[_Entry]) -> None:
    """Remove every link that resolves out of `destination` (through other links too), once
    all are written: the tree is no door to the rest of the machine."""
    root = os.path.realpath(destination)
    for entry in links:
        link = destination.joinpath(*entry.path.parts)
        if not link.is_symlink():
            continue
        resolved = os.path.realpath(link)
        if os.path.commonpath([resolved, root]) != root:
            link.unlink()


def copy_toolchain_files(repository: Path, audited: Path, destination: Path) -> None:
    """The working tree's toolchain files from `audited` up to `repository`, into the same
    places under `destination` (the earlier tree's own are not written; one copied by an
    earlier run that the working tree no longer has is removed)."""
    relative = audited.relative_to(repository)
    for depth in range(len(relative.parts), -1, -1):
        here = Path(*relative.parts[:depth])
        for name in TOOLCHAIN_FILES:
            source, copy = repository / here / name, destination / here / name
            if source.is_file() and not source.is_symlink():
                copy.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(source, copy)
            elif copy.is_file() and not copy.is_symlink():
                copy.unlink()


def _read_whole(path: PurePosixPath) -> bool:
    if path.name in _READ_WHOLE:
        return True
    return path.name in _CARGO_CONFIGS and path.parent.name == ".cargo"


def _tree_entries(repository: Path, commit: str) -> Iterator[_Entry]:
    listing = _git(
        repository,
        ["ls-tree", "-r", "-z", "--full-tree", commit],
        failure=f"--new-since: git could not list the tree of {commit[:12]}",
    )
    for record in listing.split(b"\x00"):
        if not record:
            continue
        header, _, raw_path = record.partition(b"\t")
        mode, kind, name = header.decode("ascii", "replace").split(" ")
        path = _safe_path(raw_path)
        if path is not None:
            yield _Entry(mode, kind, name, path)


def _safe_path(raw: bytes) -> PurePosixPath | None:
    """The entry's path, or None where it could leave the tree or is not a file name here."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return None
    path = PurePosixPath(text)
    parts = path.parts
    if not parts or path.is_absolute() or "\x00" in text:
        return None
    if any(part in ("", ".", "..") or part.lower() == ".git" for part in parts):
        return None
    return path


def _blobs(repository: Path, objects: list[str]) -> dict[str, bytes]:
    """The contents of `objects`, by one `git cat-file --batch`; a blob larger than a manifest
    may be is left empty."""
    if not objects:
        return {}
    output = _git(
        repository,
        ["cat-file", "--batch"],
        stdin="".join(f"{name}\n" for name in dict.fromkeys(objects)).encode("ascii"),
        failure="--new-since: git could not read the revision's files",
    )
    contents: dict[str, bytes] = {}
    position = 0
    while position < len(output):
        end = output.index(b"\n", position)
        name, kind, size_text = output[position:end].decode("ascii", "replace").split(" ")
        size = int(size_text)
        start = end + 1
        if kind == "blob" and size <= MAX_MANIFEST_BYTES:
            contents[name] = output[start : start + size]
        position = start + size + 1
    return contents


def _git(repository: Path, arguments: list[str], *, failure: str, stdin: bytes = b"") -> bytes:
    """One read-only git command in `repository`; its stdout, or a FeatcheckError."""
    git = shutil.which("git")
    if git is None:
        raise FeatcheckError("--new-since needs git on PATH")
    if is_inside(git, repository):
        raise FeatcheckError("the git featcheck would run lies inside the audited checkout")
    environment = {
        **os.environ,
        "GIT_NO_REPLACE_OBJECTS": "1",
        "GIT_TERMINAL_PROMPT": "0",
        "GIT_OPTIONAL_LOCKS": "0",
    }
    command = [git, "-c", "core.fsmonitor=false", "-C", str(repository), *arguments]
    try:
        done = subprocess.run(
            command,
            input=stdin,
            capture_output=True,
            env=environment,
            timeout=_GIT_TIMEOUT,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as error:
        raise FeatcheckError(f"{failure}: {error}") from None
    if done.returncode != 0:
        raise FeatcheckError(failure)
    return done.stdout
