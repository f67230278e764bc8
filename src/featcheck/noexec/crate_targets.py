"""A package's build targets as `cargo metadata` lists them: lib (with its crate types), bins
(explicit and auto-discovered), the build script.

cargo discovers binaries at `src/main.rs`, `src/bin/NAME.rs` and `src/bin/NAME/main.rs` unless
`autobins = false`; an explicit `[[bin]]` without `path` is looked for at the same places. Only
the kinds matter to the audit (a package with a bin, cdylib or staticlib is a final artifact),
so examples, tests and benches are left out. The files are looked up through `PackageFiles`:
a directory (the checkout, the unpacked registry) or the listing of a `.crate` archive.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, Protocol

from featcheck.noexec.files import table
from featcheck.workspace.model import extern_name


class PackageFiles(Protocol):
    """The files of one package, by path relative to its root (`src/lib.rs`)."""

    def is_file(self, relative: str) -> bool:
        """Whether the package has this file."""

    def children(self, relative: str) -> list[str]:
        """Names of the entries directly in this directory, sorted (empty when none)."""


class DirectoryFiles:
    """A package unpacked in a directory."""

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


def _library(data: Mapping[str, Any], files: PackageFiles, name: str) -> dict[str, Any] | None:
    lib = table(data.get("lib"))
    package = table(data.get("package"))
    discovered = package.get("autolib", True) is not False and files.is_file("src/lib.rs")
    if not lib and not discovered:
        return None
    if lib.get("proc-macro", lib.get("proc_macro")) is True:
        kinds = ["proc-macro"]
    else:
        declared = lib.get("crate-type", lib.get("crate_type"))
        kinds = [str(k) for k in declared] if isinstance(declared, list) and declared else ["lib"]
    lib_name = lib.get("name")
    return {
        "kind": kinds,
        "crate_types": kinds,
        "name": extern_name(lib_name if isinstance(lib_name, str) else name),
    }


def _discovered_binaries(files: PackageFiles, name: str) -> list[str]:
    """Binary names as cargo infers them."""
    found: list[str] = [name] if files.is_file("src/main.rs") else []
    for entry in files.children("src/bin"):
        if entry.endswith(".rs") and files.is_file(f"src/bin/{entry}"):
            found.append(entry[: -len(".rs")])
        elif files.is_file(f"src/bin/{entry}/main.rs"):
            found.append(entry)
    return list(dict.fromkeys(found))


def _binaries(data: Mapping[str, Any], files: PackageFiles, name: str) -> list[str]:
    package = table(data.get("package"))
    declared = data.get("bin")
    explicit = [table(b) for b in declared] if isinstance(declared, list) else []
    names = [str(b["name"]) for b in explicit if isinstance(b.get("name"), str)]
    if package.get("autobins", True) is not False:
        for discovered in _discovered_binaries(files, name):
            if discovered not in names:
                names.append(discovered)
    return sorted(names)


def crate_targets(data: Mapping[str, Any], files: PackageFiles, name: str) -> list[dict[str, Any]]:
    """`packages[].targets` of `cargo metadata` (kinds and names) for one manifest."""
    targets: list[dict[str, Any]] = []
    library = _library(data, files, name)
    if library is not None:
        targets.append(library)
    targets.extend(
        {"kind": ["bin"], "crate_types": ["bin"], "name": binary}
        for binary in _binaries(data, files, name)
    )
    build = table(data.get("package")).get("build")
    if (build is None and files.is_file("build.rs")) or isinstance(build, str):
        targets.append(
            {"kind": ["custom-build"], "crate_types": ["bin"], "name": "build-script-build"}
        )
    return targets
