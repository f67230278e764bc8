#!/usr/bin/env python3
"""Build the offline stub registry under ``fixtures/registry/``.

This is a developer tool, not part of featcheck and not run by the test suite.
It needs network access to the real crates.io registry (it runs
``cargo metadata``, which downloads the crates into the normal ``~/.cargo``).

What it produces
----------------
For every workspace root it is given (default: every directory with a
``Cargo.lock`` under ``crates/`` and ``fixtures/workspaces/``) it reads the
lockfile and ``cargo metadata --format-version 1 --locked --all-features`` and,
for every *registry* package in the lockfile, writes a stub crate::

    fixtures/registry/<name>-<version>/
        Cargo.toml            name, version, edition, [lib] only when needed,
                              [features] and every dependency declaration
        src/lib.rs            empty
        .cargo-checksum.json  {"files": {}, "package": "<checksum from Cargo.lock>"}

The directory is a cargo *directory source*: pointing ``crates-io`` at it
(``[source.crates-io] replace-with = ...``, see ``fixtures/README.md``) lets the
real ``cargo tree`` / ``cargo metadata`` / ``cargo check`` resolve the committed
lockfiles offline, with exactly the features the real crates would get, because
cargo resolves features from manifests alone.

Stub manifests keep: ``[package]`` name/version/edition; ``[lib]`` with
``proc-macro = true`` for proc-macro crates (they are host dependencies and
resolve features separately) and ``name = ...`` when the library name is not
the package name with ``-`` replaced by ``_``; ``[features]`` exactly as cargo
metadata reports them (implicit features of optional dependencies are written
out explicitly, which is equivalent); every dependency declaration (normal,
dev, build, and target-specific ones under ``[target.'<cfg or triple>'.*]``)
with its version requirement, ``optional``, ``default-features``, ``features``
and ``package`` for renamed dependencies. Only non-default values of
``optional`` (true), ``default-features`` (false) and ``features`` (non-empty)
are written. Dropped: ``links``, ``build``, ``rust-version``, every non-lib
target and all metadata (description, license, ...).

Output is deterministic: running it twice, or on another machine, gives the
same bytes. Files are only rewritten when their content changes.

Usage
-----
    .venv/bin/python scripts/build_fixture_registry.py            # all default roots
    .venv/bin/python scripts/build_fixture_registry.py --prune    # also delete stale stubs
    .venv/bin/python scripts/build_fixture_registry.py fixtures/workspaces/renamed

``--prune`` removes package directories under the output directory that none
of the given roots needs; use it only with the full set of roots (the default).
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

if sys.version_info >= (3, 11):
    import tomllib

    def _parse_toml(text: str) -> dict[str, Any]:
        return tomllib.loads(text)

else:  # pragma: no cover - Python 3.10
    import tomlkit

    def _parse_toml(text: str) -> dict[str, Any]:
        parsed: dict[str, Any] = tomlkit.parse(text).unwrap()
        return parsed


REPO_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_OUTPUT = REPO_ROOT / "fixtures" / "registry"
DEFAULT_ROOT_PARENTS = (REPO_ROOT / "crates", REPO_ROOT / "fixtures" / "workspaces")
CRATES_IO_SOURCES = frozenset(
    {
        "registry+https://github.com/rust-lang/crates.io-index",
        "sparse+https://index.crates.io/",
    }
)
_BARE_KEY = re.compile(r"^[A-Za-z0-9_-]+$")
_KIND_TABLE = {None: "dependencies", "dev": "dev-dependencies", "build": "build-dependencies"}
_KIND_ORDER = {None: 0, "dev": 1, "build": 2}


class RegistryError(RuntimeError):
    """Raised when the inputs are inconsistent (e.g. metadata lacks a locked package)."""


@dataclass(frozen=True, order=True)
class LockedPackage:
    name: str
    version: str
    checksum: str

    @property
    def dir_name(self) -> str:
        return f"{self.name}-{self.version}"


# --------------------------------------------------------------------------- TOML output


def _key(key: str) -> str:
    return key if _BARE_KEY.match(key) else _string(key)


def _string(value: str) -> str:
    # JSON string escaping is a subset of TOML basic-string escaping.
    return json.dumps(value, ensure_ascii=True)


def _target_key(target: str) -> str:
    # Literal strings read best for cfg expressions: 'cfg(target_os = "linux")'.
    if "'" not in target and "\n" not in target:
        return f"'{target}'"
    return _string(target)


def _string_array(values: Iterable[str]) -> str:
    return "[" + ", ".join(_string(v) for v in values) + "]"


def _dependency_line(dep: Mapping[str, Any]) -> str:
    key = dep["rename"] or dep["name"]
    fields: list[str] = []
    if dep["rename"]:
        fields.append(f"package = {_string(dep['name'])}")
    fields.append(f"version = {_string(dep['req'])}")
    if dep["optional"]:
        fields.append("optional = true")
    if not dep["uses_default_features"]:
        fields.append("default-features = false")
    if dep["features"]:
        fields.append(f"features = {_string_array(dep['features'])}")
    return f"{_key(key)} = {{ {', '.join(fields)} }}"


def _lib_section(package: Mapping[str, Any]) -> list[str]:
    libs = [
        t
        for t in package["targets"]
        if any(k in ("lib", "rlib", "dylib", "proc-macro") for k in t["kind"])
    ]
    if not libs:
        return []
    lib = libs[0]
    lines: list[str] = []
    if lib["name"] != package["name"].replace("-", "_"):
        lines.append(f"name = {_string(lib['name'])}")
    if "proc-macro" in lib["kind"]:
        lines.append("proc-macro = true")
    return ["", "[lib]", *lines] if lines else []


def render_manifest(package: Mapping[str, Any]) -> str:
    """Render the stub ``Cargo.toml`` for one ``cargo metadata`` package entry."""
    out = [
        "# Stub generated by scripts/build_fixture_registry.py: manifest data only, no sources.",
        "[package]",
        f"name = {_string(package['name'])}",
        f"version = {_string(package['version'])}",
        f"edition = {_string(package['edition'])}",
    ]
    out += _lib_section(package)

    features: Mapping[str, list[str]] = package["features"]
    if features:
        out += ["", "[features]"]
        out += [f"{_key(name)} = {_string_array(features[name])}" for name in sorted(features)]

    for dep in package["dependencies"]:
        source = dep.get("source")
        if source is not None and source not in CRATES_IO_SOURCES:
            raise RegistryError(
                f"{package['name']} {package['version']}: dependency {dep['name']} "
                f"comes from {source!r}, which the stub registry cannot represent"
            )

    groups: dict[tuple[str, str | None], list[Mapping[str, Any]]] = {}
    for dep in package["dependencies"]:
        groups.setdefault((dep["target"] or "", dep["kind"]), []).append(dep)

    def group_order(item: tuple[str, str | None]) -> tuple[str, int]:
        return (item[0], _KIND_ORDER[item[1]])

    for target, kind in sorted(groups, key=group_order):
        table = _KIND_TABLE[kind]
        header = f"[target.{_target_key(target)}.{table}]" if target else f"[{table}]"
        deps = groups[(target, kind)]
        lines = sorted(_dependency_line(d) for d in deps)
        keys = [(d["rename"] or d["name"]) for d in deps]
        if len(set(keys)) != len(keys):
            raise RegistryError(
                f"{package['name']} {package['version']}: duplicate keys in {header}: {keys}"
            )
        out += ["", header, *lines]
    return "\n".join(out) + "\n"


def render_checksum(checksum: str) -> str:
    return json.dumps({"files": {}, "package": checksum}, sort_keys=True) + "\n"


# --------------------------------------------------------------------------- inputs


def default_roots() -> list[Path]:
    roots: list[Path] = []
    for parent in DEFAULT_ROOT_PARENTS:
        if parent.is_dir():
            roots += sorted(p for p in parent.iterdir() if (p / "Cargo.lock").is_file())
    return roots


def read_lockfile(root: Path) -> list[LockedPackage]:
    lock = _parse_toml((root / "Cargo.lock").read_text(encoding="utf-8"))
    packages: list[LockedPackage] = []
    for entry in lock.get("package", []):
        source = entry.get("source")
        if source is None:
            continue  # path package (workspace member)
        if source not in CRATES_IO_SOURCES:
            print(
                f"warning: {root}: skipping {entry['name']} {entry['version']} from {source}",
                file=sys.stderr,
            )
            continue
        checksum = entry.get("checksum")
        if not checksum:
            raise RegistryError(f"{root}: {entry['name']} {entry['version']} has no checksum")
        packages.append(LockedPackage(entry["name"], entry["version"], checksum))
    return packages


def read_metadata(root: Path, cargo: str) -> dict[tuple[str, str], dict[str, Any]]:
    cmd = [cargo, "metadata", "--format-version", "1", "--locked", "--all-features"]
    proc = subprocess.run(cmd, cwd=root, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise RegistryError(f"{root}: `{' '.join(cmd)}` failed:\n{proc.stderr}")
    metadata = json.loads(proc.stdout)
    return {
        (p["name"], p["version"]): p
        for p in metadata["packages"]
        if p.get("source") in CRATES_IO_SOURCES
    }


# --------------------------------------------------------------------------- output


def _write_if_changed(path: Path, content: str) -> bool:
    if path.is_file() and path.read_text(encoding="utf-8") == content:
        return False
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(content, encoding="utf-8", newline="\n")
    return True


def write_stub(output: Path, locked: LockedPackage, manifest: str) -> bool:
    base = output / locked.dir_name
    changed = _write_if_changed(base / "Cargo.toml", manifest)
    changed |= _write_if_changed(base / "src" / "lib.rs", "")
    changed |= _write_if_changed(base / ".cargo-checksum.json", render_checksum(locked.checksum))
    expected = {"Cargo.toml", "src", ".cargo-checksum.json"}
    for extra in sorted(p for p in base.iterdir() if p.name not in expected):
        shutil.rmtree(extra) if extra.is_dir() else extra.unlink()
        changed = True
    for extra in sorted(p for p in (base / "src").iterdir() if p.name != "lib.rs"):
        shutil.rmtree(extra) if extra.is_dir() else extra.unlink()
        changed = True
    return changed


def build(roots: Sequence[Path], output: Path, cargo: str, prune: bool) -> int:
    stubs: dict[LockedPackage, str] = {}
    for root in roots:
        root = root.resolve()
        locked = read_lockfile(root)
        metadata = read_metadata(root, cargo)
        missing = [p for p in locked if (p.name, p.version) not in metadata]
        if missing:
            names = ", ".join(f"{p.name} {p.version}" for p in missing)
            raise RegistryError(f"{root}: cargo metadata does not list locked packages: {names}")
        for pkg in locked:
            manifest = render_manifest(metadata[(pkg.name, pkg.version)])
            previous = stubs.setdefault(pkg, manifest)
            if previous != manifest:
                raise RegistryError(f"{pkg.dir_name}: manifests differ between workspaces")
        print(
            f"{root.relative_to(REPO_ROOT) if root.is_relative_to(REPO_ROOT) else root}: "
            f"{len(locked)} registry packages",
            file=sys.stderr,
        )

    by_dir: dict[str, LockedPackage] = {}
    for pkg in stubs:
        other = by_dir.setdefault(pkg.dir_name, pkg)
        if other != pkg:
            raise RegistryError(f"{pkg.dir_name}: two different checksums ({other}, {pkg})")

    output.mkdir(parents=True, exist_ok=True)
    changed = sum(write_stub(output, pkg, stubs[pkg]) for pkg in sorted(stubs))
    removed = 0
    if prune:
        for stale in sorted(p for p in output.iterdir() if p.name not in by_dir):
            shutil.rmtree(stale) if stale.is_dir() else stale.unlink()
            removed += 1
    print(
        f"{output}: {len(stubs)} packages, {changed} written or updated, {removed} pruned",
        file=sys.stderr,
    )
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument(
        "roots",
        nargs="*",
        type=Path,
        help="workspace roots with a Cargo.lock (default: crates/* and fixtures/workspaces/*)",
    )
    parser.add_argument("--output", type=Path, default=DEFAULT_OUTPUT, help="registry directory")
    parser.add_argument("--cargo", default="cargo", help="cargo executable (default: cargo)")
    parser.add_argument(
        "--prune", action="store_true", help="delete stub directories no root needs"
    )
    args = parser.parse_args(argv)
    roots = args.roots or default_roots()
    if not roots:
        parser.error("no workspace roots found")
    try:
        return build(roots, args.output, args.cargo, args.prune)
    except RegistryError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
