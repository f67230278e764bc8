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

Every file featcheck reads from the checkout goes through `read_checkout_file`: the path is
resolved once, link by link, and a link that lies inside the root but points out of it (a
`Cargo.toml`, a member directory, a `.cargo/config.toml`) is refused by its own name, before
anything behind it is opened; the resolved path is then opened without following links. A read
takes only a regular file below a size limit, refusing a FIFO or device without waiting on it,
and accepts a UTF-8 byte order mark as cargo does.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import NamedTuple

from featcheck.errors import FeatcheckError

MAX_MANIFEST_BYTES = 2 << 20
"""Cargo.toml and featcheck.toml: the largest manifests on crates.io (web-sys, windows) hold
under 300 KB; a larger one is refused rather than parsed for minutes."""

MAX_CONFIG_BYTES = 1 << 20
"""Toolchain files and cargo configuration files are small; a larger one is not read."""

MAX_LOCKFILE_BYTES = 64 << 20
"""Cargo.lock of the largest workspaces stays below a few MB."""

LINK_OUT = "is a symlink that leads out of the checkout; featcheck does not follow it"


def user_cache_directory(environment: Mapping[str, str]) -> Path | None:
    """featcheck's directory in the user's cache: `$XDG_CACHE_HOME/featcheck` (an absolute
    path, as the XDG specification requires), else `~/.cache/featcheck`; None without a home."""
    base = environment.get("XDG_CACHE_HOME", "")
    try:
        root = Path(base) if base and Path(base).is_absolute() else Path.home() / ".cache"
    except RuntimeError:  # no home directory to find
        return None
    return root / "featcheck"


def read_regular_file(
    path: Path | str, what: str, limit: int, *, opened: Path | None = None
) -> bytes:
    """Opened without blocking and checked before anything is read: reading a FIFO would wait
    for a writer forever. `opened`: `path` resolved already (`resolve_within`), opened without
    following a link, so that a link put there since it was resolved is refused, not followed."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0)
    if opened is not None:
        flags |= getattr(os, "O_NOFOLLOW", 0)
    try:
        descriptor = os.open(path if opened is None else opened, flags)
    except FileNotFoundError:
        raise FeatcheckError("no such file", path=path) from None
    except OSError as error:
        raise FeatcheckError(f"cannot read: {error.strerror or error}", path=path) from None
    try:
        status = os.fstat(descriptor)
        if stat.S_ISDIR(status.st_mode):
            raise FeatcheckError(f"is a directory, not a {what}", path=path)
        if not stat.S_ISREG(status.st_mode):
            raise FeatcheckError(
                f"is not a regular file (a FIFO, device or socket); a {what} must be one",
                path=path,
            )
        if status.st_size > limit:
            raise FeatcheckError(too_large(what, limit), path=path)
        with os.fdopen(descriptor, "rb", closefd=False) as stream:
            data = stream.read(limit + 1)
    except OSError as error:
        raise FeatcheckError(f"cannot read: {error.strerror or error}", path=path) from None
    finally:
        os.close(descriptor)
    if len(data) > limit:  # it grew while being read
        raise FeatcheckError(too_large(what, limit), path=path)
    return data


class LeadsOut(FeatcheckError):
    """A checkout file, or a directory on the way to it, is a link out of the checkout. The
    error names the link only: the target may be any file of the machine, and nothing of it
    (not even its name) is shown."""


def checkout_root(audited: Path) -> Path:
    start = _directory(Path(os.path.realpath(audited)))
    root = start
    for directory in _upward(start):
        manifest = directory / "Cargo.toml"
        if directory == start or not os.path.isfile(manifest):
            continue
        try:
            text = read_regular_file(manifest, "Cargo.toml", MAX_MANIFEST_BYTES)
        except FeatcheckError:
            continue
        # A `[workspace]` table, by a line-start check: only the root's extent depends on it,
        # and a false yes only widens what is distrusted.
        if any(line.lstrip().startswith(b"[workspace") for line in text.splitlines()):
            root = directory
    if (repository := repository_root(start)) is not None and root.is_relative_to(repository):
        root = repository
    return root


def repository_root(audited: Path) -> Path | None:
    """The nearest directory at or above `audited` that holds `.git` (a directory, or the file
    of a worktree or submodule): git's top level, found without running git, and never `~` or
    above. `audited` is walked as given (resolve it first to compare resolved)."""
    upward = _upward(_directory(audited))
    return next((directory for directory in upward if os.path.lexists(directory / ".git")), None)


def _directory(path: Path) -> Path:
    return path if path.is_dir() else path.parent


def _upward(start: Path) -> Iterator[Path]:
    try:
        stop: Path | None = Path(os.path.realpath(Path.home()))
    except (RuntimeError, OSError):
        stop = None
    for directory in (start, *start.parents):
        if directory != start and stop is not None and stop.is_relative_to(directory):
            return
        yield directory


def is_inside(path: Path | str, root: Path) -> bool:
    """Whether `path`, with every link followed, lies at or below `root` (resolved already).
    A path that cannot be resolved counts as inside: it is not trusted either way."""
    try:
        return Path(os.path.realpath(path)).is_relative_to(root)
    except (OSError, ValueError):
        return True


def default_home(environment: Mapping[str, str], variable: str) -> Path | None:
    """CARGO_HOME or RUSTUP_HOME (`variable`) as cargo and rustup find it: the environment,
    else ~/.cargo or ~/.rustup; None without a home directory."""
    if home := environment.get(variable):
        return Path(home)
    try:
        return Path.home() / ("." + variable.removesuffix("_HOME").lower())
    except RuntimeError:
        return None


# A NamedTuple, not a dataclass: made before cargo starts (see audit.py).
class TrustContext(NamedTuple):
    """What one run of featcheck trusts, computed once from the checkout the user named
    (`TrustContext.of`) and handed, unchanged but for `root`, to every tree derived from it: the
    copy a fix is checked in, the tree of a `--new-since` revision, the probe's copies. A
    derived tree is the checkout too, so nothing is computed again from its own path: a cargo
    home inside the user's checkout stays untrusted in a copy that lies elsewhere."""

    checkout: Path
    """The root of the checkout the user named (see `checkout_root`), resolved."""
    root: Path
    """The checkout, or a tree derived from it (`derive`): files are read from it, no link out."""
    cache: Path | None
    """featcheck's cache directory; None where it lies inside the checkout or a derived tree."""
    cargo_home: Path | None
    """The CARGO_HOME cargo would use, where it lies outside the checkout and its trees."""
    untrusted_cargo_home: Path | None
    """That CARGO_HOME where it lies inside the checkout or a derived tree: checkout content."""
    trust_checkout: bool = False
    """The user trusts the checkout (`--trust-checkout`): cargo runs as the checkout says."""

    @classmethod
    def of(
        cls, audited: Path, environment: Mapping[str, str], *, trust_checkout: bool = False
    ) -> TrustContext:
        """The context of a run that audits `audited`, the path the user named: call it at an
        entry point only, never for a tree featcheck made (use `derive`)."""
        root = checkout_root(audited)
        context = cls(root, root, user_cache_directory(environment), None, None, trust_checkout)
        return context._placed(default_home(environment, "CARGO_HOME"))

    def derive(self, tree: Path) -> TrustContext:
        """This context for `tree`, a copy or revision tree made from the checkout: the user's
        places are the ones found for the checkout, less any that lies inside `tree`."""
        home = self.cargo_home or self.untrusted_cargo_home
        return self._replace(root=Path(os.path.realpath(tree)))._placed(home)

    def is_untrusted(self, path: Path | str) -> bool:
        return is_inside(path, self.checkout) or is_inside(path, self.root)

    def _placed(self, cargo_home: Path | None) -> TrustContext:
        cache = None if self.cache is not None and self.is_untrusted(self.cache) else self.cache
        if cargo_home is not None and self.is_untrusted(cargo_home):
            return self._replace(cache=cache, cargo_home=None, untrusted_cargo_home=cargo_home)
        return self._replace(cache=cache, cargo_home=cargo_home, untrusted_cargo_home=None)

    def refuse_outside_tree(self, workdir: Path) -> None:
        """A process or reader for `workdir` needs this context derived for the tree that holds
        it: a context of the checkout handed to a copy would trust what the copy holds."""
        if not is_inside(workdir, self.root):
            raise RuntimeError(
                f"featcheck bug: {workdir} lies outside the tree of its trust context "
                f"({self.root}); derive the context for the tree that holds it"
            )


def refuse_checkout_program(program: Path | str, trust: TrustContext, what: str) -> None:
    if trust.is_untrusted(program):
        raise FeatcheckError(
            f"the {what} featcheck would run lies inside the audited checkout, and featcheck "
            "runs none of the checkout's programs; put your own toolchain first on PATH, use "
            "--no-exec, or pass --trust-checkout",
            path=program,
        )


def resolve_within(path: Path | str, root: Path) -> tuple[Path, Path | None]:
    """`path` resolved as the kernel resolves it, link by link, and the first link on the way
    that lies inside `root` (resolved already) and points out of it, if any (its own path as
    written, never its target; the resolution stops there). A path that never enters `root`
    is not the checkout's."""
    text = os.fspath(path)
    if not os.path.isabs(text):
        text = os.path.join(os.getcwd(), text)
    parts = Path(text).parts  # `.` and doubled separators dropped; `..` kept, as the kernel
    top = os.fspath(root)
    below = os.path.join(top, "")

    def inside(candidate: str) -> bool:
        return candidate == top or candidate.startswith(below)

    # Strings, not Path objects: this runs for each component of every file read.
    real = written = parts[0]
    for part in parts[1:]:
        written = os.path.join(written, part)
        if part == "..":
            real = os.path.dirname(real)  # `real` holds no link: this is its real parent
            continue
        step = os.path.join(real, part)
        if not os.path.islink(step):
            real = step
            continue
        target = os.path.realpath(step)
        if inside(step) and not inside(target):
            return Path(target), Path(written)
        real = target
    return Path(real), None


def check_within(path: Path | str, root: Path, why: str) -> Path:
    real, link = resolve_within(path, root)
    if link is not None:
        raise LeadsOut(f"{LINK_OUT} ({why})", path=link)
    return real


def read_checkout_file(path: Path | str, what: str, limit: int, root: Path | None) -> bytes:
    """`root` None: a file of no checkout (the user's own), read without the link check."""
    opened = None if root is None else check_within(path, root, f"reading a {what}")
    return read_regular_file(path, what, limit, opened=opened)


def configured_path_stays_inside(directory: Path, written: str, root: Path) -> bool:
    """Whether `written`, a path a checkout file configures (a baseline, a cargo `include`)
    relative to that file's `directory` (or absolute), stays at or below the checkout `root`
    (resolved): with `..` taken away as written, no link followed, and also as the kernel
    resolves it (a link inside that names the root itself, then `..`, leaves it). A link out
    on the way counts as inside here: reading the file refuses it by the link's own name
    (`read_checkout_file`). What the user names on the command line is not asked this."""
    start = os.path.realpath(directory)  # a checkout file's own directory, read already
    joined = os.path.join(start, written)
    if not Path(os.path.normpath(joined)).is_relative_to(root):
        return False
    real, link = resolve_within(joined, root)
    return link is not None or real.is_relative_to(root)


def too_large(what: str, limit: int) -> str:
    return f"is larger than {limit // (1 << 20)} MiB; featcheck does not read a {what} this large"


def decode_text(data: bytes, path: Path | str) -> str:
    """UTF-8 text without a leading byte order mark (cargo accepts one), or a FeatcheckError
    at the line and column of the first invalid byte."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        line = data[: error.start].count(b"\n") + 1
        column = error.start - (data.rfind(b"\n", 0, error.start) + 1) + 1
        raise FeatcheckError("invalid UTF-8", path=path, line=line, column=column) from None
    return text.removeprefix("\ufeff")
