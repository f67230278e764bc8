"""What `cargo metadata` answered at a project's last audit, given back while nothing it read
has changed: then cargo does not run at all.

cargo's answer is made of files and settings only: the manifest of every package (members and
path dependencies; registry and git packages, which the lockfile pins), the lockfile, the
directories where it finds targets and workspace members, its configuration files, its command
line, environment and binary. So the answer is kept in the user cache (outside the checkout,
as every cache of featcheck's) with what was seen of each: a file's change and modification
times, size, inode and device, a directory's entries. It stands while all of it is the same;
a difference anywhere, and cargo runs as without it. A write or a `touch` sets a file's change
time, and so does putting its modification time back with `utime`: no program can set it back.

An answer is kept only where what was seen is what cargo read: nothing changed from just before
cargo started until it answered (a stale lockfile cargo rewrote, which featcheck puts back; an
editor saving meanwhile), no configuration file includes others, no `members` pattern searches
more than one directory, and featcheck chose cargo's binary (with `--trust-checkout` cargo obeys
the checkout's toolchain files: nothing is kept). docs/speed.md says what it saves.
"""

from __future__ import annotations

import contextlib
import json
import os
import stat
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

try:  # hashlib's blake2b without hashlib, which loads OpenSSL (4 ms before cargo starts)
    from _blake2 import blake2b
except ImportError:  # pragma: no cover - a Python built without it
    from hashlib import blake2b

from featcheck.boundary import MAX_CONFIG_BYTES, read_checkout_file
from featcheck.errors import FeatcheckError
from featcheck.fileio import replace_cache_file
from featcheck.manifest.document import read_manifest

if TYPE_CHECKING:
    from featcheck.cargo.command_setup import CommandSetup
    from featcheck.workspace.workspace import Workspace

MAX_KEPT = 8
"""Answers kept, one per project and command line: the oldest written go first."""

MAX_BYTES = 64 << 20
"""A larger answer is not kept."""

NOT_RUN = "(not run)"
"""The first word of a command shown with `--verbose` that did not run: its kept answer stands."""

_VERSION = 1
_SETTLING_NS = 20_000_000
"""A file changed this close before cargo started may show a change time from before it (the
kernel's clock for file times moves in ticks of up to 10 ms): its answer is not kept."""
_COARSE_NS = 2_000_000_000
_TARGET_DIRECTORIES = ("src/bin", "examples", "tests", "benches")
"""Where cargo finds targets by their files (`src/bin/NAME.rs`, `examples/NAME/main.rs`)."""
_GLOB = frozenset("*?[")
_SHELLS_OWN = frozenset({"_", "OLDPWD", "PWD", "SHLVL"})
"""Variables a shell sets for each command it starts (`_`: its path), which cargo never reads:
run from a hook or a terminal, the same project keeps one answer."""

Seen = list[int] | list[str] | None
"""A file's change and modification times, size, inode and device; a directory's entries (a file
saved by renaming over it changes the directory's times, not its entries); None where missing."""


def _seen(path: str) -> tuple[Seen, int]:
    """What is seen of `path`, and when it last changed (0 where it is missing)."""
    try:
        found = os.stat(path)
        if stat.S_ISDIR(found.st_mode):
            with os.scandir(path) as entries:
                return sorted(entry.name for entry in entries), found.st_ctime_ns
    except OSError:
        return None, 0
    seen = [found.st_ctime_ns, found.st_mtime_ns, found.st_size, found.st_ino, found.st_dev]
    return seen, found.st_ctime_ns


class LastAnswer:
    """The kept answer of one command line: `kept()` before cargo would start, `keep()` once
    it answered, `settle()` before the process ends."""

    def __init__(
        self,
        file: Path,
        programs: Sequence[str],
        cwd: Path,
        environment: dict[str, str],
        checkout: Path | None,
    ) -> None:
        self.file = file
        self.programs = programs
        """cargo's and rustc's binaries (a toolchain updated in place is another cargo)."""
        self.cwd = cwd
        self.checkout = checkout
        """The audited checkout: its root manifest is read as every file of it is."""
        self.environment = environment
        self.started = time.time_ns()
        """When cargo started (reset by `kept()`, which comes just before)."""
        self._answered: tuple[str, list[str]] | None = None

    @classmethod
    def of_command(
        cls, setup: CommandSetup, args: Sequence[str], checkout: Path
    ) -> LastAnswer | None:
        """The kept answer of `cargo ARGS` (the manifest named by its absolute path) as `setup`
        runs it: none without a cache, and only for the cargo featcheck chose, not one the
        checkout's toolchain files name."""
        if (toolchain := setup.toolchain) is None or setup.cache is None:
            return None
        argv = [str(toolchain.cargo), *args, *setup.config.arguments]
        environment = setup.environment
        key = blake2b(digest_size=16)
        settings = sorted(f"{k}={v}" for k, v in environment.items() if k not in _SHELLS_OWN)
        for part in (*argv, str(setup.cwd), *settings):
            key.update(part.encode("utf-8", "surrogatepass") + b"\0")
        file = setup.cache / "metadata" / f"{key.hexdigest()}.json"
        return cls(file, (argv[0], str(toolchain.rustc)), setup.cwd, environment, checkout)

    def kept(self) -> str | None:
        """The kept answer, where every file it was read from is as it was then."""
        self.started = time.time_ns()
        with (
            contextlib.suppress(OSError, ValueError, UnicodeError, LookupError, TypeError),
            open(self.file, encoding="utf-8") as stream,
        ):
            # An answer that stands in for cargo's is taken only from a file the user owns and
            # no one else may write: a cache directory shared with others could hold one planted.
            status = os.fstat(stream.fileno())
            if hasattr(os, "getuid") and (status.st_uid != os.getuid() or status.st_mode & 0o022):
                return None
            header = json.loads(stream.readline())
            if header["version"] != _VERSION:
                return None
            if all(_seen(path)[0] == seen for path, seen in header["inputs"]):
                return stream.read()
        return None

    def keep(self, text: str, metadata: Workspace, manifest_path: Path) -> None:
        """Keep cargo's answer `text` (parsed: `metadata`) for the next audit, with the files
        it was read from: listed now, as cargo answered (the root manifest's member patterns
        read again), seen and written by `settle()` once the audit is done (on a thread beside
        the audit it cost the audit more than writing it after: docs/speed.md)."""
        with contextlib.suppress(OSError, ValueError, FeatcheckError):
            if len(text) <= MAX_BYTES:
                paths = list(dict.fromkeys(self._read_by_cargo(metadata, manifest_path)))
                self._answered = (text, paths)

    def settle(self) -> None:
        if self._answered is None:
            return
        (text, paths), self._answered = self._answered, None
        with contextlib.suppress(OSError, ValueError):
            inputs = [(path, *_seen(path)) for path in paths]
            if any(self._maybe_since(changed) for _, _, changed in inputs):
                return  # changed while cargo worked, or just before: cargo may have read either
            seen = [(path, what) for path, what, _ in inputs]
            header = json.dumps({"version": _VERSION, "inputs": seen})
            if replace_cache_file(self.file, header + "\n" + text):
                _forget_all_but_the_last(self.file.parent)

    def _maybe_since(self, changed: int) -> bool:
        """Whether a change time may be of a change after cargo started. A file system that
        keeps whole seconds (FAT's two) gives a change made then a time up to 2 s before."""
        whole_seconds = changed % 1_000_000_000 == 0
        return changed >= self.started - (_COARSE_NS if whole_seconds else _SETTLING_NS)

    def _read_by_cargo(self, metadata: Workspace, manifest_path: Path) -> Iterator[str]:
        """Every file and directory whose status decides cargo's answer; ValueError where a
        configuration file includes others."""
        root = metadata.root
        yield str(manifest_path)
        yield str(root / "Cargo.lock")
        yield from self.programs
        yield str(root / "Cargo.toml")
        # Where cargo looks for the workspace's root: every directory above the manifest.
        for directory in manifest_path.parent.parents:
            yield str(directory / "Cargo.toml")
        yield from _configuration_files(self.cwd, self.environment)
        yield from _member_directories(root, self.checkout)
        listed = metadata.packages.listed
        for package in listed:
            if package.source is None:  # a path package (first: the one an edit changes)
                yield package.manifest_path
                yield from _target_places(os.path.dirname(package.manifest_path), str(root))
        yield from (package.manifest_path for package in listed if package.source is not None)


def _configuration_files(cwd: Path, environment: dict[str, str]) -> Iterator[str]:
    """Every place cargo looks for its configuration, whether a file is there or not (one created
    later changes the answer; `config_files.config_files` lists only files that exist)."""
    homes = [Path(environment["CARGO_HOME"])] if environment.get("CARGO_HOME") else []
    for directory in (*homes, *(place / ".cargo" for place in (cwd, *cwd.parents))):
        for name in ("config.toml", "config"):
            path = directory / name
            if path.exists() and b"include" in read_checkout_file(
                path, "cargo configuration", MAX_CONFIG_BYTES, None
            ):
                raise ValueError(f"{path} may include other files")
            yield str(path)


def _member_directories(root: Path, checkout: Path | None) -> Iterator[str]:
    """The directories a `[workspace] members` or `exclude` pattern names or searches: a new
    directory there can be a new member."""
    yield str(root)
    manifest = root / "Cargo.toml"
    if not manifest.exists():
        return
    workspace = read_manifest(manifest, root=checkout).data.get("workspace", {})
    if not isinstance(workspace, dict):
        return
    for pattern in [*workspace.get("members", ()), *workspace.get("exclude", ())]:
        if not isinstance(pattern, str):
            continue
        *above, last = Path(pattern).parts or ("",)
        if any(_GLOB & set(part) for part in above):
            raise ValueError(f"{pattern}: a pattern searching more than one directory")
        yield str(root.joinpath(*above) if _GLOB & set(last) else root / pattern)


def _target_places(package: str, root: str) -> Iterator[str]:
    """A path package's directory and the places cargo finds its targets in; and the
    directories between it and the workspace root (a new directory there can be a member).
    Strings, not Path objects: this runs for every path package after each edit."""
    yield package  # build.rs
    yield os.path.join(package, "src")  # lib.rs, main.rs
    for name in _TARGET_DIRECTORIES:
        directory = os.path.join(package, name)
        yield directory
        with contextlib.suppress(OSError), os.scandir(directory) as entries:
            yield from [entry.path for entry in entries if entry.is_dir(follow_symlinks=False)]
    above, inside = os.path.dirname(package), os.path.join(root, "")
    while above.startswith(inside) and above != root:
        yield above
        above = os.path.dirname(above)


def _forget_all_but_the_last(directory: Path) -> None:
    """All but the MAX_KEPT answers written last go, and what a killed writer left."""
    with contextlib.suppress(OSError):
        answers: list[tuple[float, str]] = []
        abandoned: list[str] = []
        for entry in os.scandir(directory):
            modified = entry.stat().st_mtime
            if entry.name.startswith("."):  # a writer's temporary file
                if modified < time.time() - 3600:
                    abandoned.append(entry.path)
            elif entry.name.endswith(".json"):
                answers.append((modified, entry.path))
        for path in [*abandoned, *(path for _, path in sorted(answers)[:-MAX_KEPT])]:
            with contextlib.suppress(OSError):
                os.unlink(path)
