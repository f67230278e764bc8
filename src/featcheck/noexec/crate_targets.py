"""A package's build targets as `cargo metadata` lists them: lib (with its crate types), bins
(explicit and auto-discovered), the build script.

cargo discovers binaries at `src/main.rs`, `src/bin/NAME.rs` and `src/bin/NAME/main.rs` unless
`autobins = false`; an explicit `[[bin]]` without `path` is looked for at the same places. Only
the kinds matter to the audit (a package with a bin, cdylib or staticlib is a final artifact),
so examples, tests and benches are left out.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from featcheck.noexec.files import table


def _crate_name(name: str) -> str:
    return name.replace("-", "_")


def _library(data: Mapping[str, Any], directory: Path, name: str) -> dict[str, Any] | None:
    lib = table(data.get("lib"))
    package = table(data.get("package"))
    discovered = package.get("autolib", True) is not False and (directory / "src/lib.rs").is_file()
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
        "name": _crate_name(lib_name if isinstance(lib_name, str) else name),
    }


def _discovered_binaries(directory: Path, name: str) -> dict[str, Path]:
    """Binary name -> source file, as cargo infers them."""
    found: dict[str, Path] = {}
    if (directory / "src/main.rs").is_file():
        found[name] = directory / "src/main.rs"
    bin_dir = directory / "src/bin"
    if bin_dir.is_dir():
        for entry in sorted(bin_dir.iterdir()):
            if entry.suffix == ".rs" and entry.is_file():
                found.setdefault(entry.stem, entry)
            elif (entry / "main.rs").is_file():
                found.setdefault(entry.name, entry / "main.rs")
    return found


def _binaries(data: Mapping[str, Any], directory: Path, name: str) -> list[str]:
    package = table(data.get("package"))
    declared = data.get("bin")
    explicit = [table(b) for b in declared] if isinstance(declared, list) else []
    names = [str(b["name"]) for b in explicit if isinstance(b.get("name"), str)]
    if package.get("autobins", True) is not False:
        for discovered in _discovered_binaries(directory, name):
            if discovered not in names:
                names.append(discovered)
    return sorted(names)


def crate_targets(data: Mapping[str, Any], directory: Path, name: str) -> list[dict[str, Any]]:
    """`packages[].targets` of `cargo metadata` (kinds and names) for one manifest."""
    targets: list[dict[str, Any]] = []
    library = _library(data, directory, name)
    if library is not None:
        targets.append(library)
    targets.extend(
        {"kind": ["bin"], "crate_types": ["bin"], "name": binary}
        for binary in _binaries(data, directory, name)
    )
    build = table(data.get("package")).get("build")
    if (build is None and (directory / "build.rs").is_file()) or isinstance(build, str):
        targets.append(
            {"kind": ["custom-build"], "crate_types": ["bin"], "name": "build-script-build"}
        )
    return targets
