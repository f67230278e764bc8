"""The cargo check a run may need: fixes that turn on dependencies Cargo.lock lacks.

Resolution in memory answers every candidate whose packages the lockfile already holds
(`lockcheck.py`). An edit that turns on a package nothing in the workspace used before needs
cargo to pick its version first, and cargo may refuse: re-enabling burn's defaults can pull a
crate whose requirement conflicts with a version the lock keeps. Those candidates, for all
findings of the run together, are written into one temporary copy of the workspace, cargo
metadata runs there once, and the resolver answers again over what it printed. Only when cargo
refuses the whole overlay is each fix asked alone, in the same copy, to find which one it
refuses. The user's files are never touched.
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from featcheck.boundary import is_inside
from featcheck.cargo.toolchain import TOOLCHAIN_FILES
from featcheck.errors import FeatcheckError
from featcheck.fixes.apply import FileChange, plan_edits
from featcheck.fixes.lockcheck import cargo_reason
from featcheck.fixes.reach import added_packages
from featcheck.fixes.search import StillFlagged
from featcheck.graph import DependencyGraph, Node, closure
from featcheck.manifest.crate_root import package_roots
from featcheck.report import Edit
from featcheck.resolution import resolve_builds
from featcheck.workspace.workspace import Workspace

if TYPE_CHECKING:
    from featcheck.fixes.counterfactual import WhatIf
    from featcheck.placement import Flagged

_NOT_COPIED = shutil.ignore_patterns("target", ".git", ".hg", ".jj", "node_modules", ".venv")
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
            subdirectories[:] = set(subdirectories) - _NOT_COPIED(directory, subdirectories)
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
        skipped = set(_NOT_COPIED(directory, names))
        for name in names:
            path = os.path.join(directory, name)
            if path in kept or path in needed or (os.path.isdir(path) and os.path.islink(path)):
                continue
            skipped.add(name)
        return skipped

    return ignored


Pending = tuple["Flagged", tuple[Edit, ...], tuple[str, ...]]
"""A fix that only cargo can confirm: the detection in one member's build on one target (its
build without the fix is what the fix's additions are counted against), the fix's edits, and
the dependencies they turn on that Cargo.lock holds no version of (`package/KEY`)."""


@dataclass(frozen=True)
class Answer:
    """cargo's answer for one pending fix."""

    cleared: bool
    """cargo resolved the copy, and with its versions the finding is gone."""
    added: tuple[str, ...] = ()
    """Packages the fix adds to the flagged builds it was asked for, each once (`name version`)."""
    locked: tuple[str, ...] | None = None
    """Packages it adds to Cargo.lock, which holds every platform's and every optional
    dependency a feature names, built here or not (voxcpm-rs: 3 to the build, 168 to the lock);
    None where the workspace has no Cargo.lock."""
    reason: str = ""
    """Why cargo could not resolve it, or not check it, in one line."""


_UNCHECKED = "cargo could not check it: "


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
        """Path packages outside the workspace and the checkout: featcheck copies nothing there."""
        # The outermost directories only: one may hold another, or the workspace (`..`).
        self.beside = sorted(
            p
            for p in kept
            if not is_inside(p, self.root) and not any(p != q and is_inside(p, q) for q in kept)
        )
        self.base = Path(os.path.commonpath([self.root, *self.beside]))
        """The directory whose layout the copy keeps: the workspace's, or one above it."""
        self._directory: tempfile.TemporaryDirectory[str] | None = None
        self._originals: dict[Path, bytes | None] = {}
        self._ignored: Callable[[str, list[str]], set[str]] = _NOT_COPIED

    @property
    def tree(self) -> Path:
        """The directory holding the whole copy (copied on first use): what a trust context
        for the copy is derived for."""
        if self._directory is None:
            self._directory = self._make()
        return Path(self._directory.name) / "workspace"

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
        tree = Path(directory.name) / "workspace"
        for package in self.beside:
            destination = tree / package.relative_to(self.base)
            shutil.copytree(package, destination, ignore=self._but_root, symlinks=True)
            # The manifests above it, up to the copy's top: the workspace it inherits from.
            for above in package.relative_to(self.base).parents:
                manifest = self.base / above / "Cargo.toml"
                if manifest.is_file() and not manifest.is_symlink():
                    shutil.copyfile(manifest, tree / above / "Cargo.toml")
        copy = tree / self.root.relative_to(self.base)
        shutil.copytree(self.root, copy, ignore=self._ignored, symlinks=True)
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


@dataclass
class OverlayCheck:
    """Confirms pending fixes with `cargo metadata` over one edited copy."""

    workspace_root: Path
    metadata_of: Callable[[Path, Path], Workspace]
    """Runs cargo metadata for the manifest at the given path, in the copy at the other (the
    audit's cargo settings)."""
    what_if: WhatIf
    """The audit's resolver settings: targets, host, resolver, feature unification."""
    still_flagged: StillFlagged
    beside: tuple[Path, ...] = ()
    """The path packages' directories, and the checkout they may be copied from."""
    within: Path | None = None

    def __post_init__(self) -> None:
        self._copy = WorkspaceCopy(self.workspace_root, self.beside, self.within, for_cargo=True)

    def close(self) -> None:
        self._copy.close()

    def confirm(self, pending: Sequence[Pending]) -> list[Answer]:
        together = self._resolve([e for _, edits, _ in pending for e in edits])
        groups = list(dict.fromkeys(edits for _, edits, _ in pending))
        if not isinstance(together, str) or len(groups) == 1:
            # Resolved with every fix made: each counts only what its own new dependencies
            # bring (two fixes of one build each said they added what both do).
            several = len(groups) > 1
            answers = [self._answer(together, item, several, needs) for item, _, needs in pending]
        else:
            alone = {edits: self._resolve(list(edits)) for edits in groups}
            answers = [self._answer(alone[edits], item) for item, edits, _ in pending]
        gained: dict[tuple[Edit, ...], set[str]] = {}
        for (_, edits, _), answer in zip(pending, answers, strict=True):
            gained.setdefault(edits, set()).update(answer.added)
        return [
            replace(a, added=tuple(sorted(gained[e]))) if a.cleared else a
            for (_, e, _), a in zip(pending, answers, strict=True)
        ]

    def _resolve(self, edits: list[Edit]) -> _Resolved | str:
        """cargo's metadata of the copy with `edits` made, and what its Cargo.lock gained; or
        why there is none."""
        if self._copy.left_out:
            outside = os.path.relpath(self._copy.left_out[0], self._copy.root)
            left_out = f"leaves out {outside}, a path package outside the checkout"
            return f"{_UNCHECKED}the copy it is checked on {left_out}"
        try:
            self._copy.apply(plan_edits(edits))
            metadata = self.metadata_of(self._copy.path / "Cargo.toml", self._copy.tree)
            before = self._copy.lockfile(as_copied=True)
            gained = None if before is None else _locked(self._copy.lockfile()) - _locked(before)
            return metadata, gained
        except ValueError:
            return f"{_UNCHECKED}a manifest to edit lies outside the workspace"
        except FeatcheckError as error:
            return "cargo cannot resolve it: " + self._copy.original(cargo_reason(error.message))
        except OSError as error:
            return f"{_UNCHECKED}the copy could not be made: {error.strerror or error}"

    def _answer(
        self,
        resolved: _Resolved | str,
        item: Flagged,
        with_others: bool = False,
        needs: tuple[str, ...] = (),
    ) -> Answer:
        """cargo's answer for `item`'s fix, over what cargo `resolved` with its edits made (and,
        where `with_others`, the other pending fixes' too: the packages it adds, to the build
        and to Cargo.lock, are then those its `needs` bring)."""
        if isinstance(resolved, str):
            return Answer(False, reason=resolved)
        metadata, gained = resolved
        # Path packages have other ids in the copy: find the member by name and version.
        wanted = (item.member.name, item.member.version)
        member = next((m for m in metadata.members if (m.name, m.version) == wanted), None)
        if member is None:
            return Answer(False, reason=f"{_UNCHECKED}the member is not in the fixed copy")
        graphs = resolve_builds(
            metadata,
            [member.id],
            [self.what_if.cfgs[item.target]],
            self.what_if.resolver,
            host=self.what_if.host,
            features=item.selection,
            unify_workspace=self.what_if.unify_workspace,
        )
        graph = graphs[(member.id, item.target)]
        crate = item.detection.node.package
        if crate.is_local:
            # The copy's path packages print another directory; name and version identify.
            same = [n.package for n in graph.nodes() if n.name == crate.name]
            crate = next((s for s in same if s.version == crate.version), crate)
        excused = frozenset(item.detection.deferred_to)
        flagged = self.still_flagged(item.member, item.target, graph, crate, excused)
        added = added_packages(item.view.graph, graph)
        if with_others:
            brought = _brought_by(metadata, graph, needs)
            added = [package for package in added if package in brought]
        locked = None if gained is None else _locked_by(metadata, gained, with_others, needs)
        return Answer(not flagged, tuple(added), locked)


def _brought_by(metadata: Workspace, graph: DependencyGraph, needs: Iterable[str]) -> set[str]:
    """`name version` of every package in `graph` at or below the dependencies `needs` names
    (`package/KEY`, as `WhatIf.describe` writes them) of the packages in it."""
    starts: list[Node] = []
    for need in needs:
        name, _, key = need.rpartition("/")
        for node in graph.named(name):
            package = metadata.package_of(node.package)
            if package is None:
                continue
            for edge in package.edges:
                if edge.name_in_toml == key:
                    dep = metadata.packages[edge.dep]
                    starts += [n for n in graph.named(dep.name) if n.version == dep.version]
    return {f"{n.name} {n.version}" for n in closure(starts, graph.dependencies)}


_Resolved = tuple[Workspace, "set[tuple[str, str]] | None"]
"""cargo's metadata of the edited copy, and the packages its Cargo.lock gained (`name`,
`version`); None where there was no Cargo.lock to gain them."""

_LOCKED = re.compile(r'^\[\[package\]\]\r?\nname = "([^"]*)"\r?\nversion = "([^"]*)"', re.M)


def _locked(lockfile: bytes | None) -> set[tuple[str, str]]:
    """The name and version of every package of a Cargo.lock, as cargo writes it."""
    return set(_LOCKED.findall((lockfile or b"").decode("utf-8", "replace")))


def _locked_by(
    after: Workspace, gained: set[tuple[str, str]], with_others: bool, needs: Iterable[str]
) -> tuple[str, ...]:
    """`name version` of what Cargo.lock `gained`; `with_others` (fixes resolved together),
    those at or below the dependencies `needs` names in cargo's resolution `after`, as
    `_brought_by` counts a build's."""
    if with_others:
        listed = after.packages.listed
        new = {i for i, p in enumerate(listed) if (p.name, p.version) in gained}
        starts: list[int] = []
        for need in needs:
            name, _, key = need.rpartition("/")
            for i in (i for i, p in enumerate(listed) if p.name == name):
                starts += [e.dep for e in after.packages[i].edges if e.name_in_toml == key]
        reached = closure(starts, after.packages.resolved_positions)
        gained = {(listed[i].name, listed[i].version) for i in reached if i in new}
    return tuple(sorted(f"{name} {version}" for name, version in gained))
