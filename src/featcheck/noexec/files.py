"""Reading files for `--no-exec`: only inside the checkout or the cargo registry, never a traceback.

Everything read here is the checkout's (or a published crate's) text. A path is read only when
it lies, symlinks resolved, inside one of the allowed directories, so a manifest cannot make
featcheck quote another project's files; every OS error becomes a one-line FeatcheckError; and
names that cargo would refuse are refused before they can reach a terminal or a report.
"""

from __future__ import annotations

import functools
import re
import stat
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any, TypeGuard

from featcheck.boundary import MAX_LOCKFILE_BYTES, decode_text, read_checkout_file
from featcheck.cargo.failures import printable
from featcheck.deadline import NO_DEADLINE, READING, READING_HINT, Deadline
from featcheck.errors import FeatcheckError
from featcheck.manifest.document import parse_text
from featcheck.semantics.semver import number_error
from featcheck.workspace.model import Declaration
from featcheck.workspace.workspace import is_registry

_PACKAGE_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_-]*")


def valid_package_name(name: object) -> TypeGuard[str]:
    """cargo's rule for package names (ASCII letters, digits, `-`, `_`; not starting with `-`)."""
    return isinstance(name, str) and _PACKAGE_NAME.fullmatch(name) is not None


def is_manifest(path: Path, *, what: str) -> bool:
    """Whether `path` is there as a regular file; a path that cannot even be looked at (too
    long, a directory without permission, a loop of links) is a FeatcheckError."""
    try:
        mode = path.stat().st_mode
    except (FileNotFoundError, NotADirectoryError):
        return False
    except OSError as error:
        raise FeatcheckError(
            f"failed to load {what}: {error.strerror or error}", path=printable(path)
        ) from None
    return stat.S_ISREG(mode)


def table(value: Any) -> Mapping[str, Any]:
    """`value` when it is a TOML table, else an empty one (cargo reports wrong types; the
    audit reports them where `read_package` reads them)."""
    return value if isinstance(value, Mapping) else {}


_FILE_NAME_BYTES = 255
"""The longest file name Linux, macOS and Windows file systems take."""


def lock_entries(
    lock_path: Path, checkout: Path | None = None, deadline: Deadline = NO_DEADLINE
) -> list[dict[str, Any]]:
    """The `[[package]]` entries of Cargo.lock, each with a valid name, a version, and
    string `source` and `dependencies` where present; one line naming the file otherwise
    (also where it links out of `checkout`: boundary.py). Read within `deadline`: the
    parser's one long call is held to it by the audit's alarm (deadline.py)."""
    raw = read_checkout_file(lock_path, "Cargo.lock", MAX_LOCKFILE_BYTES, checkout)
    text = decode_text(raw, lock_path)
    deadline.check(READING, READING_HINT)
    document = parse_text(lock_path, text)  # invalid TOML: one line with its position
    data = document.data
    if isinstance(version := data.get("version"), int) and not 1 <= version <= 4:
        place = document.spans.get(("version",))
        line, column = (place.value or place.key)[:2] if place is not None else (None, None)
        message = f"lock file version {version} is not one --no-exec reads (1 to 4): drop --no-exec"
        raise FeatcheckError(message, path=lock_path, line=line, column=column)
    packages = data.get("package", [])
    entries: list[dict[str, Any]] = []
    if not isinstance(packages, list):
        raise FeatcheckError("`package` must be an array of tables", path=lock_path)
    for entry in packages:
        deadline.check(READING, READING_HINT)
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
        # What cargo could not do with a checked entry: hold its version numbers, or store a
        # registry package of that name and version (as `NAME-VERSION.crate`).
        problem = number_error(entry["version"])
        archive = f"{entry['name']}-{entry['version']}.crate"
        too_long = len(archive.encode("utf-8")) > _FILE_NAME_BYTES
        if problem is None and too_long and is_registry(entry.get("source")):
            problem = (
                f"a registry package's name and version ({len(archive)} characters as a .crate "
                f"file) do not fit in a file name ({_FILE_NAME_BYTES} bytes)"
            )
        if problem is not None:
            shown = printable(entry["name"])
            raise FeatcheckError(f"invalid [[package]] entry `{shown}`: {problem}", path=lock_path)
        entries.append(dict(entry))
    return entries


def lock_targets(lock: list[dict[str, Any]]) -> Callable[[str], dict[str, Any] | None]:
    """The lock package a `dependencies` entry (`name`, `name version`, `name version (src)`)
    names, found once for each distinct entry (most repeat many times)."""
    by_name: dict[str, list[dict[str, Any]]] = {}
    for entry in lock:
        by_name.setdefault(str(entry["name"]), []).append(entry)

    @functools.cache
    def lock_target(entry: str) -> dict[str, Any] | None:
        parts = entry.split(" ", 2)
        candidates = by_name.get(parts[0], [])
        if len(parts) > 1:
            candidates = [c for c in candidates if c["version"] == parts[1]]
        if len(parts) > 2:
            source = parts[2].strip("()")
            candidates = [c for c in candidates if c.get("source") == source] or candidates
        return candidates[0] if candidates else None

    return lock_target


def feature_error(features: Mapping[str, list[str]], declarations: Iterable[Declaration]) -> str:
    """What cargo says of a feature value naming no dependency or feature; empty if none. A key
    is optional where any of its declarations is (a `[target.X]` table may add one)."""
    keys = {decl.key for decl in declarations}
    optional = {decl.key for decl in declarations if decl.optional}
    for name, values in features.items():
        for value in values:
            dependency, slash, _ = value.removeprefix("dep:").partition("/")
            dependency = dependency.removesuffix("?") if slash else dependency
            said = f"feature `{printable(name)}` includes `{printable(value)}`"
            if value.startswith("dep:") and dependency not in keys:
                return f"{said}, but `{printable(dependency)}` is not listed as a dependency"
            if value.startswith("dep:") and dependency not in optional:
                return f"{said}, but `{printable(dependency)}` is not an optional dependency"
            if slash and dependency not in keys:
                return f"{said}, but `{printable(dependency)}` is not a dependency"
            if slash and value.partition("/")[0].endswith("?") and dependency not in optional:
                named = printable(dependency)
                return f"{said} with a `?`, but `{named}` is not an optional dependency"
            if not slash and not value.startswith("dep:") and value not in features:
                return f"{said} which is neither a dependency nor another feature"
    return ""
