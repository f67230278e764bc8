"""`--fix` and `--diff`: gather the safe fixes per file, show them, write them.

Edits of several findings can meet in one declaration (`fusion` and `autotune` on burn): they
are applied one after the other, each on the text the previous one left, and features already
present are not added twice.
"""

from __future__ import annotations

import difflib
import os
from collections.abc import Iterable
from dataclasses import dataclass, replace
from pathlib import Path

import tomlkit

from featcheck.boundary import is_inside
from featcheck.errors import FeatcheckError
from featcheck.fileio import uninterrupted, write_atomic
from featcheck.fixes.edits import EditError, apply_edit
from featcheck.manifest.document import toml_lines
from featcheck.report import Edit, Finding


@dataclass(frozen=True)
class FileChange:
    """One manifest's text before and after the safe fixes."""

    path: Path
    display: str
    """The path relative to the report root, as findings show it."""
    original: bytes
    updated: str
    created: bool = False
    """The file does not exist yet (a Cargo.lock cargo wrote for a workspace without one)."""


def _present_features(text: str, edit: Edit) -> set[str]:
    """The features a declaration already asks for, or the values a feature already has."""
    node = tomlkit.parse(text.removeprefix("\ufeff")).unwrap()
    for key in edit.declaration:
        if not isinstance(node, dict) or key not in node:
            return set()
        node = node[key]
    if edit.action == "add-feature-values":
        return {f for f in node if isinstance(f, str)} if isinstance(node, list) else set()
    features = node.get("features", []) if isinstance(node, dict) else []
    return {f for f in features if isinstance(f, str)}


def plan_changes(findings: list[Finding]) -> list[FileChange]:
    return plan_edits(
        edit
        for finding in findings
        if finding.fix is not None and finding.fix.safe
        for edit in finding.fix.edits
    )


def plan_edits(all_edits: Iterable[Edit]) -> list[FileChange]:
    """The changes `all_edits` make, one per file, each edit on what the previous ones left."""
    edits: dict[Path, dict[object, Edit]] = {}
    for edit in all_edits:
        same_file = edits.setdefault(edit.manifest, {})
        # Two findings can add the same dependency (FC004 and FC005 each add burn-cpu under
        # --each-feature, their own feature first): one line, with the features of both, and
        # plain where either fix needs it plain (an optional one serves its feature's builds).
        key = (edit.declaration, edit.version) if edit.adds_declaration else edit
        if (known := same_file.get(key)) is not None:
            action = min(known.action, edit.action, key=lambda action: "optional" in action)
            features = tuple(dict.fromkeys(known.features + edit.features))
            edit = replace(known, action=action, features=features)
        same_file[key] = edit
    changes: list[FileChange] = []
    for path, by_key in edits.items():
        queue = list(by_key.values())
        # `dep:NAME` may name an optional dependency only: no feature turns on a plain line.
        plain = {
            f"dep:{e.declaration[-1]}"
            for e in queue
            if e.adds_declaration and "optional" not in e.action
        }
        try:
            original = path.read_bytes()
            text = original.decode("utf-8")
        except (OSError, UnicodeDecodeError) as error:
            raise FeatcheckError(f"cannot read: {error}", path=path) from None
        updated = text
        for edit in queue:
            if edit.action in ("add-features", "add-feature-values"):
                present = _present_features(updated, edit) | plain
                edit = replace(edit, features=tuple(f for f in edit.features if f not in present))
                if not edit.features:
                    continue
            try:
                updated = apply_edit(updated, edit)
            except EditError as error:
                raise FeatcheckError(f"cannot apply the fix: {error}", path=path) from None
        if updated != text:
            changes.append(FileChange(path, queue[0].file or str(path), original, updated))
    return changes


def render_diff(changes: list[FileChange]) -> str:
    """A unified diff of every change, with paths relative to the report root; a last line
    without a line break is marked as `diff` and git mark it, or the next line would run on."""
    chunks: list[str] = []
    for change in changes:
        before = toml_lines(change.original.decode("utf-8"))
        after = toml_lines(change.updated)
        old = "/dev/null" if change.created else f"a/{change.display}"
        for line in difflib.unified_diff(before, after, old, f"b/{change.display}"):
            ended = line.endswith("\n")
            chunks.append(line if ended else f"{line}\n\\ No newline at end of file\n")
    return "".join(chunks)


def refuse_outside(changes: list[FileChange], root: Path, manifests: Iterable[Path] = ()) -> None:
    """Refuse the whole run unless every file to write is a regular file inside the checkout
    root (`boundary.py`): a path dependency `../victim`, a member directory that links out or
    a manifest that is a symlink (an atomic write would replace the link) is the checkout's
    doing, and featcheck writes nothing on its say outside its own files."""
    linked = {os.path.realpath(m): m for m in manifests if m.is_symlink()}
    symlink = "is a symlink; --fix replaces only regular files, so nothing was written"
    for change in changes:
        path = change.path
        link = linked.get(os.path.realpath(path))
        if link is not None:
            shown = link.relative_to(root) if link.is_relative_to(root) else link
            raise FeatcheckError(symlink, path=shown.as_posix())
        if path.is_symlink():
            why = symlink
        elif not is_inside(path, root):
            why = "lies outside the checkout; --fix writes only inside it, so nothing was written"
        elif path.exists() and not path.is_file():
            why = "is not a regular file; nothing was written"
        else:
            continue
        raise FeatcheckError(why, path=change.display)


def write_changes(changes: list[FileChange]) -> None:
    """Write every change atomically, once every file is seen to hold what was read (a file
    changed meanwhile stops the run before anything is written)."""
    for change in changes:
        try:
            current: bytes | None = change.path.read_bytes()
        except FileNotFoundError:
            current = None
        except OSError as error:
            raise FeatcheckError(
                f"cannot read: {error.strerror or error}", path=change.path
            ) from None
        if current != (None if change.created else change.original):
            raise FeatcheckError(
                "changed since featcheck read it; nothing was written (run featcheck again)",
                path=change.path,
            )
    with uninterrupted():  # Ctrl-C waits for Cargo.lock to follow the manifests
        for change in changes:
            expected = None if change.created else change.original
            write_atomic(change.path, change.updated.encode("utf-8"), expected=expected)
