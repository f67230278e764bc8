"""The workspace model from files alone: the packages `cargo metadata` would list, read into it.

Inputs: the workspace's manifests, its Cargo.lock, and each registry package's manifest as
unpacked in `$CARGO_HOME/registry/src/*/NAME-VERSION/` or in `vendor/` at the workspace root,
or in the local source that replaces its registry (`noexec.sources`). Package ids follow cargo
1.95: `registry+URL#NAME@VERSION`, and for path packages `path+file:///DIR#VERSION`
(`#NAME@VERSION` when the directory is not named after the package).

A package of the lockfile whose manifest is not on disk (never downloaded, a git dependency, a
path outside the workspace root) is not a reason to stop: it enters the model *unread* — no
feature table, no declarations, its lockfile dependencies kept — and `Workspace.unread` says
why. The resolver then decides whether any build reaches it (an optional dependency nothing
enables never is), and `noexec.gaps` says which verdicts it could change.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from featcheck.cargo.failures import printable
from featcheck.deadline import NO_DEADLINE, READING, READING_HINT, Deadline
from featcheck.errors import FeatcheckError
from featcheck.noexec.files import is_manifest, lock_entries, lock_targets, table
from featcheck.noexec.gaps import GIT, NOT_FOUND, OUTSIDE
from featcheck.noexec.packages import PackageManifest, path_id, read_package
from featcheck.noexec.registry import Deferred, Registry
from featcheck.noexec.workspace import WorkspaceLayout, discover_workspace
from featcheck.semantics.semver import matches
from featcheck.workspace.model import DEV, Declaration, Package, extern_name
from featcheck.workspace.workspace import Listed, PackageTable, Workspace, declarations_for_edge

if TYPE_CHECKING:
    from featcheck.boundary import TrustContext

_UNREAD_KINDS = frozenset({"lib"})
"""An unread package resolves as a library (see `noexec.gaps`)."""


def _stale(package: str, dependency: str, lock_path: Path) -> FeatcheckError:
    return FeatcheckError(
        f"out of date: {printable(package)} depends on `{printable(dependency)}`, which it does "
        "not list for it (run `cargo generate-lockfile` once, or drop --no-exec)",
        path=lock_path,
    )


def build_metadata(
    manifest: Path,
    trust: TrustContext,
    deadline: Deadline = NO_DEADLINE,
    patches: Sequence[tuple[str, str]] = (),
) -> Workspace:
    """The workspace of `manifest`, from files only, none of them read through a link out of
    the tree of the run's trust context, nor from a cargo home inside it. `patches`: the
    cargo configuration's `[patch]` paths (package, directory)."""
    layout = discover_workspace(manifest, trust.root)
    lock_path = layout.root / "Cargo.lock"
    if not is_manifest(lock_path, what="Cargo.lock"):
        raise FeatcheckError(
            "--no-exec needs a Cargo.lock (run `cargo generate-lockfile` once)", path=layout.root
        )
    lock = lock_entries(lock_path, layout.checkout, deadline)
    paths = walk_path_packages(layout, deadline, patches)
    refuse_cycles(paths)
    audited = Path(os.path.normpath(manifest.absolute().parent))
    if audited != layout.root and audited not in paths.members:
        raise FeatcheckError(
            "current package believes it's in a workspace when it's not: the workspace root "
            f"{printable(layout.root / 'Cargo.toml')} neither lists nor excludes it (cargo "
            "refuses it)",
            path=manifest,
        )
    read = _LockRead(lock, lock_path, deadline)
    _read_packages(read, paths, layout, Registry(layout, trust, audited))
    packages = FilePackages(read, set(paths.members))
    ids = {d: path_id(d, p.name, p.version) for d, p in paths.read.items()}
    member_ids = tuple(ids[d] for d in paths.members)
    resolve_root = ids.get(audited)  # None: a virtual manifest (every one read has [package])
    return Workspace(layout.root, packages, member_ids, resolve_root, read.unread)


@dataclass
class PathPackages:
    read: dict[Path, PackageManifest] = field(default_factory=dict)
    outside: dict[str, Path] = field(default_factory=dict)
    """Package name -> directory, for path dependencies outside the workspace root."""
    members: list[Path] = field(default_factory=list)
    edges: dict[Path, list[Path]] = field(default_factory=dict)
    """Non-dev path dependencies between read packages (for cargo's cycle check)."""


def walk_path_packages(
    layout: WorkspaceLayout,
    deadline: Deadline = NO_DEADLINE,
    configured: Sequence[tuple[str, str]] = (),
) -> PathPackages:
    """The members and every path dependency they reach, each read within `deadline`; path
    dependencies under the root (and not excluded) are members too, as in cargo."""
    found = PathPackages(members=list(layout.members))
    pending: list[tuple[Path, Path | None]] = [(m, None) for m in layout.members]
    # `[patch.REGISTRY] name = { path = ... }` at the root, or in the cargo configuration
    # (`configured`, its paths absolute), puts path packages in the lockfile that no
    # declaration names by path.
    written = [
        (table(spec).get("path"), table(spec).get("package", key))
        for patches in table(layout.root_data.get("patch")).values()
        for key, spec in table(patches).items()
    ]
    for path, name in [*written, *((path, name) for name, path in configured)]:
        if isinstance(path, str) and isinstance(name, str):
            target = Path(os.path.normpath(layout.root / path))
            if layout.is_inside(target):
                pending.append((target, None))
            else:
                found.outside.setdefault(name, target)
    while pending:
        deadline.check(READING, READING_HINT)
        directory, dependent = pending.pop(0)
        if directory in found.read:
            continue
        manifest = directory / "Cargo.toml"
        if not is_manifest(manifest, what="a path dependency"):
            by = found.read[dependent].name if dependent is not None else "the workspace"
            shown = printable(os.path.relpath(manifest, layout.root))
            state = "is not a regular file" if manifest.exists() else "does not exist"
            raise FeatcheckError(
                f"`{shown}` {state}: {by} depends on it by path (cargo refuses this workspace)",
                path=dependent / "Cargo.toml" if dependent is not None else None,
            )
        package = read_package(manifest, layout, local=True)
        found.read[directory] = package
        edges = found.edges.setdefault(directory, [])
        for decl in package.declarations:
            if decl.path is None:
                continue
            target = Path(decl.path)
            if not layout.is_inside(target):
                found.outside.setdefault(decl.name, target)
                continue
            if decl.kind is not DEV and target not in edges:
                edges.append(target)
            # Only a `[workspace]` table makes path dependencies under the root members; a
            # package without one is a workspace of itself alone.
            joins = isinstance(layout.root_data.get("workspace"), Mapping)
            if joins and target not in found.members and not layout.is_excluded(target):
                found.members.append(target)
            pending.append((target, directory))
    return found


def refuse_cycles(packages: PathPackages) -> None:
    """cargo's "cyclic package dependency" among path packages (dev-dependencies may cycle).

    One depth-first walk with a stack of its own: each package and edge is looked at once, so
    a chain of thousands of path packages costs no more than reading them, and reaches no
    recursion limit."""
    on_stack, done = 1, 2
    state: dict[Path, int] = {}
    for start in packages.read:
        if start in state:
            continue
        state[start] = on_stack
        stack = [(start, iter(packages.edges.get(start, ())))]
        while stack:
            node, following = stack[-1]
            for nxt in following:
                if nxt not in packages.read or state.get(nxt) == done:
                    continue
                if state.get(nxt) == on_stack:
                    walked = [n for n, _ in stack]
                    cycle = [*walked[walked.index(nxt) :], nxt]
                    names = " -> ".join(packages.read[p].name for p in cycle)
                    first = packages.read[nxt]
                    raise FeatcheckError(
                        f"cyclic package dependency: package `{first.name} v{first.version}` "
                        f"depends on itself ({names}; cargo refuses this workspace)",
                        path=nxt / "Cargo.toml",
                    )
                state[nxt] = on_stack
                stack.append((nxt, iter(packages.edges.get(nxt, ()))))
                break
            else:
                state[node] = done
                stack.pop()


@dataclass
class _LockRead:
    lock: list[dict[str, Any]]
    lock_path: Path
    deadline: Deadline
    packages: list[tuple[dict[str, Any], Listed, PackageManifest | Deferred | None]] = field(
        default_factory=list
    )
    """Each lock entry with its package and, when found, its manifest (or where it is)."""
    unread: dict[str, str] = field(default_factory=dict)


def _read_packages(
    read: _LockRead, paths: PathPackages, layout: WorkspaceLayout, registry: Registry
) -> None:
    """Each package of the lockfile, read or (with the reason, where it was looked for) unread."""
    by_key = {(p.name, p.version): p for p in paths.read.values()}
    for entry in read.lock:
        read.deadline.check(READING, READING_HINT)
        name, version = str(entry["name"]), str(entry["version"])
        source: str | None = entry.get("source")
        found: PackageManifest | Deferred | None
        if source is None:
            # One not reached from the manifests ([replace], or no longer used and pruned by
            # cargo's next resolve) stays unread, so that nothing silently drops it.
            found = by_key.get((name, version))
            where = paths.outside.get(name, layout.root / name)
            why = OUTSIDE if name in paths.outside else NOT_FOUND
        else:
            git = source.startswith("git+")
            found = None if git else registry.lookup(name, version, source)
            where = (registry.dirs[-1] if registry.dirs else layout.root) / f"{name}-{version}"
            why = GIT if git else registry.unread_reason(source)
        path = found.path if found is not None else where / "Cargo.toml"
        package_id = (
            path_id(path.parent, name, version) if source is None else f"{source}#{name}@{version}"
        )
        read.packages.append((entry, Listed(package_id, name, version, source, str(path)), found))
        if found is None:
            read.unread[package_id] = why
    listed = {(p.name, p.version) for _, p, _ in read.packages if p.source is None}
    for package in paths.read.values():
        if (package.name, package.version) not in listed:
            raise _stale(f"{package.name} {package.version}", package.name, read.lock_path)


class FilePackages(PackageTable):
    """The packages of Cargo.lock in its order, each read into the model when first asked for:
    its manifest (the cargo home's: read only then, see `Registry.lookup`) and declarations
    bound to the lock packages it depends on."""

    def __init__(self, read: _LockRead, member_dirs: set[Path]) -> None:
        # One position per id, holding the last entry of that id, as cargo's answer would.
        last = {listed.id: (entry, listed, found) for entry, listed, found in read.packages}
        super().__init__([listed for _, listed, _ in last.values()])
        self._manifests = [found for _, _, found in last.values()]
        self._unread = read.unread
        self._members = {
            i
            for i, p in enumerate(self.listed)
            if p.source is None and Path(p.manifest_path).parent in member_dirs
        }
        lock_target = lock_targets(read.lock)
        position_of = {id(entry): self.by_id[listed.id] for entry, listed, _ in read.packages}
        self._lock_targets: list[list[int]] = []
        for position, (entry, listed, found) in enumerate(last.values()):
            read.deadline.check(READING, READING_HINT)
            dependencies = map(lock_target, entry.get("dependencies", ()))
            self._lock_targets.append([position_of[id(t)] for t in dependencies if t])
            if listed.source is None and isinstance(found, PackageManifest):
                self._check_listed(position, found, read.lock_path)

    def _check_listed(self, position: int, manifest: PackageManifest, lock_path: Path) -> None:
        """Every declaration of a path package must have its entry in Cargo.lock (cargo locks
        all features and targets of path packages, dev-dependencies of members); a missing one
        means the lockfile is out of date, and the audit would silently miss that dependency."""
        package = self.listed[position]
        resolved = [self.listed[t] for t in self._lock_targets[position]]
        for decl in manifest.declarations:
            if position not in self._members and (decl.kind is DEV or decl.optional):
                continue  # locked only for members (all features) or when something enables it
            if not any(
                r.name == decl.name
                and (decl.path is not None or decl in manifest.git or matches(decl.req, r.version))
                for r in resolved
            ):
                raise _stale(f"{package.name} {package.version}", decl.name, lock_path)

    def _manifest(self, position: int) -> PackageManifest | None:
        """The manifest of the package at `position`, read now if it was only found: one
        that cannot be read leaves the package unread (in `Workspace.unread`, this table's)."""
        manifest = self._manifests[position]
        if isinstance(manifest, Deferred):
            if (read := manifest.read()) is None:
                self._unread[self.listed[position].id] = manifest.unread
            manifest = self._manifests[position] = read
        return manifest

    def _package(self, position: int) -> Package:
        manifest = self._manifest(position)
        if manifest is None:
            return self._record(position, (), [], _UNREAD_KINDS)
        bound = list(self._bound(position, manifest.declarations))
        if position in self._members:
            for target, declarations in bound:
                self._refuse_missing_features(manifest, target, declarations)
        edges = [self.edge(decl, target) for target, found in bound for decl in found]
        kinds, gated, roots = manifest.target_kinds, manifest.gated_binaries, manifest.crate_roots
        return self._record(position, manifest.declarations, edges, kinds, gated, roots)

    def _refuse_missing_features(
        self, manifest: PackageManifest, target: int, declarations: list[Declaration]
    ) -> None:
        """cargo's refusal of a member's line that asks for a feature the package lacks. Not
        for dev-dependencies: no build reads their manifests, and this check reads none more."""
        declarations = [d for d in declarations if d.kind is not DEV]
        dependency = self._manifest(target) if declarations else None
        if dependency is None:
            return  # unread: what it has is unknown
        # `[features]` values naming a dependency, `key/f` and `key?/f`: cargo refuses those in
        # every build, the ones that leave the feature off too.
        named = [v.partition("/") for values in manifest.features.values() for v in values]
        for declaration in declarations:
            asked = [f for f in declaration.features if f != "default" and "/" not in f]
            asked += [
                feature
                for key, slash, feature in named
                if slash and key.removesuffix("?") == declaration.key and feature != "default"
            ]
            if missing := next((f for f in asked if f not in dependency.features), None):
                name = dependency.name
                raise FeatcheckError(
                    f"package `{manifest.name}` depends on `{name}` with feature `{missing}` "
                    f"but `{name}` does not have that feature (cargo refuses this workspace)",
                    path=manifest.path,
                )

    def _bound(
        self, position: int, declarations: tuple[Declaration, ...]
    ) -> Iterator[tuple[int, list[Declaration]]]:
        """Each lock package the package at `position` depends on, with the declarations
        that resolved to it (cargo resolves dev-dependencies of workspace members only)."""
        declared = [d for d in declarations if position in self._members or d.kind is not DEV]
        for target in self._lock_targets[position]:
            name, version = self.listed[target].name, self.listed[target].version
            named = [d for d in declared if d.name == name]
            fitting = [d for d in named if matches(d.req, version)] or named
            if not fitting:
                continue
            library = self._library_name(target)
            # Without a library, metadata lists the dependency by name alone (`kinds` None).
            kinds = None if library is None else dict.fromkeys((d.kind, d.target) for d in fitting)
            renames = {d.rename for d in fitting if d.rename}
            extern = extern_name(next(iter(renames))) if len(renames) == 1 else library
            yield target, declarations_for_edge(declarations, name, version, kinds, extern, library)

    def _dependencies(self, position: int) -> list[int]:
        """The lock packages the package at `position` depends on: those its declarations
        resolved to, or every one Cargo.lock lists for an unread package (what it may bring,
        for noexec.gaps)."""
        if self._manifest(position) is None:
            return self._lock_targets[position]
        return [target for target, _ in self._bound(position, self[position].declarations)]

    def _written_features(self, position: int) -> Mapping[str, list[str]]:
        manifest = self._manifest(position)
        return manifest.features if manifest is not None else {}

    def _library_name(self, position: int) -> str | None:
        manifest = self._manifest(position)
        return manifest.library if manifest is not None else extern_name(self.listed[position].name)

    def resolved_dependencies(self) -> dict[str, tuple[str, ...]]:
        return {
            package.id: tuple(self.listed[t].id for t in self._dependencies(position))
            for position, package in enumerate(self.listed)
        }

    def resolved_positions(self, position: int) -> Sequence[int]:
        return self._lock_targets[position]

    def dependents(self, package_id: str) -> list[str]:
        target = self.by_id.get(package_id)
        if target is None or self._library_name(target) is None:
            return []  # metadata's `deps` leave out edges to a package without a library
        return [
            self.listed[position].id
            for position, targets in enumerate(self._lock_targets)
            if target in targets
            and self._manifest(position) is not None
            and target in self._dependencies(position)
        ]

    def names(self) -> set[str]:
        manifests = filter(None, map(self._manifest, range(len(self.listed))))
        return {p.name for p in self.listed} | {d.name for m in manifests for d in m.declarations}
