"""Which workspace a manifest belongs to, and its members, found as cargo finds them.

What cargo refuses is refused here with cargo's reason, as one line: a member outside the
workspace root (`members = ["../*"]`, an absolute path elsewhere, a link pointing out), a member
without a Cargo.toml (globbed or named), a package that believes it is in a workspace that does
not list it. Nothing outside the workspace root is read, except the parents cargo itself looks
at to find the root.
"""

from __future__ import annotations

import glob
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from featcheck.boundary import checkout_root, configured_path_stays_inside, is_inside
from featcheck.cargo.failures import printable
from featcheck.errors import FeatcheckError
from featcheck.manifest.document import read_manifest
from featcheck.noexec.files import is_manifest, table

_GLOB_CHARACTERS = frozenset("*?[")
_MAX_GLOB_DEPTH = 100
"""The most directories a member pattern with wildcards may go down: Python's glob recurses
once per directory of the pattern, and no workspace nests its members that deep."""


@dataclass(frozen=True)
class WorkspaceLayout:
    root: Path
    root_data: Mapping[str, Any]
    members: tuple[Path, ...]
    """Member directories listed in `workspace.members` (and the root, when it is a package),
    in cargo's order; path dependencies under the root join them later."""
    excluded: tuple[Path, ...]
    real_root: Path
    """The root with symlinks resolved: what `--no-exec` may read lies under it."""
    checkout: Path
    """The checkout's root (boundary.py): no file is read through a link out of it."""

    def is_excluded(self, directory: Path) -> bool:
        return any(directory.is_relative_to(e) for e in self.excluded)

    def is_inside(self, directory: Path) -> bool:
        """Whether `directory` lies (symlinks resolved) under the workspace root."""
        return Path(os.path.realpath(directory)).is_relative_to(self.real_root)


def _normalized(path: Path) -> Path:
    return Path(os.path.normpath(path))


def _strings(value: Any, manifest: Path, key: str) -> list[str]:
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise FeatcheckError(f"`{key}` must be an array of strings", path=manifest)
    return list(value)


def _outside(pattern: str, root: Path) -> FeatcheckError:
    return FeatcheckError(
        f"workspace member `{printable(pattern)}` is not hierarchically below the workspace "
        "root (cargo refuses this workspace; --no-exec reads nothing outside it)",
        path=root / "Cargo.toml",
    )


def _member_directories(
    root: Path, real_root: Path, workspace: Mapping[str, Any], excluded: list[Path]
) -> list[Path]:
    manifest = root / "Cargo.toml"
    found: dict[Path, None] = {}  # in order, each once (a list's `in` made 500 members 60 ms)
    for pattern in _strings(workspace.get("members"), manifest, "workspace.members"):
        full = _normalized(root / pattern)
        if "\x00" in pattern or not full.is_relative_to(root):
            raise _outside(pattern, root)
        if _GLOB_CHARACTERS.intersection(pattern):
            relative = os.path.relpath(full, root)
            if len(Path(relative).parts) > _MAX_GLOB_DEPTH:
                raise FeatcheckError(
                    f"workspace member `{printable(pattern)}` goes more than "
                    f"{_MAX_GLOB_DEPTH} directories down (--no-exec's limit for a pattern)",
                    path=manifest,
                )
            matches = map(Path, glob.glob(os.path.join(glob.escape(str(root)), relative)))
            candidates = sorted(
                m for m in matches if m.is_dir() and not any(m.is_relative_to(e) for e in excluded)
            )
        else:
            candidates = [full]
        for directory in candidates:
            if not Path(os.path.realpath(directory)).is_relative_to(real_root):
                raise _outside(pattern, root)
            if not is_manifest(directory / "Cargo.toml", what="a workspace member"):
                via = "" if directory == root / pattern else f" (matched by `{printable(pattern)}`)"
                shown = printable(os.path.relpath(directory, root))
                raise FeatcheckError(
                    f"failed to load manifest for workspace member `{shown}`{via}: it has no "
                    "Cargo.toml (cargo refuses this workspace)",
                    path=manifest,
                )
            if directory != root:
                found[directory] = None
    return list(found)


def _excluded(root: Path, workspace: Mapping[str, Any]) -> list[Path]:
    entries = _strings(workspace.get("exclude"), root / "Cargo.toml", "workspace.exclude")
    return [_normalized(root / entry) for entry in entries]


def _find_root(
    manifest: Path, data: Mapping[str, Any], checkout: Path
) -> tuple[Path, Mapping[str, Any]]:
    """The root cargo picks: the manifest itself if it has `[workspace]`, the one its
    `package.workspace` names, else the nearest parent with a `[workspace]` not excluding it."""
    directory = manifest.parent
    if isinstance(data.get("workspace"), Mapping):
        return directory, data
    named = table(data.get("package")).get("workspace")
    if isinstance(named, str):
        root = _normalized(directory / named)
        # Asked first: whether a directory outside holds a Cargo.toml is not the checkout's
        # to learn from the error.
        if not is_inside(root, checkout) or not configured_path_stays_inside(
            directory, named, checkout
        ):
            raise FeatcheckError(
                f"`package.workspace` names `{printable(named)}`, outside the checkout "
                "(--no-exec reads nothing there)",
                path=manifest,
            )
        root_manifest = root / "Cargo.toml"
        if not is_manifest(root_manifest, what="the workspace root"):
            raise FeatcheckError(
                f"`package.workspace` names `{printable(named)}`, which has no Cargo.toml",
                path=manifest,
            )
        return root, read_manifest(root_manifest, root=checkout).data
    for parent in directory.parents:
        candidate = parent / "Cargo.toml"
        try:
            if not is_manifest(candidate, what="a parent manifest"):
                continue
        except FeatcheckError:
            continue  # a parent directory featcheck may not look into holds no workspace
        parent_data = read_manifest(candidate, root=checkout).data
        workspace = parent_data.get("workspace")
        if not isinstance(workspace, Mapping):
            continue
        if any(directory.is_relative_to(e) for e in _excluded(parent, workspace)):
            continue
        return parent, parent_data
    return directory, data


def discover_workspace(manifest: Path, checkout: Path | None = None) -> WorkspaceLayout:
    manifest = _normalized(manifest.absolute())
    checkout = checkout_root(manifest) if checkout is None else checkout
    data = read_manifest(manifest, root=checkout).data
    root, root_data = _find_root(manifest, data, checkout)
    workspace = table(root_data.get("workspace"))
    excluded = _excluded(root, workspace)  # none, and no members, without a [workspace]
    real_root = Path(os.path.realpath(root))
    members = [root] if isinstance(root_data.get("package"), Mapping) else []
    members += _member_directories(root, real_root, workspace, excluded)
    return WorkspaceLayout(root, root_data, tuple(members), tuple(excluded), real_root, checkout)
