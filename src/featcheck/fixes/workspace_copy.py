"""A temporary copy of a workspace, for cargo to resolve edits in (a fix, `--fix`'s check, the
probe's build): the user's files are never touched.

Only what cargo reads is copied for its resolution (`_needed_by_cargo`); path packages beside
the workspace and the workspace manifests they inherit from are copied where the copy's
relative paths find them.
"""

from __future__ import annotations

import os
import re
import shutil
import stat
import tempfile
from collections.abc import Callable, Iterable
from pathlib import Path

from featcheck.boundary import MAX_LOCKFILE_BYTES, is_inside
from featcheck.cargo.toolchain import TOOLCHAIN_FILES
from featcheck.fixes.apply import FileChange
from featcheck.manifest.crate_root import package_roots

_TREE = "workspace"
"""The copy's directory in its temporary one; linked packages lie beside it."""
_BUILT = shutil.ignore_patterns("target", ".git", ".hg", ".jj", "node_modules", ".venv")
_CARGO_HOME_CACHES = frozenset({"registry", "git"})
"""What a `.cargo` directory that is a cargo home (a CI cache: `CARGO_HOME=$CI_PROJECT_DIR/.cargo`)
holds besides configuration: gigabytes cargo never reads as the checkout's."""
_LARGEST_SETTING = 1 << 20
"""A file under `.cargo` larger than this is no configuration cargo reads (a planted 3 GiB)."""


def _not_copied(directory: str, names: list[str]) -> set[str]:
    """What no copy holds: what builds make, and a cargo home's caches and large files under
    a `.cargo` directory."""
    skipped = set(_BUILT(directory, names))
    if ".cargo" in Path(directory).parts:
        for name in names:
            path = os.path.join(directory, name)
            cache = name in _CARGO_HOME_CACHES and os.path.isdir(path)
            large = os.path.isfile(path) and os.path.getsize(path) > _LARGEST_SETTING
            if (cache or large) and not os.path.islink(path):
                skipped.add(name)
    return skipped


def _copy_file(source: str, destination: str) -> None:
    """A regular file copied; a FIFO, socket or device becomes an empty file, which cargo
    reads as it reads an empty one, instead of blocking on it or refusing the copy; and so does
    a file larger than anything cargo or featcheck reads to resolve (a model's weights, a
    sparse 4 GiB `src/main.rs`): it took minutes and the temporary directory's space."""
    found = os.lstat(source)
    if stat.S_ISREG(found.st_mode) and found.st_size <= MAX_LOCKFILE_BYTES:
        shutil.copy2(source, destination)
    else:
        Path(destination).touch()


_CONFIGURATION = frozenset({"Cargo.toml", "Cargo.lock", *TOOLCHAIN_FILES})


def _needed_by_cargo(roots: Iterable[Path]) -> Callable[[str, list[str]], set[str]]:
    """What a copy made for cargo's resolution leaves out: every file but the manifests,
    Cargo.lock, cargo's configuration (all of a `.cargo` directory), the toolchain files and the
    targets cargo discovers by their presence (`crate_root.package_roots`, what `--new-since`
    writes of a revision), and every directory holding none of them (a checkout's sources, data
    and documents: thousands of files to write before cargo can start). A link is copied as it
    is, and what a kept one names in the workspace is kept too (a `Cargo.toml` linked to
    `shared-model.toml`: `_point_links_into` then points it at the copy's)."""
    kept: set[str] = set()
    targets: list[tuple[str, list[tuple[str, ...]]]] = []
    for root in roots:
        for directory, subdirectories, files in os.walk(root):
            subdirectories[:] = set(subdirectories) - _not_copied(directory, subdirectories)
            cargo_directory = ".cargo" in Path(directory).parts
            for name in files:
                path = os.path.join(directory, name)
                if cargo_directory or name in _CONFIGURATION:
                    kept.add(path)
                elif packages := package_roots(Path(path).parts):
                    targets.append((path, packages))
    manifests = {Path(path).parts[:-1] for path in kept if path.endswith("Cargo.toml")}
    kept.update(path for path, packages in targets if any(p in manifests for p in packages))
    kept.update(os.path.realpath(path) for path in list(kept) if os.path.islink(path))
    needed = {str(parent) for path in kept for parent in Path(path).parents}

    def ignored(directory: str, names: list[str]) -> set[str]:
        skipped = _not_copied(directory, names)
        for name in names:
            path = os.path.join(directory, name)
            if path in kept or path in needed or (os.path.isdir(path) and os.path.islink(path)):
                continue
            skipped.add(name)
        return skipped

    return ignored


class WorkspaceCopy:
    """One temporary copy of a workspace, given other edits for each question asked of it.

    A path package outside the workspace's directory (`../candle-core` of a crate the workspace
    excludes) is copied beside it, where the copy's `path = "../..."` finds it, if it lies in
    the checkout (`within`): without it cargo could resolve no fix of such a workspace.
    `for_cargo`: only what cargo reads to resolve is copied (`_needed_by_cargo`); else all of
    the workspace but what a build makes, for an audit of the copy (its baseline, its settings)."""

    def __init__(
        self,
        root: Path,
        beside: Iterable[Path] = (),
        within: Path | None = None,
        *,
        for_cargo: bool = False,
    ) -> None:
        self.root = root.resolve()
        self.for_cargo = for_cargo
        found = {Path(os.path.realpath(p)) for p in beside}
        kept = [p for p in found if within is not None and is_inside(p, within)]
        self.left_out = sorted(p for p in found if p not in kept and not is_inside(p, self.root))
        """Path packages outside the workspace and the checkout that the copy cannot link
        (`linked`, below): featcheck copies nothing there."""
        # The outermost directories only: one may hold another, or the workspace (`..`).
        self.beside = sorted(
            p
            for p in kept
            if not is_inside(p, self.root) and not any(p != q and is_inside(p, q) for q in kept)
        )
        # The workspace a package beside it inherits from may lie above them all (daemon-node's
        # guests use ../../sdk, a member of the repository's workspace): it is copied too.
        roots = [r for p in self.beside if (r := _workspace_above(p, within)) is not None]
        self.base = Path(os.path.commonpath([self.root, *self.beside, *roots]))
        """The directory whose layout the copy keeps: the workspace's, or one above it."""
        # One outside the checkout is linked where the copy's relative path finds it, if that
        # place lies in the copy's directory: cargo reads it there as it reads it for the
        # checkout's own audit (featcheck neither quotes nor edits it).
        outermost = [p for p in self.left_out if not any(p != q and is_inside(p, q) for q in found)]
        placed = (
            (p, os.path.normpath(os.path.join(_TREE, os.path.relpath(p, self.base))))
            for p in outermost
        )
        self.linked = [(p, d) for p, d in placed if not d.startswith((os.pardir, _TREE))]
        self.left_out = [p for p in self.left_out if p not in dict(self.linked)]
        self._directory: tempfile.TemporaryDirectory[str] | None = None
        self._originals: dict[Path, bytes | None] = {}
        self._ignored: Callable[[str, list[str]], set[str]] = _not_copied

    @property
    def tree(self) -> Path:
        """The directory holding the whole copy (copied on first use): what a trust context
        for the copy is derived for."""
        if self._directory is None:
            self._directory = self._make()
        return Path(self._directory.name) / _TREE

    @property
    def path(self) -> Path:
        """The copy's workspace root (copied on first use)."""
        return self.tree / self.root.relative_to(self.base)

    def original(self, text: str) -> str:
        """`text` (cargo's words about the copy) with the copy's paths put back as the user's."""
        return text.replace(str(self.tree), str(self.base)) if self._directory else text

    def _make(self) -> tempfile.TemporaryDirectory[str]:
        if self.for_cargo:
            self._ignored = _needed_by_cargo([self.root, *self.beside])
        directory = tempfile.TemporaryDirectory(prefix="featcheck-fix-")
        tree = Path(directory.name) / _TREE
        for package, place in self.linked:
            (Path(directory.name) / place).parent.mkdir(parents=True, exist_ok=True)
            (Path(directory.name) / place).symlink_to(package, target_is_directory=True)
        for package in self.beside:
            destination = tree / package.relative_to(self.base)
            shutil.copytree(
                package, destination, ignore=self._but_root, symlinks=True, copy_function=_copy_file
            )
            # The manifests above it, up to the copy's top: the workspace it inherits from.
            for above in package.relative_to(self.base).parents:
                manifest = self.base / above / "Cargo.toml"
                if manifest.is_file() and not manifest.is_symlink():
                    shutil.copyfile(manifest, tree / above / "Cargo.toml")
        copy = tree / self.root.relative_to(self.base)
        shutil.copytree(
            self.root, copy, ignore=self._ignored, symlinks=True, copy_function=_copy_file
        )
        _point_links_into(copy, self.root)
        lockfile = copy / "Cargo.lock"
        # cargo writes the copy's lockfile: a link would let it write where it points.
        content = lockfile.read_bytes() if lockfile.is_file() else None
        lockfile.unlink(missing_ok=True)
        if content is not None:
            lockfile.write_bytes(content)
        self._originals[lockfile] = content
        return directory

    def _but_root(self, directory: str, names: list[str]) -> set[str]:
        """What a package beside the workspace leaves to the workspace's own copy."""
        ignored = set(self._ignored(directory, names))
        if Path(directory) == self.root.parent:
            ignored.add(self.root.name)
        return ignored

    def moved(self, path: Path) -> Path:
        """Where a file of the workspace (or of a package copied beside it) lies in the copy,
        as a regular file of the copy's own (ValueError: outside what was copied, or where the
        copy's links lead out of it)."""
        real = Path(os.path.realpath(path))
        if not any(is_inside(real, copied) for copied in (self.root, *self.beside)):
            raise ValueError(f"{path} lies outside the copy")
        relative = real.relative_to(self.base)
        target = self.tree / relative
        # A link as the file itself is replaced below; any other link on the way must stay in.
        if not is_inside(target.parent if target.is_symlink() else target, self.tree.resolve()):
            raise ValueError(f"{relative} leads out of the copy")
        if target.is_symlink():
            # A copied link still points at the user's file: the copy gets its own.
            content = target.read_bytes()
            target.unlink()
            target.write_bytes(content)
        return target

    def apply(self, changes: Iterable[FileChange]) -> None:
        """Put every file back as copied, then write `changes` (paths of the workspace)."""
        for path, content in self._originals.items():
            if content is None:
                path.unlink(missing_ok=True)
            else:
                path.write_bytes(content)
        for change in changes:
            target = self.moved(change.path)
            self._originals.setdefault(target, change.original)
            target.write_text(change.updated, encoding="utf-8")

    def lockfile(self, *, as_copied: bool = False) -> bytes | None:
        """The copy's Cargo.lock as cargo left it, or as it was copied."""
        lockfile = self.path / "Cargo.lock"
        if as_copied:
            return self._originals.get(lockfile)
        return lockfile.read_bytes() if lockfile.is_file() else None

    def close(self) -> None:
        if self._directory is not None:
            self._directory.cleanup()
            self._directory = None


_WORKSPACE_TABLE = re.compile(r"^\s*\[\s*workspace\s*[\].]", re.M)


def _workspace_above(package: Path, within: Path | None) -> Path | None:
    """The directory of the nearest manifest at or above `package` with a `[workspace]` table,
    in the checkout: where cargo looks for what the package inherits (`workspace = true`)."""
    for directory in (package, *package.parents):
        if within is None or not is_inside(directory, within):
            return None
        manifest = directory / "Cargo.toml"
        readable = manifest.is_file() and not manifest.is_symlink()
        if readable and _WORKSPACE_TABLE.search(manifest.read_text("utf-8", errors="replace")):
            return directory
    return None


def _point_links_into(copy: Path, root: Path) -> None:
    """A copied link that leads into the workspace by an absolute path would lead cargo in the
    copy back to the user's file, not to the copy's edited one: it is made to point into the
    copy. Links that lead out of the workspace, or to what the copy leaves out (`target/`),
    stay as they are."""
    for directory, subdirectories, files in os.walk(copy):
        for name in (*subdirectories, *files):
            link = Path(directory, name)
            if not link.is_symlink():
                continue
            real = Path(os.path.realpath(root / link.relative_to(copy)))
            copied = copy / real.relative_to(root) if real.is_relative_to(root) else None
            if copied is not None and os.path.lexists(copied):
                link.unlink()
                link.symlink_to(os.path.relpath(copied, link.parent))
