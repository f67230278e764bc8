"""Build the equivalent of `cargo metadata --format-version 1` from files alone.

Inputs: the audited manifest, the workspace root's manifest and Cargo.lock, every path package's
manifest, and each registry package's manifest as unpacked in `$CARGO_HOME/registry/src/*/` or
in `vendor/` at the workspace root. The output has what featcheck reads from cargo's: packages
(id, name, version, source, manifest_path, features, dependencies, targets, edition),
`workspace_members`, `workspace_root` and `resolve` (root, nodes with deps and dep_kinds).
Package ids follow cargo 1.95: `registry+URL#NAME@VERSION`, and for path packages
`path+file:///DIR#VERSION` (`#NAME@VERSION` when the directory is not named after the package).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any
from urllib.parse import quote

from featcheck.cargo.checkout_config import default_cargo_home
from featcheck.cargo.semver import matches
from featcheck.errors import FeatcheckError
from featcheck.manifest.document import read_manifest

CRATES_IO = "registry+https://github.com/rust-lang/crates.io-index"
_DEPENDENCY_TABLES = (
    ("dependencies", None),
    ("dev-dependencies", "dev"),
    ("build-dependencies", "build"),
)
_ALT_TABLES = {"dev_dependencies": "dev-dependencies", "build_dependencies": "build-dependencies"}


class MissingManifests(FeatcheckError):
    """Registry packages of the lockfile whose manifests are not on this machine."""

    def __init__(self, missing: Iterable[str]) -> None:
        self.missing = tuple(sorted(missing))
        shown = ", ".join(self.missing[:20])
        more = f" and {len(self.missing) - 20} more" if len(self.missing) > 20 else ""
        super().__init__(
            f"--no-exec cannot resolve features: no manifest in the local cargo registry or "
            f"vendor/ for {shown}{more} (run `cargo fetch` once, or drop --no-exec)"
        )


def _load(path: Path) -> dict[str, Any]:
    if sys.version_info >= (3, 11):
        import tomllib

        try:
            with path.open("rb") as handle:
                return tomllib.load(handle)
        except (OSError, tomllib.TOMLDecodeError):
            pass  # read_manifest gives the one-line error
    return read_manifest(path).data


def _path_id(directory: Path, name: str, version: str) -> str:
    posix = directory.as_posix()
    url = "path+file://" + quote(posix if posix.startswith("/") else "/" + posix, safe="/:")
    return f"{url}#{version}" if directory.name == name else f"{url}#{name}@{version}"


def _in_workspace(root: Path, data: Mapping[str, Any], package_dir: Path) -> bool:
    workspace = data.get("workspace")
    if not isinstance(workspace, Mapping):
        return False
    return package_dir.resolve() in {p.resolve() for p in _member_dirs(root, workspace)} or (
        package_dir.resolve() == root.resolve() and isinstance(data.get("package"), Mapping)
    )


def _member_dirs(root: Path, workspace: Mapping[str, Any]) -> list[Path]:
    excluded = {(root / e).resolve() for e in workspace.get("exclude", ())}
    found: list[Path] = []
    for pattern in workspace.get("members", ()):
        for directory in (
            sorted(root.glob(pattern)) if any(c in pattern for c in "*?[") else [root / pattern]
        ):
            if (directory / "Cargo.toml").is_file() and directory.resolve() not in excluded:
                found.append(directory)
    return found


def discover_workspace(manifest: Path) -> tuple[Path, list[Path]]:
    """The workspace root manifest for `manifest` and its member manifests (as cargo does)."""
    manifest = manifest.absolute()
    data = _load(manifest)
    if isinstance(data.get("workspace"), Mapping):
        root = manifest.parent
    else:
        root = manifest.parent
        for parent in manifest.parent.parents:
            candidate = parent / "Cargo.toml"
            if candidate.is_file():
                parent_data = _load(candidate)
                if _in_workspace(parent, parent_data, manifest.parent):
                    root, data = parent, parent_data
                    break
    workspace = data.get("workspace")
    members: list[Path] = []
    if isinstance(data.get("package"), Mapping):
        members.append(root / "Cargo.toml")
    if isinstance(workspace, Mapping):
        for directory in _member_dirs(root, workspace):
            if directory.resolve() != root.resolve():
                members.append(directory / "Cargo.toml")
    return root / "Cargo.toml", members


def _package_field(package: Mapping[str, Any], key: str, root_data: Mapping[str, Any]) -> Any:
    value = package.get(key)
    if isinstance(value, Mapping) and value.get("workspace"):
        return ((root_data.get("workspace") or {}).get("package") or {}).get(key)
    return value


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
    if isinstance(spec, Mapping) and spec.get("workspace"):
        inherited = ((root_data.get("workspace") or {}).get("dependencies") or {}).get(key, {})
        inherited = {"version": inherited} if isinstance(inherited, str) else dict(inherited)
        features = [*inherited.get("features", ()), *spec.get("features", ())]
        merged = {**inherited, "features": features}
        if "optional" in spec:
            merged["optional"] = spec["optional"]
        if spec.get("default-features", spec.get("default_features")) is True:
            merged["default-features"] = True
        spec = merged
        base_dir = root
    if isinstance(spec, str):
        spec = {"version": spec}
    name = spec.get("package", key)
    path = spec.get("path")
    full_path = os.path.normpath(base_dir / path) if path is not None else None
    uses_default = spec.get("default-features", spec.get("default_features", True))
    return {
        "name": name,
        "source": None if full_path is not None else CRATES_IO,
        "req": str(spec.get("version", "*")),
        "kind": kind,
        "rename": key if "package" in spec else None,
        "optional": bool(spec.get("optional", False)),
        "uses_default_features": bool(uses_default),
        "features": list(spec.get("features", ())),
        "target": target,
        "registry": None,
        "path": full_path,
    }


def _declarations(
    data: Mapping[str, Any], package_dir: Path, root: Path, root_data: Mapping[str, Any]
) -> list[dict[str, Any]]:
    tables: list[tuple[Mapping[str, Any], str | None]] = [(data, None)]
    for target, table in (data.get("target") or {}).items():
        tables.append((table, str(target)))
    found: list[dict[str, Any]] = []
    for table, target in tables:
        for section, kind in _DEPENDENCY_TABLES:
            entries = table.get(section)
            if entries is None:
                alias = next((a for a, s in _ALT_TABLES.items() if s == section), None)
                entries = table.get(alias) if alias else None
            for key, spec in (entries or {}).items():
                found.append(_declaration(key, spec, kind, target, package_dir, root, root_data))
    return found


def _targets(data: Mapping[str, Any], package_dir: Path, name: str) -> list[dict[str, Any]]:
    targets: list[dict[str, Any]] = []
    lib = data.get("lib")
    lib_table = lib if isinstance(lib, Mapping) else {}
    if lib_table or (package_dir / "src" / "lib.rs").is_file():
        kind = "proc-macro" if lib_table.get("proc-macro", lib_table.get("proc_macro")) else "lib"
        lib_name = str(lib_table.get("name", name)).replace("-", "_")
        targets.append({"kind": [kind], "crate_types": [kind], "name": lib_name})
    bins = data.get("bin") or []
    if bins or (package_dir / "src" / "main.rs").is_file():
        for entry in bins or [{"name": name}]:
            targets.append(
                {"kind": ["bin"], "crate_types": ["bin"], "name": entry.get("name", name)}
            )
    if (package_dir / "build.rs").is_file() or isinstance(
        (data.get("package") or {}).get("build"), str
    ):
        targets.append(
            {"kind": ["custom-build"], "crate_types": ["bin"], "name": "build-script-build"}
        )
    return targets


def _features(data: Mapping[str, Any], declarations: list[dict[str, Any]]) -> dict[str, list[str]]:
    features = {
        str(k): [str(v) for v in values] for k, values in (data.get("features") or {}).items()
    }
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


def _package_json(
    manifest: Path, package_id: str, source: str | None, root: Path, root_data: Mapping[str, Any]
) -> dict[str, Any]:
    data = root_data if manifest.parent == root else _load(manifest)
    package = data.get("package") or {}
    name = str(package["name"])
    version = str(_package_field(package, "version", root_data) or "0.0.0")
    edition = str(_package_field(package, "edition", root_data) or "2015")
    declarations = _declarations(data, manifest.parent, root, root_data)
    return {
        "name": name,
        "version": version,
        "id": package_id,
        "source": source,
        "dependencies": declarations,
        "targets": _targets(data, manifest.parent, name),
        "features": _features(data, declarations),
        "manifest_path": str(manifest),
        "edition": edition,
    }


def _registry_dirs(cargo_home: Path | None, root: Path) -> list[Path]:
    """Where unpacked registry packages may be: vendor/ first, then the cargo registry."""
    dirs = [root / "vendor"] if (root / "vendor").is_dir() else []
    if cargo_home is not None:
        src = cargo_home / "registry" / "src"
        if src.is_dir():
            dirs.extend(sorted(p for p in src.iterdir() if p.is_dir()))
    return dirs


def _find_registry_manifest(dirs: list[Path], name: str, version: str) -> Path | None:
    for directory in dirs:
        candidate = directory / f"{name}-{version}" / "Cargo.toml"
        if candidate.is_file():
            return candidate
        if directory.name == "vendor":
            plain = directory / name / "Cargo.toml"
            if plain.is_file():
                package = _load(plain).get("package") or {}
                if str(package.get("version")) == version:
                    return plain
    return None


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


def declarations_of(manifest: Path) -> list[dict[str, Any]]:
    """A member's dependency declarations as `cargo metadata` lists them (inheritance applied)."""
    root_manifest, _ = discover_workspace(manifest)
    root_data = _load(root_manifest)
    data = _load(manifest.absolute())
    return _declarations(data, manifest.absolute().parent, root_manifest.parent, root_data)


def lock_packages(manifest: Path) -> list[dict[str, Any]]:
    """The `[[package]]` entries of the workspace's Cargo.lock (empty without one)."""
    root_manifest, _ = discover_workspace(manifest)
    lock_path = root_manifest.parent / "Cargo.lock"
    return list(_load(lock_path).get("package", ())) if lock_path.is_file() else []


def find_missing(manifest: Path, environment: Mapping[str, str]) -> list[str]:
    """Registry packages of the lockfile (`NAME@VERSION`) with no manifest on this machine."""
    root_manifest, _ = discover_workspace(manifest)
    registries = _registry_dirs(default_cargo_home(environment), root_manifest.parent)
    return [
        f"{entry['name']}@{entry['version']}"
        for entry in lock_packages(manifest)
        if entry.get("source") is not None
        and _find_registry_manifest(registries, str(entry["name"]), str(entry["version"])) is None
    ]


def build_metadata(manifest: Path, environment: Mapping[str, str] | None = None) -> dict[str, Any]:
    """`cargo metadata --format-version 1` for `manifest`, from files only.

    Raises MissingManifests when a registry package of the lockfile has no manifest on disk.
    """
    environment = os.environ if environment is None else environment
    manifest = manifest.absolute()
    root_manifest, member_manifests = discover_workspace(manifest)
    root = root_manifest.parent
    root_data = _load(root_manifest)
    lock_path = root / "Cargo.lock"
    if not lock_path.is_file():
        raise FeatcheckError(
            "--no-exec needs a Cargo.lock (run `cargo generate-lockfile` once)", path=root
        )
    lock_packages: list[dict[str, Any]] = list(_load(lock_path).get("package", ()))
    by_name: dict[str, list[dict[str, Any]]] = {}
    for entry in lock_packages:
        by_name.setdefault(str(entry["name"]), []).append(entry)

    # Path packages: the members, and the path dependencies they reach.
    path_manifests: dict[tuple[str, str], Path] = {}
    pending = list(member_manifests)
    seen: set[Path] = set()
    while pending:
        current = pending.pop()
        if current.resolve() in seen or not current.is_file():
            continue
        seen.add(current.resolve())
        data = root_data if current.parent == root else _load(current)
        package = data.get("package") or {}
        version = str(_package_field(package, "version", root_data) or "0.0.0")
        path_manifests[(str(package["name"]), version)] = current
        for decl in _declarations(data, current.parent, root, root_data):
            if decl["path"] is not None:
                pending.append(Path(decl["path"]) / "Cargo.toml")

    registries = _registry_dirs(default_cargo_home(environment), root)
    packages: list[dict[str, Any]] = []
    ids: dict[int, str] = {}
    missing: list[str] = []
    for entry in lock_packages:
        name, version, source = str(entry["name"]), str(entry["version"]), entry.get("source")
        if source is None:
            path_manifest = path_manifests.get((name, version))
            if path_manifest is None:
                continue  # no longer reachable (e.g. excluded since): cargo would prune it
            package_id = _path_id(path_manifest.parent, name, version)
            packages.append(_package_json(path_manifest, package_id, None, root, root_data))
        else:
            found = _find_registry_manifest(registries, name, version)
            if found is None:
                missing.append(f"{name}@{version}")
                continue
            package_id = f"{source}#{name}@{version}"
            packages.append(_package_json(found, package_id, str(source), root, root_data))
        ids[id(entry)] = package_id
    if missing:
        raise MissingManifests(missing)

    raw_by_id = {p["id"]: p for p in packages}
    nodes: list[dict[str, Any]] = []
    for entry in lock_packages:
        if id(entry) not in ids:
            continue
        package = raw_by_id[ids[id(entry)]]
        deps: list[dict[str, Any]] = []
        dependencies: list[str] = []
        for dep_entry in entry.get("dependencies", ()):
            target = _lock_target(str(dep_entry), by_name)
            if target is None or id(target) not in ids:
                continue
            dependency = raw_by_id[ids[id(target)]]
            node_dep = _node_dep(package, dependency, member=entry.get("source") is None)
            if node_dep is None:
                continue
            dependencies.append(dependency["id"])
            if node_dep["name"] is not None:
                deps.append(node_dep)
        nodes.append(
            {"id": package["id"], "dependencies": dependencies, "deps": deps, "features": []}
        )

    member_ids = [
        _path_id(m.parent, p["name"], p["version"])
        for m in member_manifests
        for p in [_member_package(m, root, root_data)]
    ]
    resolve_root = None
    if isinstance(_load(manifest).get("package"), Mapping):
        this = _member_package(manifest, root, root_data)
        resolve_root = _path_id(manifest.parent, this["name"], this["version"])
    return {
        "packages": packages,
        "workspace_members": member_ids,
        "workspace_default_members": member_ids,
        "resolve": {"nodes": nodes, "root": resolve_root},
        "workspace_root": str(root),
        "version": 1,
        "metadata": None,
    }


def _member_package(manifest: Path, root: Path, root_data: Mapping[str, Any]) -> dict[str, str]:
    data = root_data if manifest.parent == root else _load(manifest)
    package = data.get("package") or {}
    version = str(_package_field(package, "version", root_data) or "0.0.0")
    return {"name": str(package["name"]), "version": version}


def _node_dep(
    package: Mapping[str, Any], dependency: Mapping[str, Any], *, member: bool
) -> dict[str, Any] | None:
    """The `resolve.nodes[].deps[]` entry for an edge, from the declarations that name it.

    cargo resolves dev-dependencies of local (path) packages only."""
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
        (t["name"] for t in dependency["targets"] if {"lib", "proc-macro"}.intersection(t["kind"])),
        None,
    )
    renames = {d["rename"] for d in fitting if d["rename"]}
    extern: str | None = None
    if library is not None:
        extern = (next(iter(renames)) if len(renames) == 1 else library).replace("-", "_")
    return {"name": extern, "pkg": dependency["id"], "dep_kinds": kinds}
