"""The package data of `cargo metadata --format-version 1`, built from files alone.

Inputs: the workspace's manifests, its Cargo.lock, and each registry package's manifest as
unpacked in `$CARGO_HOME/registry/src/*/NAME-VERSION/` or in `vendor/` at the workspace root.
The output has what featcheck reads from cargo's: packages (id, name, version, source,
manifest_path, features, dependencies, targets, edition), `workspace_members`, `workspace_root`
and `resolve` (root, nodes with dependencies, deps and dep_kinds). Package ids follow cargo
1.95: `registry+URL#NAME@VERSION`, and for path packages `path+file:///DIR#VERSION`
(`#NAME@VERSION` when the directory is not named after the package).

A package of the lockfile whose manifest is not on disk (never downloaded, a git dependency, a
path outside the workspace root) is not a reason to stop: it enters the data *unread* — no
feature table, no declarations, its lockfile dependencies kept — and `FileMetadata.unread` says
why. The resolver then decides whether any build reaches it (an optional dependency nothing
enables never is), and `noexec.gaps` says which verdicts it could change.
"""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlparse

from featcheck.cargo.checkout_config import default_cargo_home
from featcheck.cargo.semver import matches
from featcheck.errors import FeatcheckError
from featcheck.fileio import MAX_LOCKFILE_BYTES
from featcheck.noexec.archive import read_archive
from featcheck.noexec.cache import ManifestCache, cache_file
from featcheck.noexec.crate_targets import (
    ArchiveFiles,
    DirectoryFiles,
    PackageFiles,
    crate_targets,
)
from featcheck.noexec.files import (
    has_control,
    is_manifest,
    load_toml,
    printable,
    shape_error,
    table,
    tomllib_loads,
    valid_package_name,
)
from featcheck.noexec.targets import builtin_cfg
from featcheck.noexec.workspace import WorkspaceLayout, discover_workspace

_TARGET_NAME = re.compile(r"[A-Za-z0-9_.-]+")
CRATES_IO = "registry+https://github.com/rust-lang/crates.io-index"
_DEPENDENCY_TABLES: tuple[tuple[str, str | None, str], ...] = (
    ("dependencies", None, "dependencies"),
    ("dev-dependencies", "dev", "dev_dependencies"),
    ("build-dependencies", "build", "build_dependencies"),
)
NOT_FETCHED = "not in the local cargo registry or vendor/"
OUTSIDE = "a path outside the workspace root, which --no-exec does not read"
GIT = "a git dependency, which --no-exec does not read"
NOT_FOUND = "a path package no manifest leads to"


@dataclass(frozen=True)
class FileMetadata:
    """`cargo metadata` from files, and the packages whose manifests were not read."""

    document: dict[str, Any]
    unread: dict[str, str] = field(default_factory=dict)
    """Package id -> why its manifest was not read."""


def _path_id(directory: Path, name: str, version: str) -> str:
    posix = directory.as_posix()
    url = "path+file://" + quote(posix if posix.startswith("/") else "/" + posix, safe="/:")
    return f"{url}#{version}" if directory.name == name else f"{url}#{name}@{version}"


def _package_field(package: Mapping[str, Any], key: str, root_data: Mapping[str, Any]) -> Any:
    value = package.get(key)
    if isinstance(value, Mapping) and value.get("workspace") is True:
        return table(table(root_data.get("workspace")).get("package")).get(key)
    return value


def _strings(value: Any, what: str) -> list[str]:
    """An array of names (features): cargo refuses other types and control characters."""
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise TypeError(f"{what} must be an array of strings")
    if any(has_control(v) for v in value):
        raise ValueError(f"{what} holds a control character")
    return list(value)


def _platform(key: str) -> str:
    """A `[target.KEY]` key as cargo accepts it: a target name or a cfg expression that
    parses (checked against any cfg table: only the syntax matters here)."""
    if key.startswith("cfg("):
        try:
            builtin_cfg("x86_64-unknown-linux-gnu").applies(key)
        except ValueError as error:
            raise ValueError(f"invalid cfg expression `{key}` ({error})") from None
    elif _TARGET_NAME.fullmatch(key) is None:
        raise ValueError(f"invalid target name `{key}`")
    return key


def _declaration(
    key: str,
    spec: Any,
    kind: str | None,
    target: str | None,
    package_dir: Path,
    root: Path,
    root_data: Mapping[str, Any],
) -> dict[str, Any]:
    base_dir = package_dir
    if isinstance(spec, Mapping) and spec.get("workspace") is True:
        inherited = table(table(root_data.get("workspace")).get("dependencies")).get(key)
        if isinstance(inherited, str):
            inherited = {"version": inherited}
        if not isinstance(inherited, Mapping):
            raise TypeError(f"`{key}` inherits from [workspace.dependencies], which lacks it")
        features = [
            *_strings(inherited.get("features"), f"features of {key}"),
            *_strings(spec.get("features"), f"features of {key}"),
        ]
        merged = {**inherited, "features": features}
        if "optional" in spec:
            merged["optional"] = spec["optional"]
        if spec.get("default-features", spec.get("default_features")) is True:
            merged["default-features"] = True
        spec = merged
        base_dir = root
    if isinstance(spec, str):
        spec = {"version": spec}
    if not isinstance(spec, Mapping):
        raise TypeError(f"dependency `{key}` must be a version string or a table")
    name = spec.get("package", key)
    if not valid_package_name(name):
        raise TypeError(f"invalid dependency name `{name}`")
    path = spec.get("path")
    if path is not None and not isinstance(path, str):
        raise TypeError(f"`path` of {key} must be a string")
    full_path = os.path.normpath(base_dir / path) if path is not None else None
    uses_default = spec.get("default-features", spec.get("default_features", True))
    source = None if full_path is not None else CRATES_IO
    if isinstance(spec.get("git"), str):
        source = "git"
    return {
        "name": name,
        "source": source,
        "req": str(spec.get("version", "*")),
        "kind": kind,
        "rename": key if "package" in spec else None,
        "optional": spec.get("optional", False) is True,
        "uses_default_features": uses_default is not False,
        "features": _strings(spec.get("features"), f"features of {key}"),
        "target": target,
        "registry": None,
        "path": full_path,
    }


def _declarations(
    data: Mapping[str, Any], package_dir: Path, root: Path, root_data: Mapping[str, Any]
) -> list[dict[str, Any]]:
    tables: list[tuple[Mapping[str, Any], str | None]] = [(data, None)]
    for platform, platform_table in table(data.get("target")).items():
        tables.append((table(platform_table), _platform(str(platform))))
    found: list[dict[str, Any]] = []
    for section_table, target in tables:
        for section, kind, alias in _DEPENDENCY_TABLES:
            entries = section_table.get(section, section_table.get(alias))
            if entries is not None and not isinstance(entries, Mapping):
                raise TypeError(f"[{section}] must be a table")
            for key, spec in (entries or {}).items():
                found.append(_declaration(key, spec, kind, target, package_dir, root, root_data))
    return found


def _features(data: Mapping[str, Any], declarations: list[dict[str, Any]]) -> dict[str, list[str]]:
    features = {
        str(k): _strings(values, f"feature {k}")
        for k, values in table(data.get("features")).items()
    }
    if any(has_control(name) for name in features):
        raise ValueError("a feature name holds a control character")
    explicit = {
        value[len("dep:") :]
        for values in features.values()
        for value in values
        if value.startswith("dep:")
    }
    for decl in declarations:
        key = decl["rename"] or decl["name"]
        if decl["optional"] and key not in explicit and key not in features:
            features[key] = [f"dep:{key}"]
    return features


@dataclass(frozen=True)
class _Manifest:
    """One package manifest that was read."""

    path: Path
    data: Mapping[str, Any]
    name: str
    version: str
    declarations: list[dict[str, Any]]
    features: dict[str, list[str]]
    targets: list[dict[str, Any]]
    edition: str

    def distilled(self) -> dict[str, Any]:
        """What the package data needs of a registry manifest (see `noexec.cache`)."""
        return {
            "name": self.name,
            "version": self.version,
            "dependencies": self.declarations,
            "features": self.features,
            "targets": self.targets,
            "edition": self.edition,
        }

    @classmethod
    def from_distilled(cls, path: Path, kept: dict[str, Any]) -> _Manifest:
        """The manifest as `distilled` kept it."""
        return cls(
            path,
            {},
            kept["name"],
            kept["version"],
            kept["dependencies"],
            kept["features"],
            kept["targets"],
            kept["edition"],
        )


def _read_package(
    manifest: Path,
    layout: WorkspaceLayout,
    *,
    local: bool,
    data: Mapping[str, Any] | None = None,
    files: PackageFiles | None = None,
) -> _Manifest:
    """A package manifest (read from `manifest` unless its `data` and `files` are given);
    wrong shapes become a FeatcheckError naming the file."""
    if data is None:
        data = layout.root_data if manifest.parent == layout.root else load_toml(manifest)
    files = DirectoryFiles(manifest.parent) if files is None else files
    root_data = layout.root_data if local else {}
    try:
        package = data.get("package")
        if not isinstance(package, Mapping):
            raise TypeError("no [package] table")
        name = package.get("name")
        if not valid_package_name(name):
            raise TypeError(f"invalid package name `{name}`")
        version = _package_field(package, "version", root_data)
        version = "0.0.0" if version is None else version
        if not isinstance(version, str):
            raise TypeError("`package.version` must be a string")
        declarations = _declarations(data, manifest.parent, layout.root, root_data)
        features = _features(data, declarations)
        targets = crate_targets(data, files, name)
        edition = _package_field(package, "edition", root_data)
        edition = edition if isinstance(edition, str) else "2015"
        return _Manifest(manifest, data, name, version, declarations, features, targets, edition)
    except (TypeError, ValueError, AttributeError, OSError) as error:
        raise shape_error(manifest, error) from None


def _package_json(
    found: _Manifest, package_id: str, source: str | None, layout: WorkspaceLayout
) -> dict[str, Any]:
    return {
        "name": found.name,
        "version": found.version,
        "id": package_id,
        "source": source,
        "dependencies": found.declarations,
        "targets": found.targets,
        "features": found.features,
        "manifest_path": str(found.path),
        "edition": found.edition,
    }


def _unread_json(
    name: str, version: str, package_id: str, source: str | None, where: Path
) -> dict[str, Any]:
    """A package known only from the lockfile: a library with no features or declarations."""
    return {
        "name": name,
        "version": version,
        "id": package_id,
        "source": source,
        "dependencies": [],
        "targets": [{"kind": ["lib"], "crate_types": ["lib"], "name": name.replace("-", "_")}],
        "features": {},
        "manifest_path": str(where / "Cargo.toml"),
        "edition": "2021",
    }


_CRATES_IO_SOURCES = (CRATES_IO, "sparse+https://index.crates.io/")
_CRATES_IO_DIRS = ("index.crates.io-", "github.com-1ecc6299db9ec823")


def _index_prefixes(source: str) -> tuple[str, ...]:
    """How cargo names the `registry/src` directories of `source` (`HOST-HASH`)."""
    if source in _CRATES_IO_SOURCES:
        return _CRATES_IO_DIRS
    host = urlparse(source.partition("+")[2]).hostname or ""
    return (f"{host}-",) if host else ()


def _registry_dirs(cargo_home: Path | None, root: Path, kind: str = "src") -> list[Path]:
    """Where registry packages may be: vendor/ first, then the cargo registry's `kind`
    directories (`src`: unpacked packages; `cache`: the downloaded `.crate` archives)."""
    dirs = [root / "vendor"] if kind == "src" and (root / "vendor").is_dir() else []
    if cargo_home is not None:
        src = cargo_home / "registry" / kind
        # No registry on this machine: every registry package stays unread.
        with contextlib.suppress(OSError):
            dirs.extend(sorted(p for p in src.iterdir() if p.is_dir()))
    return dirs


class _Registry:
    """Finds registry packages' manifests in vendor/ (inside the checkout) or the cargo home."""

    def __init__(self, layout: WorkspaceLayout, environment: Mapping[str, str]) -> None:
        self.layout = layout
        self.vendor = layout.root / "vendor"
        cargo_home = default_cargo_home(environment)
        self.dirs = _registry_dirs(cargo_home, layout.root)
        self.archives = _registry_dirs(cargo_home, layout.root, "cache")
        self.cache = ManifestCache(cache_file(environment) if self.dirs or self.archives else None)

    def find(self, name: str, version: str, source: str) -> _Manifest | None:
        prefixes = _index_prefixes(source)
        for directory in self.dirs:
            vendored = directory == self.vendor
            if not vendored and not directory.name.startswith(prefixes):
                continue  # another registry's packages
            for candidate in (directory / f"{name}-{version}", directory / name):
                manifest = candidate / "Cargo.toml"
                found = self._read(manifest, vendored)
                if found is not None and found.name == name and found.version == version:
                    return found
        for directory in self.archives:
            if directory.name.startswith(prefixes):
                found = self._read_archive(directory / f"{name}-{version}.crate", name, version)
                if found is not None and found.name == name and found.version == version:
                    return found
        return None

    def _read_archive(self, archive: Path, name: str, version: str) -> _Manifest | None:
        kept = self.cache.get(archive)
        if kept is not None:
            with contextlib.suppress(KeyError, TypeError):
                return _Manifest.from_distilled(archive, kept)
        if not archive.is_file():
            return None
        package = read_archive(archive, name, version)
        if package is None:
            return None
        try:
            data = tomllib_loads(package.manifest)
            found = _read_package(
                archive, self.layout, local=False, data=data, files=ArchiveFiles(package.files)
            )
        except (FeatcheckError, ValueError):
            return None  # unreadable: the package stays unread
        self.cache.put(archive, found.distilled())
        return found

    def _read(self, manifest: Path, vendored: bool) -> _Manifest | None:
        if vendored and not self.layout.is_inside(manifest):
            return None  # a link out of the checkout: not read
        kept = None if vendored else self.cache.get(manifest)
        if kept is not None:
            with contextlib.suppress(KeyError, TypeError):
                return _Manifest.from_distilled(manifest, kept)
        try:
            if not manifest.is_file():
                return None
            found = _read_package(manifest, self.layout, local=False)
        except (FeatcheckError, OSError):
            return None  # unreadable: the package stays unread
        if not vendored:
            self.cache.put(manifest, found.distilled())
        return found


def _lock_entries(lock_path: Path) -> list[dict[str, Any]]:
    data = load_toml(lock_path, "Cargo.lock", MAX_LOCKFILE_BYTES)
    packages = data.get("package", [])
    entries: list[dict[str, Any]] = []
    if not isinstance(packages, list):
        raise FeatcheckError("`package` must be an array of tables", path=lock_path)
    for entry in packages:
        ok = (
            isinstance(entry, Mapping)
            and valid_package_name(entry.get("name"))
            and isinstance(entry.get("version"), str)
            and isinstance(entry.get("source", ""), str)
            and isinstance(entry.get("dependencies", []), list)
            and all(isinstance(d, str) for d in entry.get("dependencies", []))
        )
        if not ok:
            shown = printable(entry.get("name")) if isinstance(entry, Mapping) else "?"
            raise FeatcheckError(f"invalid [[package]] entry `{shown}`", path=lock_path)
        entries.append(dict(entry))
    return entries


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


@dataclass
class _PathPackages:
    """The path packages reachable from the members: read ones, and those outside the root."""

    read: dict[Path, _Manifest] = field(default_factory=dict)
    outside: dict[str, Path] = field(default_factory=dict)
    """Package name -> directory, for path dependencies outside the workspace root."""
    members: list[Path] = field(default_factory=list)
    edges: dict[Path, list[Path]] = field(default_factory=dict)
    """Non-dev path dependencies between read packages (for cargo's cycle check)."""


def _walk_path_packages(layout: WorkspaceLayout) -> _PathPackages:
    """The members and every path dependency they reach; path dependencies under the root
    (and not excluded) are members too, as in cargo."""
    found = _PathPackages(members=list(layout.members))
    pending: list[tuple[Path, Path | None]] = [(m, None) for m in layout.members]
    # `[patch.REGISTRY] name = { path = ... }` at the root puts path packages in the lockfile
    # that no declaration names by path.
    for patches in table(layout.root_data.get("patch")).values():
        for key, spec in table(patches).items():
            path, name = table(spec).get("path"), table(spec).get("package", key)
            if not isinstance(path, str) or not isinstance(name, str):
                continue
            target = Path(os.path.normpath(layout.root / path))
            if layout.is_inside(target):
                pending.append((target, None))
            else:
                found.outside.setdefault(name, target)
    while pending:
        directory, dependent = pending.pop(0)
        if directory in found.read:
            continue
        manifest = directory / "Cargo.toml"
        if not is_manifest(manifest, what="a path dependency"):
            by = found.read[dependent].name if dependent is not None else "the workspace"
            shown = printable(os.path.relpath(directory, layout.root))
            raise FeatcheckError(
                f"failed to load path dependency `{shown}` of {by}: it has no Cargo.toml "
                "(cargo refuses this workspace)",
                path=dependent / "Cargo.toml" if dependent is not None else None,
            )
        package = _read_package(manifest, layout, local=True)
        found.read[directory] = package
        edges = found.edges.setdefault(directory, [])
        for decl in package.declarations:
            if decl["path"] is None:
                continue
            target = Path(decl["path"])
            if not layout.is_inside(target):
                found.outside.setdefault(decl["name"], target)
                continue
            if decl["kind"] != "dev" and target not in edges:
                edges.append(target)
            if target not in found.members and not layout.is_excluded(target):
                found.members.append(target)
            pending.append((target, directory))
    return found


def _refuse_cycles(packages: _PathPackages) -> None:
    """cargo's "cyclic package dependency" among path packages (dev-dependencies may cycle)."""
    done: set[Path] = set()
    for start in packages.read:
        stack: list[tuple[Path, list[Path]]] = [(start, [start])]
        while stack:
            node, path = stack.pop()
            for nxt in packages.edges.get(node, ()):
                if nxt == start:
                    names = " -> ".join(packages.read[p].name for p in [*path, start])
                    first = packages.read[start]
                    raise FeatcheckError(
                        f"cyclic package dependency: package `{first.name} v{first.version}` "
                        f"depends on itself ({names}; cargo refuses this workspace)",
                        path=start / "Cargo.toml",
                    )
                if nxt not in path and nxt not in done and nxt in packages.read:
                    stack.append((nxt, [*path, nxt]))
        done.add(start)


def _stale(package: str, dependency: str, lock_path: Path) -> FeatcheckError:
    return FeatcheckError(
        f"out of date: {printable(package)} depends on `{printable(dependency)}`, which it does "
        "not list for it (run `cargo generate-lockfile` once, or drop --no-exec)",
        path=lock_path,
    )


def build_metadata(manifest: Path, environment: Mapping[str, str] | None = None) -> FileMetadata:
    """`cargo metadata --format-version 1` for `manifest`, from files only."""
    environment = os.environ if environment is None else environment
    layout = discover_workspace(manifest)
    root = layout.root
    lock_path = root / "Cargo.lock"
    if not is_manifest(lock_path, what="Cargo.lock"):
        raise FeatcheckError(
            "--no-exec needs a Cargo.lock (run `cargo generate-lockfile` once)", path=root
        )
    lock = _lock_entries(lock_path)
    by_name: dict[str, list[dict[str, Any]]] = {}
    for entry in lock:
        by_name.setdefault(str(entry["name"]), []).append(entry)

    paths = _walk_path_packages(layout)
    _refuse_cycles(paths)
    audited = Path(os.path.normpath(manifest.absolute().parent))
    if audited != root and audited not in paths.members:
        raise FeatcheckError(
            "current package believes it's in a workspace when it's not: the workspace root "
            f"{printable(root / 'Cargo.toml')} neither lists nor excludes it (cargo refuses it)",
            path=manifest,
        )
    by_key = {(p.name, p.version): d for d, p in paths.read.items()}
    member_dirs = set(paths.members)
    registry = _Registry(layout, environment)
    packages: list[dict[str, Any]] = []
    ids: dict[int, str] = {}
    unread: dict[str, str] = {}
    for entry in lock:
        name, version = str(entry["name"]), str(entry["version"])
        source: str | None = entry.get("source")
        if source is None:
            directory = by_key.get((name, version))
            if directory is not None:
                package_id = _path_id(directory, name, version)
                packages.append(_package_json(paths.read[directory], package_id, None, layout))
            elif name in paths.outside:
                directory = paths.outside[name]
                package_id = _path_id(directory, name, version)
                packages.append(_unread_json(name, version, package_id, None, directory))
                unread[package_id] = OUTSIDE
            else:
                # Not reached from the manifests ([replace], or no longer used and pruned by
                # cargo's next resolve): unread, so that nothing silently drops it.
                directory = root / name
                package_id = _path_id(directory, name, version)
                packages.append(_unread_json(name, version, package_id, None, directory))
                unread[package_id] = NOT_FOUND
        else:
            package_id = f"{source}#{name}@{version}"
            found = None if source.startswith("git+") else registry.find(name, version, source)
            if found is not None:
                packages.append(_package_json(found, package_id, str(source), layout))
            else:
                where = registry.dirs[-1] if registry.dirs else root
                packages.append(
                    _unread_json(
                        name, version, package_id, str(source), where / f"{name}-{version}"
                    )
                )
                unread[package_id] = GIT if str(source).startswith("git+") else NOT_FETCHED
        ids[id(entry)] = package_id

    registry.cache.save()
    listed = {(p["name"], p["version"]) for p in packages if p["source"] is None}
    for read in paths.read.values():
        if (read.name, read.version) not in listed:
            raise _stale(f"{read.name} {read.version}", read.name, lock_path)

    raw_by_id = {p["id"]: p for p in packages}
    nodes: list[dict[str, Any]] = []
    for entry in lock:
        if id(entry) not in ids:
            continue
        package = raw_by_id[ids[id(entry)]]
        is_member = (
            entry.get("source") is None and Path(package["manifest_path"]).parent in member_dirs
        )
        deps: list[dict[str, Any]] = []
        dependencies: list[str] = []
        targets = [
            t for t in (_lock_target(str(d), by_name) for d in entry.get("dependencies", ())) if t
        ]
        for target in targets:
            if id(target) not in ids:
                continue
            dependency = raw_by_id[ids[id(target)]]
            if package["id"] in unread:
                dependencies.append(dependency["id"])  # what it may bring, for noexec.gaps
                continue
            node_dep = _node_dep(package, dependency, member=is_member)
            if node_dep is None:
                continue
            dependencies.append(dependency["id"])
            if node_dep["name"] is not None:
                deps.append(node_dep)
        if entry.get("source") is None and package["id"] not in unread:
            _check_listed(
                package,
                [raw_by_id[ids[id(t)]] for t in targets if id(t) in ids],
                is_member,
                lock_path,
            )
        nodes.append(
            {"id": package["id"], "dependencies": dependencies, "deps": deps, "features": []}
        )

    member_ids = [_path_id(d, paths.read[d].name, paths.read[d].version) for d in paths.members]
    this = audited
    resolve_root = None
    if this in paths.read and isinstance(paths.read[this].data.get("package"), Mapping):
        resolve_root = _path_id(this, paths.read[this].name, paths.read[this].version)
    document = {
        "packages": packages,
        "workspace_members": member_ids,
        "workspace_default_members": member_ids,
        "resolve": {"nodes": nodes, "root": resolve_root},
        "workspace_root": str(root),
        "version": 1,
        "metadata": None,
    }
    return FileMetadata(document, unread)


def _check_listed(
    package: Mapping[str, Any],
    resolved: list[Mapping[str, Any]],
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


def _node_dep(
    package: Mapping[str, Any], dependency: Mapping[str, Any], *, member: bool
) -> dict[str, Any] | None:
    """The `resolve.nodes[].deps[]` entry for an edge, from the declarations that name it.

    cargo resolves dev-dependencies of workspace members only."""
    named = [
        d
        for d in package["dependencies"]
        if d["name"] == dependency["name"] and (member or d["kind"] != "dev")
    ]
    fitting = [d for d in named if matches(d["req"], dependency["version"])] or named
    if not fitting:
        return None
    kinds: list[dict[str, Any]] = []
    for decl in fitting:
        kind = {"kind": decl["kind"], "target": decl["target"]}
        if kind not in kinds:
            kinds.append(kind)
    library = next(
        (
            t["name"]
            for t in dependency["targets"]
            if {"lib", "rlib", "dylib", "cdylib", "staticlib", "proc-macro"}.intersection(t["kind"])
        ),
        None,
    )
    renames = {d["rename"] for d in fitting if d["rename"]}
    extern: str | None = None
    if library is not None:
        extern = (next(iter(renames)) if len(renames) == 1 else library).replace("-", "_")
    return {"name": extern, "pkg": dependency["id"], "dep_kinds": kinds}
