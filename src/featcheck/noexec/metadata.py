"""The workspace model from files alone: what `cargo metadata` would give the model.

Inputs: the workspace's manifests, its Cargo.lock, and each registry package's manifest as
unpacked in `$CARGO_HOME/registry/src/*/NAME-VERSION/` or in `vendor/` at the workspace root,
or in the local source that replaces its registry (`noexec.sources`).
The output is what the package table (`workspace.table.package_index`) is built from: the
packages, each entry with the fields the table reads (id, name, version, source,
manifest_path, features, dependencies, targets, edition, as `cargo metadata` writes them), their
resolved edges (dependencies, deps and dep_kinds), the members, the root and the package cargo
would run for. Package ids follow cargo 1.95: `registry+URL#NAME@VERSION`, and for path packages
`path+file:///DIR#VERSION` (`#NAME@VERSION` when the directory is not named after the package).

A package of the lockfile whose manifest is not on disk (never downloaded, a git dependency, a
path outside the workspace root) is not a reason to stop: it enters the data *unread* — no
feature table, no declarations, its lockfile dependencies kept — and `FileMetadata.unread` says
why. The resolver then decides whether any build reaches it (an optional dependency nothing
enables never is), and `noexec.gaps` says which verdicts it could change.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from featcheck.boundary import TrustContext
from featcheck.deadline import NO_DEADLINE, READING, READING_HINT, Deadline
from featcheck.errors import FeatcheckError
from featcheck.noexec.files import is_manifest, printable
from featcheck.noexec.lock_reader import lock_entries
from featcheck.noexec.packages import package_json, path_id, unread_json
from featcheck.noexec.path_packages import PathPackages, refuse_cycles, walk_path_packages
from featcheck.noexec.registry import Registry
from featcheck.noexec.workspace import WorkspaceLayout, discover_workspace
from featcheck.semantics.semver import matches
from featcheck.workspace.names import extern_name
from featcheck.workspace.table import library_crate_name, package_index
from featcheck.workspace.workspace import Workspace, workspace_of

NOT_FETCHED = "not in the local cargo registry or vendor/"
UNTRUSTED_HOME = (
    "CARGO_HOME lies inside the audited checkout, so its registry is the checkout's files and "
    "is not read; set CARGO_HOME outside it"
)
OUTSIDE = "a path outside the workspace root, which --no-exec does not read"
GIT = "a git dependency, which --no-exec does not read"
NOT_FOUND = "a path package no manifest leads to"


@dataclass(frozen=True)
class FileMetadata:
    """The workspace's packages as read from files, and those whose manifests were not."""

    root: Path
    packages: list[dict[str, Any]]
    nodes: list[dict[str, Any]]
    """The resolved edges of each package, as `cargo metadata`'s `resolve.nodes`."""
    members: tuple[str, ...]
    resolve_root: str | None
    """The package cargo would run for: the audited manifest's, None for a virtual one."""
    unread: dict[str, str] = field(default_factory=dict)
    """Package id -> why its manifest was not read."""

    def workspace(self) -> Workspace:
        """The workspace model over these packages."""
        index = package_index(self.packages, self.nodes, self.members, self.resolve_root)
        return workspace_of(index, self.root, self.unread)


def _lock_target(entry: str, by_name: Mapping[str, list[dict[str, Any]]]) -> dict[str, Any] | None:
    """The lock package a `dependencies` entry (`name`, `name version`, `name version (src)`)
    names."""
    parts = entry.split(" ", 2)
    candidates = by_name.get(parts[0], [])
    if len(parts) > 1:
        candidates = [c for c in candidates if c["version"] == parts[1]]
    if len(parts) > 2:
        source = parts[2].strip("()")
        candidates = [c for c in candidates if c.get("source") == source] or candidates
    return candidates[0] if candidates else None


class _LockTargets:
    """`_lock_target` for each distinct `dependencies` entry once (most repeat many times)."""

    def __init__(self, lock: list[dict[str, Any]]) -> None:
        self.by_name: dict[str, list[dict[str, Any]]] = {}
        for entry in lock:
            self.by_name.setdefault(str(entry["name"]), []).append(entry)
        self.found: dict[str, dict[str, Any] | None] = {}

    def __call__(self, entry: str) -> dict[str, Any] | None:
        if entry not in self.found:
            self.found[entry] = _lock_target(entry, self.by_name)
        return self.found[entry]


def _stale(package: str, dependency: str, lock_path: Path) -> FeatcheckError:
    return FeatcheckError(
        f"out of date: {printable(package)} depends on `{printable(dependency)}`, which it does "
        "not list for it (run `cargo generate-lockfile` once, or drop --no-exec)",
        path=lock_path,
    )


def build_metadata(
    manifest: Path, trust: TrustContext, deadline: Deadline = NO_DEADLINE
) -> FileMetadata:
    """The packages of `manifest`'s workspace, from files only, none of them read through a
    link out of the tree of the run's trust context, nor from a cargo home inside it, each
    loop over them within `deadline`."""
    layout = discover_workspace(manifest, trust.root)
    lock_path = layout.root / "Cargo.lock"
    if not is_manifest(lock_path, what="Cargo.lock"):
        raise FeatcheckError(
            "--no-exec needs a Cargo.lock (run `cargo generate-lockfile` once)", path=layout.root
        )
    lock = lock_entries(lock_path, layout.checkout, deadline)
    paths = walk_path_packages(layout, deadline)
    refuse_cycles(paths)
    audited = _audited_directory(manifest, layout.root, paths)
    read = _LockRead(lock, lock_path, deadline)
    _read_packages(read, paths, layout, Registry(layout, trust, audited))
    nodes = _resolve_nodes(read, set(paths.members))
    member_ids = tuple(path_id(d, paths.read[d].name, paths.read[d].version) for d in paths.members)
    resolve_root = None
    if audited in paths.read and isinstance(paths.read[audited].data.get("package"), Mapping):
        resolve_root = path_id(audited, paths.read[audited].name, paths.read[audited].version)
    return FileMetadata(layout.root, read.packages, nodes, member_ids, resolve_root, read.unread)


def _audited_directory(manifest: Path, root: Path, paths: PathPackages) -> Path:
    """The directory of the audited manifest, which must be the root or one of its members."""
    audited = Path(os.path.normpath(manifest.absolute().parent))
    if audited != root and audited not in paths.members:
        raise FeatcheckError(
            "current package believes it's in a workspace when it's not: the workspace root "
            f"{printable(root / 'Cargo.toml')} neither lists nor excludes it (cargo refuses it)",
            path=manifest,
        )
    return audited


@dataclass
class _LockRead:
    """The lockfile's packages as metadata entries, as they are read."""

    lock: list[dict[str, Any]]
    lock_path: Path
    deadline: Deadline
    packages: list[dict[str, Any]] = field(default_factory=list)
    ids: dict[int, str] = field(default_factory=dict)
    """Package id of each lock entry, by the entry's `id()`."""
    unread: dict[str, str] = field(default_factory=dict)

    def add(self, entry: dict[str, Any], package: dict[str, Any], why_unread: str = "") -> None:
        self.packages.append(package)
        self.ids[id(entry)] = package["id"]
        if why_unread:
            self.unread[package["id"]] = why_unread


def _read_packages(
    read: _LockRead, paths: PathPackages, layout: WorkspaceLayout, registry: Registry
) -> None:
    """A metadata entry for each package of the lockfile, read or (with the reason) unread."""
    by_key = {(p.name, p.version): d for d, p in paths.read.items()}
    root = layout.root
    for entry in read.lock:
        read.deadline.check(READING, READING_HINT)
        name, version = str(entry["name"]), str(entry["version"])
        source: str | None = entry.get("source")
        if source is None:
            directory = by_key.get((name, version))
            if directory is not None:
                package_id = path_id(directory, name, version)
                read.add(entry, package_json(paths.read[directory], package_id, None))
                continue
            # Not reached from the manifests ([replace], or no longer used and pruned by
            # cargo's next resolve): unread, so that nothing silently drops it.
            why = OUTSIDE if name in paths.outside else NOT_FOUND
            directory = paths.outside.get(name, root / name)
            package_id = path_id(directory, name, version)
            read.add(entry, unread_json(name, version, package_id, None, directory), why)
            continue
        package_id = f"{source}#{name}@{version}"
        git = source.startswith("git+")
        found = None if git else registry.find_configured(name, version, source)
        if found is not None:
            read.add(entry, package_json(found, package_id, str(source)))
            continue
        where = (registry.dirs[-1] if registry.dirs else root) / f"{name}-{version}"
        why = (
            GIT
            if git
            else registry.unread_reason(source)
            or (UNTRUSTED_HOME if registry.untrusted_home else NOT_FETCHED)
        )
        read.add(entry, unread_json(name, version, package_id, str(source), where), why)
    registry.cache.save()
    listed = {(p["name"], p["version"]) for p in read.packages if p["source"] is None}
    for package in paths.read.values():
        if (package.name, package.version) not in listed:
            raise _stale(f"{package.name} {package.version}", package.name, read.lock_path)


def _resolve_nodes(read: _LockRead, member_dirs: set[Path]) -> list[dict[str, Any]]:
    """metadata's `resolve.nodes`: each read package's edges to the lock packages it declares."""
    lock_target = _LockTargets(read.lock)
    raw_by_id = {p["id"]: p for p in read.packages}
    libraries = {p["id"]: library_crate_name(p) for p in read.packages}
    nodes: list[dict[str, Any]] = []
    for entry in read.lock:
        read.deadline.check(READING, READING_HINT)
        if id(entry) not in read.ids:
            continue
        package = raw_by_id[read.ids[id(entry)]]
        is_member = (
            entry.get("source") is None and Path(package["manifest_path"]).parent in member_dirs
        )
        targets = [
            raw_by_id[read.ids[id(t)]]
            for t in map(lock_target, entry.get("dependencies", ()))
            if t and id(t) in read.ids
        ]
        # An unread package keeps what it may bring, for noexec.gaps.
        dependencies: list[str] = [t["id"] for t in targets]
        deps: list[dict[str, Any]] = []
        if package["id"] not in read.unread:
            dependencies, deps = _node_edges(package, targets, is_member, libraries)
            if entry.get("source") is None:
                _check_listed(package, targets, is_member, read.lock_path)
        nodes.append(
            {"id": package["id"], "dependencies": dependencies, "deps": deps, "features": []}
        )
    return nodes


def _node_edges(
    package: Mapping[str, Any],
    targets: list[dict[str, Any]],
    is_member: bool,
    libraries: Mapping[str, str | None],
) -> tuple[list[str], list[dict[str, Any]]]:
    """A read package's `dependencies` and `deps`, from its declarations."""
    declared: dict[str, list[dict[str, Any]]] = {}
    for decl in package["dependencies"]:
        # cargo resolves dev-dependencies of workspace members only.
        if is_member or decl["kind"] != "dev":
            declared.setdefault(decl["name"], []).append(decl)
    dependencies: list[str] = []
    deps: list[dict[str, Any]] = []
    for dependency in targets:
        named = declared.get(dependency["name"], [])
        node_dep = _node_dep(named, dependency, libraries[dependency["id"]])
        if node_dep is None:
            continue
        dependencies.append(dependency["id"])
        if node_dep["name"] is not None:
            deps.append(node_dep)
    return dependencies, deps


def _check_listed(
    package: Mapping[str, Any],
    resolved: Sequence[Mapping[str, Any]],
    is_member: bool,
    lock_path: Path,
) -> None:
    """Every declaration of a path package must have its entry in Cargo.lock (cargo locks all
    features and targets of path packages, dev-dependencies of members); a missing one means
    the lockfile is out of date, and the audit would silently miss that dependency."""
    for decl in package["dependencies"]:
        if not is_member and (decl["kind"] == "dev" or decl["optional"]):
            continue  # locked only for members (all features) or when something enables it
        if not any(
            r["name"] == decl["name"]
            and (
                decl["path"] is not None
                or decl["source"] == "git"
                or matches(decl["req"], r["version"])
            )
            for r in resolved
        ):
            raise _stale(f"{package['name']} {package['version']}", decl["name"], lock_path)


_matches = functools.lru_cache(maxsize=4096)(matches)
"""`matches`, once per requirement and version: a lockfile repeats both many times."""


def _node_dep(
    named: list[dict[str, Any]], dependency: Mapping[str, Any], library: str | None
) -> dict[str, Any] | None:
    """The `resolve.nodes[].deps[]` entry for an edge, from the declarations that name its
    package (`named`) and the name of that package's library target."""
    fitting = [d for d in named if _matches(d["req"], dependency["version"])] or named
    if not fitting:
        return None
    kinds: list[dict[str, Any]] = []
    for decl in fitting:
        kind = {"kind": decl["kind"], "target": decl["target"]}
        if kind not in kinds:
            kinds.append(kind)
    renames = {d["rename"] for d in fitting if d["rename"]}
    extern: str | None = None
    if library is not None:
        extern = extern_name(next(iter(renames))) if len(renames) == 1 else library
    return {"name": extern, "pkg": dependency["id"], "dep_kinds": kinds}
