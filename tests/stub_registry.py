"""Views of the stub registry (fixtures/registry) that hold only what cargo can use for one
workspace, so each cargo call in a test loads tens or hundreds of stubs instead of all of them.

cargo reads every package of a directory source on every call, and its query for a dependency
scans them all: `cargo tree` on a burn workspace takes about 0.45 s against the whole registry
and 0.3 s against the stubs its Cargo.lock names; a workspace with a handful of crates drops
from 0.28 s to under 0.1 s. A view is a directory of links to the stubs, one per distinct set of
packages and test process, with its own CARGO_HOME (see the `offline_cargo_for` fixture in conftest.py).

Two views of a workspace:

- `lock_packages`: exactly the registry packages of its Cargo.lock. Enough for cargo
  tree/metadata over the workspace as committed, which cargo resolves from the lockfile alone.
- `reachable_packages`: those plus every stub their dependency declarations (normal, build,
  optional, on any target) can select, and every later version a caret requirement of an
  included version accepts, repeated until nothing is added. Any resolution that starts from
  these packages — a feature or optional dependency turned on, a fix that adds one of these
  crates with a caret requirement of a version in the graph (featcheck's confirmation of fixes
  runs cargo over such an edited copy), a Cargo.lock removed and regenerated — picks among
  the same candidates, and so the same versions, as against the whole registry.

A package a view lacks makes cargo fail loudly (offline, nothing to fall back on), never
resolve differently: the view holds every version cargo would choose from.
"""

from __future__ import annotations

import functools
import re
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from support import FIXTURES

from featcheck.semantics.semver import matches, parse_version

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

REGISTRY = FIXTURES / "registry"


def _split(directory: str) -> tuple[str, str]:
    """`NAME-VERSION` -> (name, version); names may hold `-` and digits (`sha-1-0.10.6`)."""
    for at, character in enumerate(directory):
        if character == "-" and parse_version(directory[at + 1 :]) is not None:
            return directory[:at], directory[at + 1 :]
    raise ValueError(f"not a stub directory name: {directory}")


@functools.cache
def _versions_by_name() -> dict[str, list[tuple[str, str]]]:
    """Each crate name in the registry: its (directory, version) pairs."""
    found: dict[str, list[tuple[str, str]]] = {}
    for entry in sorted(p.name for p in REGISTRY.iterdir()):
        name, version = _split(entry)
        found.setdefault(name, []).append((entry, version))
    return found


def _declarations(manifest: dict[str, Any]) -> Iterator[tuple[str, str]]:
    """(package name, version requirement) of every dependency cargo may resolve for a
    registry package: normal and build, on every target (dev-dependencies never)."""
    tables = [manifest.get("dependencies", {}), manifest.get("build-dependencies", {})]
    for target in manifest.get("target", {}).values():
        tables += [target.get("dependencies", {}), target.get("build-dependencies", {})]
    for table in tables:
        for key, value in table.items():
            if isinstance(value, str):
                yield key, value
            else:
                yield value.get("package", key), value.get("version", "*")


@functools.cache
def _selectable(directory: str) -> tuple[str, ...]:
    """The stubs that `directory`'s declarations can select, and the later versions of its
    own crate that a caret requirement of its version accepts."""
    manifest = tomllib.loads((REGISTRY / directory / "Cargo.toml").read_text())
    package = manifest["package"]
    if _split(directory) != (package["name"], package["version"]):
        raise AssertionError(f"{directory} holds {package['name']} {package['version']}")
    wanted = [(package["name"], f"^{package['version']}"), *_declarations(manifest)]
    by_name = _versions_by_name()
    return tuple(
        entry
        for name, requirement in wanted
        for entry, version in by_name.get(name, ())
        if matches(requirement, version)
    )


def find_lockfile(workspace: Path) -> Path | None:
    """The Cargo.lock cargo uses for `workspace` (a directory or a manifest): the nearest at or
    above it; None when there is none."""
    start = workspace if workspace.is_dir() else workspace.parent
    return next(
        (d / "Cargo.lock" for d in (start, *start.parents) if (d / "Cargo.lock").is_file()), None
    )


def lock_packages(workspace: Path) -> frozenset[str]:
    """`NAME-VERSION` of every crates.io package in the Cargo.lock of `workspace` (a workspace
    root, a member directory or a manifest in one)."""
    lockfile = find_lockfile(workspace)
    if lockfile is None:
        raise AssertionError(f"no Cargo.lock at or above {workspace}")
    return _registry_packages(lockfile.read_text())


_CARGO_ENTRY = re.compile(
    r'^\[\[package\]\]\nname = "([^"\\\n]*)"\nversion = "([^"\\\n]*)"\n'
    r'(?:source = "([^"\\\n]*)"\n)?',
    re.MULTILINE,
)
"""The head of a `[[package]]` entry as cargo writes it: name, version, then source if any."""

_REGISTRIES = ("registry+", "sparse+")


@functools.cache
def _registry_packages(lockfile: str) -> frozenset[str]:
    """`lock_packages` of a lockfile's text, once per test process for each text (the burn
    fixtures' lockfiles hold hundreds of packages, and every test that points cargo at a view
    of the registry asks for them). A lockfile in cargo's own layout is read line by line; any
    other (written by hand, planted) by a TOML parser."""
    entries = [entry.groups() for entry in _CARGO_ENTRY.finditer(lockfile)]
    sources = sum(source is not None for _, _, source in entries)
    in_cargos_layout = len(entries) == lockfile.count("[[package]]") and sources == len(
        re.findall(r"^source = ", lockfile, re.MULTILINE)
    )
    if in_cargos_layout:
        return frozenset(
            f"{name}-{version}"
            for name, version, source in entries
            if (source or "").startswith(_REGISTRIES)
        )
    lock = tomllib.loads(lockfile)
    return frozenset(
        f"{p['name']}-{p['version']}"
        for p in lock.get("package", [])
        if str(p.get("source", "")).startswith(_REGISTRIES)
    )


@functools.cache
def reachable_packages(roots: frozenset[str]) -> frozenset[str]:
    """`roots` and every stub a resolution starting from them can select (see above)."""
    seen: set[str] = set()
    todo = [r for r in roots if (REGISTRY / r).is_dir()]  # a missing one fails in cargo
    while todo:
        directory = todo.pop()
        if directory not in seen:
            seen.add(directory)
            todo.extend(_selectable(directory))
    return frozenset(seen | roots)


def write_view(directory: Path, packages: Iterable[str]) -> Path:
    """A directory source at `directory`: one link per package into the stub registry."""
    directory.mkdir(parents=True)
    for package in sorted(packages):
        if (REGISTRY / package).is_dir():
            (directory / package).symlink_to(REGISTRY / package, target_is_directory=True)
    return directory
