"""Pair each resolved edge of `cargo metadata` with the manifest declarations behind it.

`resolve.nodes[].deps[]` names the package an edge leads to and its `(kind, target)` pairs, but
not the declaration's `optional`, `default-features` and `features`; those live in
`packages[].dependencies[]`. cargo's own resolver keeps the declarations on each edge, so to
resolve features like it we have to find them again. A declaration belongs to an edge when it
names the same package, its `(kind, target)` is one of the edge's, and its extern crate name is
the edge's `name` (the rename with `-` made `_`, else the library's crate name): that last test
tells apart two versions of one package declared under two renames.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from featcheck.semantics.semver import matches
from featcheck.workspace.model import Declaration, DependencyKind
from featcheck.workspace.names import extern_name

_LIBRARY_KINDS = frozenset({"lib", "rlib", "dylib", "cdylib", "staticlib", "proc-macro"})


def library_crate_name(package: Mapping[str, Any]) -> str | None:
    """The crate name of the package's library target, or None when it has no library."""
    for target in package.get("targets", ()):
        if _LIBRARY_KINDS.intersection(target.get("kind", ())):
            return extern_name(str(target["name"]))
    return None


def _extern_name(decl: Declaration, library: str | None) -> str | None:
    return extern_name(decl.rename) if decl.rename else library


def _narrow_by_version(candidates: list[Declaration], version: str) -> list[Declaration]:
    """Of several declarations for one (kind, target), keep those whose requirement matches.

    Only a workspace that declares one package twice in the same table under different renames
    gets here; the requirement is the only thing left that says which version each one wants.
    """
    fitting = [decl for decl in candidates if matches(decl.req, version)]
    return fitting or candidates


_UNKNOWN = "\0"


def declarations_for_edge(
    declarations: Sequence[Declaration],
    dependency: Mapping[str, Any],
    edge: Mapping[str, Any] | None,
    library: str | None = _UNKNOWN,
) -> list[Declaration]:
    """The declarations of a package that resolved to `dependency` along `edge`.

    `edge` is the `resolve.nodes[].deps[]` entry; None for a dependency that metadata lists
    only in `dependencies` (a package without a library target), matched by name alone.
    `library` is `library_crate_name(dependency)` when the caller knows it already.
    """
    name = dependency["name"]
    version = str(dependency["version"])
    named = [decl for decl in declarations if decl.name == name]
    if edge is None:
        return _narrow_by_version(named, version)
    if library == _UNKNOWN:
        library = library_crate_name(dependency)
    extern = edge.get("name") or None
    by_kind: dict[tuple[DependencyKind, str | None], list[Declaration]] = {}
    for dep_kind in edge.get("dep_kinds", ()):
        by_kind.setdefault((DependencyKind.of(dep_kind.get("kind")), dep_kind.get("target")), [])
    for decl in named:
        key = (decl.kind, decl.target)
        if key not in by_kind:
            continue
        if extern is not None and _extern_name(decl, library) != extern:
            continue
        by_kind[key].append(decl)
    found: list[Declaration] = []
    for candidates in by_kind.values():
        found.extend(candidates if len(candidates) < 2 else _narrow_by_version(candidates, version))
    return found
