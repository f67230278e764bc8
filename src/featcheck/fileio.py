"""Writing the user's files all or nothing, and putting back the Cargo.lock cargo wrote;
featcheck's own cache files; cargo's manifests looked for before cargo reads them. (Reading the
checkout's files is boundary.py's.)

A write keeps the file's mode and never goes over someone else's change: it goes to a
temporary file in the same directory, is flushed to disk, and replaces the original with one
atomic rename, so a process killed at any moment leaves either the old file or the new one,
never half of either. On Linux the temporary file has no name until it is complete
(O_TMPFILE), so a killed write almost never leaves it behind.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import stat
import threading
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, NamedTuple

from featcheck.boundary import (
    LINK_OUT,
    MAX_LOCKFILE_BYTES,
    check_within,
    read_checkout_file,
)
from featcheck.errors import FeatcheckError

MAX_SCANNED_ENTRIES = 200_000
"""Directory entries `refuse_special_manifests` looks at before it gives up (a monorepo)."""

_NOT_SCANNED = frozenset({"target", "node_modules"})
_MANIFEST_NAMES = frozenset({"Cargo.toml", "Cargo.lock"})


def refuse_special_manifests(manifest_path: Path, checkout: Path) -> None:
    """Refuse the first entry cargo must not read anywhere it may read a manifest (below the
    outermost directory with a Cargo.toml): a FIFO, device or socket named Cargo.toml or
    Cargo.lock; inside `checkout` (resolved), also a link out of it so named, or a directory
    linking out that holds one (cargo would read another project's manifest as a member or
    path dependency, and write through a lockfile link).

    cargo reads every member's and path dependency's Cargo.toml with a blocking read: one that
    is a FIFO would hold it until the timeout. Looking for them first costs one walk of the
    tree, bounded by MAX_SCANNED_ENTRIES.
    """
    root = manifest_path.absolute().parent
    for directory in root.parents:
        if (directory / "Cargo.toml").is_file():
            root = directory
    pending = [Path(os.path.realpath(root))]  # the walk follows no link: every path is real
    seen = 0
    while pending:
        try:
            entries = os.scandir(pending.pop())
        except OSError:
            continue
        with entries:
            for entry in entries:
                seen += 1
                if seen > MAX_SCANNED_ENTRIES:
                    return
                with contextlib.suppress(OSError):
                    if (why := _linked_out(entry, checkout)) is not None:
                        raise FeatcheckError(why, path=Path(entry.path))
                    if entry.name in _MANIFEST_NAMES:
                        mode = os.stat(entry.path).st_mode
                        if not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):
                            raise FeatcheckError(_SPECIAL, path=Path(entry.path))
                    elif (
                        entry.is_dir(follow_symlinks=False)
                        and not entry.name.startswith(".")
                        and entry.name not in _NOT_SCANNED
                    ):
                        pending.append(Path(entry.path))


_SPECIAL = "is not a regular file (a FIFO, device or socket); cargo would wait on it"
_TO_NOTHING = "is a symlink to nothing; cargo would create the file it names"
_HARD_LINKS = "is a hard link: cargo would write through it to the file's other names"


def _linked_out(entry: os.DirEntry[str], checkout: Path) -> str | None:
    """Why cargo must not follow `entry` (inside the walk), if it is a link it must not follow."""
    if not entry.is_symlink() or not Path(entry.path).is_relative_to(checkout):
        return None  # not a link, or above the checkout: the user's own
    target = Path(os.path.realpath(entry.path))
    manifest = entry.name in _MANIFEST_NAMES
    if target.is_relative_to(checkout):
        return _TO_NOTHING if manifest and not target.exists() else None
    if manifest or (target / "Cargo.toml").exists():
        return f"{LINK_OUT} (cargo would read through it)"
    return None


@contextlib.contextmanager
def uninterrupted() -> Iterator[None]:
    """Hold Ctrl-C (SIGINT) back until the block is done, then let it act: writes that belong
    together (the fixed manifests and Cargo.lock, the lockfiles put back) all happen or, when
    it comes first, none. SIGINT reaches only the main thread; elsewhere, and where SIGINT is
    not Python's to handle, the block runs as it is."""
    previous = signal.getsignal(signal.SIGINT)
    if threading.current_thread() is not threading.main_thread() or not callable(previous):
        yield
        return
    held: list[int] = []
    signal.signal(signal.SIGINT, lambda number, _: held.append(number))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
        if held:
            previous(signal.SIGINT, None)


def write_atomic(
    path: Path, content: bytes, *, expected: bytes | None = None, restoring: bool = False
) -> None:
    """Replace `path` with `content` atomically (see above), keeping its mode; a symlink is
    written through. With `expected`, the file must still hold exactly those bytes (what
    featcheck read), else nothing is written. A file without write permission is refused (even
    for root, who could write it), unless `restoring` puts back bytes that another program
    (cargo, as root) wrote over it. A temporary file left behind by a kill is named
    `.NAME.XXXXXXXX` next to the target: never named like the original, so neither cargo nor
    featcheck reads it; it is safe to delete."""
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
        mode = target.stat().st_mode & 0o7777
    except FileNotFoundError:
        mode = 0o644
    except OSError as error:
        raise FeatcheckError(f"cannot write: {error.strerror or error}", path=path) from None
    else:
        if not restoring and (not mode & 0o222 or not os.access(target, os.W_OK)):
            raise FeatcheckError("is read-only; not changed", path=path)
    try:
        replaced = _replace_from_unnamed_file(target, content, mode)
    except OSError:
        replaced = False  # the file system has no O_TMPFILE: a named temporary file instead
    if not replaced:
        _replace_from_named_file(path, target, content, mode)
    # The rename itself made durable (a power cut after it keeps the new file); not supported
    # everywhere (some file systems, Windows).
    with contextlib.suppress(OSError):
        descriptor = os.open(target.parent, os.O_RDONLY)
        try:
            os.fsync(descriptor)
        finally:
            os.close(descriptor)


def create_hidden_file(directory: Path, prefix: str) -> tuple[int, Path]:
    """A new file `PREFIX` + 8 random hex digits in `directory`, open for writing, readable by
    its owner only (as tempfile.mkstemp makes one, without loading tempfile and shutil into
    what runs before cargo starts)."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL
    for name in ("O_NOFOLLOW", "O_CLOEXEC", "O_BINARY"):
        flags |= getattr(os, name, 0)
    for _ in range(16):
        path = directory / f"{prefix}{os.urandom(4).hex()}"
        try:
            return os.open(path, flags, 0o600), path
        except FileExistsError:
            continue
    raise FileExistsError("no free temporary name")


def _replace_from_named_file(path: Path, target: Path, content: bytes, mode: int) -> None:
    try:
        handle, temporary = create_hidden_file(target.parent, f".{target.name}.")
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
        temporary.unlink(missing_ok=True)
        if isinstance(error, OSError):
            raise FeatcheckError(f"cannot write: {error.strerror or error}", path=path) from None
        raise


def _replace_from_unnamed_file(target: Path, content: bytes, mode: int) -> bool:
    """Linux: write `content` to a file without a name (O_TMPFILE), flush it, then name it and
    at once rename it over `target`: only a kill between those two calls leaves a file behind.
    False where O_TMPFILE or /proc is missing; OSError where the file system lacks it."""
    if (flag := getattr(os, "O_TMPFILE", None)) is None or not os.path.isdir("/proc/self/fd"):
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
                name = f".{target.name}.{os.urandom(4).hex()}"
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


# The user's Cargo.lock, kept exactly as it was whatever cargo does while resolving.
#
# `cargo metadata` and `cargo tree` write Cargo.lock when it is missing or out of date with the
# manifests (a commit hook often runs right after Cargo.toml was edited). featcheck audits what
# the next build would resolve, but it must not change the user's files, so the lockfile that
# cargo may write is put back byte for byte afterwards (or removed, if there was none).


def _candidate_lockfiles(manifest: Path) -> list[Path]:
    """Cargo.lock beside the manifest and beside every ancestor that could be the root."""
    own = manifest.resolve().parent
    return [
        d / "Cargo.lock" for d in (own, *own.parents) if d == own or (d / "Cargo.toml").is_file()
    ]


class LockfileWatch(NamedTuple):
    snapshots: dict[Path, bytes | None]
    """The lockfiles as they were before cargo ran (None: there was none)."""

    def out_of_date(self) -> bool:
        """Whether cargo rewrote a Cargo.lock that was there: it was out of date with the
        manifests before any fix (one cargo writes anew is not: it has no versions to keep)."""
        for path, content in self.snapshots.items():
            with contextlib.suppress(OSError):
                if content is not None and path.read_bytes() != content:
                    return True
        return False


@contextlib.contextmanager
def lockfiles_kept(
    manifest: Path, checkout: Path, *, cargo_writes: bool = True
) -> Iterator[LockfileWatch]:
    """Every Cargo.lock cargo may rewrite, put back as it was once the block ends.
    `cargo_writes`: cargo runs in the block (`--no-exec` writes nothing)."""
    refuse_lockfile_links(manifest, checkout)
    snapshots: dict[Path, bytes | None] = {}
    for path in _candidate_lockfiles(manifest):
        try:
            found = path.stat()
            regular = stat.S_ISREG(found.st_mode) and not path.is_symlink()
            links = found.st_nlink if regular else 1
        except FileNotFoundError:
            snapshots[path] = None
            continue
        except OSError:
            continue  # unreadable: cargo cannot use it either
        if path.is_file() and not os.access(path, os.R_OK):
            continue
        if cargo_writes and links > 1:
            # cargo rewrites an out-of-date lockfile in place, and so every name of the file;
            # putting the old state back replaces this name alone.
            raise FeatcheckError(f"{_HARD_LINKS} ({links} names)", path=path)
        # A FIFO or device is refused at once: cargo would wait on it until the timeout.
        snapshots[path] = read_checkout_file(path, "Cargo.lock", MAX_LOCKFILE_BYTES, checkout)
    try:
        yield LockfileWatch(snapshots)
    finally:
        with uninterrupted():  # Ctrl-C waits until every lockfile is back
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
            raise FeatcheckError(_TO_NOTHING, path=lockfile)


# featcheck's own cache files: JSON written whole, read back only in the format written.


def read_cache(file: Path, version: int, key: str) -> dict[str, Any]:
    with contextlib.suppress(OSError, ValueError):
        document = json.loads(file.read_bytes())
        is_current = isinstance(document, dict) and document.get("version") == version
        if is_current and isinstance(entries := document.get(key), dict):
            return entries
    return {}


def write_cache(file: Path, version: int, key: str, entries: Mapping[str, Any]) -> None:
    replace_cache_file(file, json.dumps({"version": version, key: entries}))


def replace_cache_file(file: Path, text: str) -> bool:
    """Replace a cache file with `text`, atomically but without syncing (a cache lost in a
    crash is only worked out again): written beside it as `.STEM-…` first. False, and nothing
    replaced, where it fails."""
    try:
        file.parent.mkdir(parents=True, exist_ok=True)
        handle, temporary = create_hidden_file(file.parent, f".{file.stem}-")
    except OSError:
        return False
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as stream:
            stream.write(text)
        os.replace(temporary, file)
        return True
    except OSError:
        return False
    finally:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
