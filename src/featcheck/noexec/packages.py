"""One package manifest, read: declarations (with `[workspace.dependencies]` inheritance and
`[target.X]` tables), feature table (implicit features of optional dependencies included), the
kinds of its build targets and its library's crate name, edition: what the model's `Package`
holds, the declarations as its records (`Declaration`).

What cargo refuses in a manifest — a wrong type, a package or dependency name it would not
accept, a control character in a feature, a `[target.X]` key that is neither a target name nor a
cfg expression — is a FeatcheckError naming the file, so nothing odd reaches a terminal.
"""

from __future__ import annotations

import os
import posixpath
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeAlias
from urllib.parse import quote

from featcheck.cargo.failures import CONTROL, printable
from featcheck.errors import FeatcheckError
from featcheck.manifest.declarations import KIND_TABLES
from featcheck.manifest.document import read_manifest
from featcheck.noexec.files import feature_error, table, valid_package_name
from featcheck.semantics.cfg import TargetCfg
from featcheck.semantics.semver import number_error
from featcheck.workspace import cargo_metadata
from featcheck.workspace.model import (
    LIBRARY_KINDS,
    CrateRoot,
    Declaration,
    DependencyKind,
    extern_name,
    gated_binary,
)

if TYPE_CHECKING:
    from featcheck.noexec.workspace import WorkspaceLayout

_TARGET_NAME = re.compile(r"[A-Za-z0-9_.-]+")


def path_id(directory: Path, name: str, version: str) -> str:
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
    if any(CONTROL.search(v) for v in value):  # cargo refuses them in names and features
        raise ValueError(f"{what} holds a control character")
    return list(value)


def _declaration(
    key: str,
    spec: Any,
    kind: DependencyKind,
    target: str | None,
    package_dir: Path,
    root: Path,
    root_data: Mapping[str, Any],
) -> tuple[Declaration, bool]:
    """The declaration of `key`, and whether it is a git dependency."""
    base_dir = package_dir
    _flags(spec, key)
    if isinstance(spec, Mapping) and spec.get("workspace") is True:
        inherited = table(table(root_data.get("workspace")).get("dependencies")).get(key)
        if isinstance(inherited, str):
            inherited = {"version": inherited}
        if not isinstance(inherited, Mapping):
            raise TypeError(f"`{key}` inherits from [workspace.dependencies], which lacks it")
        _flags(inherited, key)
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
    declaration = Declaration(
        name=name,
        rename=key if "package" in spec else None,
        req=str(spec.get("version", "*")),
        kind=kind,
        target=target,
        optional=spec.get("optional", False) is True,
        uses_default_features=uses_default is not False,
        features=tuple(_strings(spec.get("features"), f"features of {key}")),
        path=full_path,
    )
    return declaration, isinstance(spec.get("git"), str)


def _flags(spec: Any, key: str) -> None:
    """cargo's refusal of a flag that is no boolean: `default-features = "false"` read as
    truthy would resolve the defaults cargo never builds."""
    for flag in ("default-features", "default_features", "optional", "workspace"):
        if isinstance(spec, Mapping) and flag in spec and not isinstance(spec[flag], bool):
            raise TypeError(f"`{flag}` of dependency `{key}` must be true or false")


def _declarations(
    data: Mapping[str, Any], package_dir: Path, root: Path, root_data: Mapping[str, Any]
) -> list[tuple[Declaration, bool]]:
    """Every declaration of the manifest, in its order, each with whether it is from git."""
    tables: list[tuple[Mapping[str, Any], str | None]] = [(data, None)]
    for platform, platform_table in table(data.get("target")).items():
        # A key as cargo accepts it: a target name or a cfg expression that parses (checked
        # against an empty cfg table: only the syntax matters here).
        key = str(platform)
        if key.startswith("cfg("):
            try:
                TargetCfg("", frozenset(), frozenset()).applies(key)
            except ValueError as error:
                raise ValueError(f"invalid cfg expression `{key}` ({error})") from None
        elif _TARGET_NAME.fullmatch(key) is None:
            raise ValueError(f"invalid target name `{key}`")
        tables.append((table(platform_table), key))
    found: list[tuple[Declaration, bool]] = []
    for section_table, target in tables:
        for kind, names in KIND_TABLES.items():
            entries = section_table.get(names[0], section_table.get(names[-1]))
            if entries is not None and not isinstance(entries, Mapping):
                raise TypeError(f"[{names[0]}] must be a table")
            for key, spec in (entries or {}).items():
                found.append(_declaration(key, spec, kind, target, package_dir, root, root_data))
    return found


def _features(data: Mapping[str, Any], declarations: Iterable[Declaration]) -> dict[str, list[str]]:
    features = {
        str(k): _strings(values, f"feature {k}")
        for k, values in table(data.get("features")).items()
    }
    if any(CONTROL.search(name) for name in features):
        raise ValueError("a feature name holds a control character")
    explicit = {
        value[len("dep:") :]
        for values in features.values()
        for value in values
        if value.startswith("dep:")
    }
    for decl in declarations:
        if decl.optional and decl.key not in explicit and decl.key not in features:
            features[decl.key] = [f"dep:{decl.key}"]
    return features


_FIELDS = tuple(field.name for field in fields(Declaration))


@dataclass(frozen=True)
class PackageManifest:
    path: Path
    name: str
    version: str
    declarations: tuple[Declaration, ...]
    features: dict[str, list[str]]
    target_kinds: frozenset[str]
    library: str | None
    """The crate name of its library; None when it has none."""
    edition: str
    git: frozenset[Declaration] = frozenset()
    """The declarations of git dependencies: Cargo.lock pins those by commit, not by their
    version requirement."""
    gated_binaries: tuple[frozenset[str], ...] = ()
    """The `required-features` of its binaries that name some (`Package.gated_binaries`)."""
    crate_roots: tuple[CrateRoot, ...] = ()
    """A local package's (`Package.crate_roots`); never kept distilled."""

    def distilled(self) -> dict[str, Any]:
        """What the manifest cache keeps (see `noexec.registry`)."""
        # Field by field: `asdict` deep-copies every value, a tenth of a first `--no-exec` run.
        declarations = [
            {name: getattr(d, name) for name in _FIELDS} | {"kind": d.kind.value}
            for d in self.declarations
        ]
        return {
            "name": self.name,
            "version": self.version,
            "declarations": declarations,
            "git": [i for i, d in enumerate(self.declarations) if d in self.git],
            "features": self.features,
            "target_kinds": sorted(self.target_kinds),
            "gated_binaries": [sorted(required) for required in self.gated_binaries],
            "library": self.library,
            "edition": self.edition,
        }

    @classmethod
    def from_distilled(cls, path: Path, kept: dict[str, Any]) -> PackageManifest:
        """The manifest `distilled` kept (KeyError, TypeError, ValueError, IndexError: none)."""
        declarations = tuple(map(cargo_metadata.declaration, kept["declarations"]))
        return cls(
            path,
            kept["name"],
            kept["version"],
            declarations,
            kept["features"],
            frozenset(kept["target_kinds"]),
            kept["library"],
            kept["edition"],
            frozenset(declarations[i] for i in kept["git"]),
            tuple(map(frozenset, kept.get("gated_binaries", ()))),
        )


def read_package(
    manifest: Path,
    layout: WorkspaceLayout,
    *,
    local: bool,
    data: Mapping[str, Any] | None = None,
    files: PackageFiles | None = None,
) -> PackageManifest:
    """A package manifest (read from `manifest` unless its `data` and `files` are given)."""
    if data is None:
        data = (
            layout.root_data
            if manifest.parent == layout.root
            else read_manifest(manifest, root=layout.checkout).data
        )
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
        found = _declarations(data, manifest.parent, layout.root, root_data)
        declarations = tuple(decl for decl, _ in found)
        # cargo's refusal of a version or requirement whose number does not fit in a u64.
        if (problem := number_error(version)) is not None:
            raise FeatcheckError(problem, path=manifest)
        for declaration in declarations:
            if (wrong := number_error(declaration.req, requirement=True)) is not None:
                what = f"the version requirement for dependency `{declaration.name}`"
                raise FeatcheckError(f"failed to parse {what}: {wrong}", path=manifest)
        features = _features(data, declarations)
        if problem := feature_error(features, declarations):
            raise FeatcheckError(problem, path=manifest)
        # Crate roots of the checkout's packages only: only members' are ever read.
        local_directory = manifest.parent if local else None
        kinds, library, gated, roots = _targets(data, files, name, local_directory)
        edition = _package_field(package, "edition", root_data)
        edition = edition if isinstance(edition, str) else "2015"
        git = frozenset(decl for decl, git in found if git)
        fields = (manifest, name, version, declarations, features, kinds, library, edition)
        return PackageManifest(*fields, git, gated, roots)
    except (TypeError, ValueError, AttributeError, OSError) as error:
        raise FeatcheckError(
            f"unexpected manifest content ({printable(error)})", path=manifest
        ) from None


# A package's build targets: lib, bins (explicit and auto-discovered), the build script. cargo
# discovers binaries at `src/main.rs`, `src/bin/NAME.rs` and `src/bin/NAME/main.rs` unless
# `autobins = false`; an explicit `[[bin]]` without `path` is looked for at the same places. Only
# the kinds matter to the audit (a package with a bin, cdylib or staticlib is a final artifact),
# so examples, tests and benches are left out. The files are looked up in a directory or in the
# listing of a `.crate` archive.


class DirectoryFiles:
    def __init__(self, root: Path) -> None:
        self.root = root

    def is_file(self, relative: str) -> bool:
        return (self.root / relative).is_file()

    def children(self, relative: str) -> list[str]:
        directory = self.root / relative
        return sorted(p.name for p in directory.iterdir()) if directory.is_dir() else []


class ArchiveFiles:
    """A package known by the file list of its archive (paths relative to its root)."""

    def __init__(self, paths: Iterable[str]) -> None:
        self.paths = frozenset(paths)

    def is_file(self, relative: str) -> bool:
        return relative in self.paths

    def children(self, relative: str) -> list[str]:
        prefix = relative.rstrip("/") + "/"
        return sorted({p[len(prefix) :].split("/")[0] for p in self.paths if p.startswith(prefix)})


PackageFiles: TypeAlias = DirectoryFiles | ArchiveFiles
"""The files of one package, by path relative to its root (`src/lib.rs`); `children`: the names
of the entries directly in a directory, sorted (empty when none)."""


def _binaries(
    data: Mapping[str, Any], files: PackageFiles, name: str
) -> list[tuple[frozenset[str] | None, str | None]]:
    """Each binary's `required-features` (None: built whatever the features) and file (None:
    none found); one discovered under the name or at the path of a `[[bin]]` is that one, as
    cargo reads them."""
    declared = data.get("bin")
    explicit = [table(b) for b in (declared if isinstance(declared, list) else ())]
    explicit = [b for b in explicit if isinstance(b.get("name"), str)]
    taken = {b["name"] for b in explicit} | {
        posixpath.normpath(b["path"]) for b in explicit if isinstance(b.get("path"), str)
    }
    found = [
        (gated_binary(b.get("required-features")), _bin_file(b, files, name)) for b in explicit
    ]
    if table(data.get("package")).get("autobins", True) is not False:
        discovered = [(name, "src/main.rs")] if files.is_file("src/main.rs") else []
        for entry in files.children("src/bin"):
            if entry.endswith(".rs") and files.is_file(f"src/bin/{entry}"):
                discovered.append((entry.removesuffix(".rs"), f"src/bin/{entry}"))
            elif files.is_file(f"src/bin/{entry}/main.rs"):
                discovered.append((entry, f"src/bin/{entry}/main.rs"))
        found += [(None, path) for binary, path in discovered if not {binary, path} & taken]
    return found


def _bin_file(binary: Mapping[str, Any], files: PackageFiles, package: str) -> str | None:
    """Where an explicit `[[bin]]` is: its `path`, else where cargo looks for its name."""
    if isinstance(binary.get("path"), str):
        return str(binary["path"])
    name = binary["name"]
    places = [f"src/bin/{name}.rs", f"src/bin/{name}/main.rs"]
    places += ["src/main.rs"] if name == package else []
    return next((place for place in places if files.is_file(place)), None)


def _targets(
    data: Mapping[str, Any], files: PackageFiles, name: str, directory: Path | None
) -> tuple[frozenset[str], str | None, tuple[frozenset[str], ...], tuple[CrateRoot, ...]]:
    """The kinds of one manifest's build targets (but binaries with `required-features`), its
    library's crate name (None: none), those binaries' required features, and the crate roots
    of its library and binaries (in `directory`; None: none wanted)."""
    lib, package = table(data.get("lib")), table(data.get("package"))
    kinds: list[str] = []
    library = None
    roots: list[tuple[str, frozenset[str] | None]] = []  # (relative path, required features)
    if lib or (package.get("autolib", True) is not False and files.is_file("src/lib.rs")):
        declared = lib.get("crate-type", lib.get("crate_type"))
        if lib.get("proc-macro", lib.get("proc_macro")) is True:
            kinds = ["proc-macro"]
        else:
            kinds = (
                [str(k) for k in declared] if isinstance(declared, list) and declared else ["lib"]
            )
        lib_name = lib.get("name")
        if LIBRARY_KINDS.intersection(kinds):
            library = extern_name(lib_name if isinstance(lib_name, str) else name)
        path = lib.get("path")
        roots.append((path if isinstance(path, str) else "src/lib.rs", None))
    binaries = _binaries(data, files, name)
    if any(required is None for required, _ in binaries):
        kinds.append("bin")
    roots += [(path, required) for required, path in binaries if path is not None]
    build = package.get("build")
    if (build is None and files.is_file("build.rs")) or isinstance(build, str):
        kinds.append("custom-build")
    gated = tuple(required for required, _ in binaries if required is not None)
    found = [CrateRoot(directory / p, r or frozenset()) for p, r in roots] if directory else []
    return frozenset(kinds), library, gated, tuple(found)
