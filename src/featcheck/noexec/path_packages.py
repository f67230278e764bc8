"""The path packages of a workspace: its members and every path dependency they reach,
read only inside the workspace root; cargo's refusal of path-dependency cycles.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from featcheck.cargo.failures import printable
from featcheck.deadline import NO_DEADLINE, READING, READING_HINT, Deadline
from featcheck.errors import FeatcheckError
from featcheck.noexec.files import is_manifest, table
from featcheck.noexec.packages import PackageManifest, read_package
from featcheck.workspace.model import DEV

if TYPE_CHECKING:
    from featcheck.noexec.workspace import WorkspaceLayout


@dataclass
class PathPackages:
    """The path packages reachable from the members: read ones, and those outside the root."""

    read: dict[Path, PackageManifest] = field(default_factory=dict)
    outside: dict[str, Path] = field(default_factory=dict)
    """Package name -> directory, for path dependencies outside the workspace root."""
    members: list[Path] = field(default_factory=list)
    edges: dict[Path, list[Path]] = field(default_factory=dict)
    """Non-dev path dependencies between read packages (for cargo's cycle check)."""


def walk_path_packages(layout: WorkspaceLayout, deadline: Deadline = NO_DEADLINE) -> PathPackages:
    """The members and every path dependency they reach, each read within `deadline`; path
    dependencies under the root (and not excluded) are members too, as in cargo."""
    found = PathPackages(members=list(layout.members))
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
