"""Real workspaces for bench_cli.py's `--workspace PATH[::MEMBER/Cargo.toml]`: a copy of the
user's checkout (never the checkout itself) and the member manifest whose `version` each run of
the "edit" situation changes.

The version is edited by build metadata (`1.2.3` becomes `1.2.3+edit.7`): cargo prints it in its
metadata and writes it to the lockfile, as after a release bump, and, since build metadata takes
no part in version matching, no sibling's `=1.2.3` or `^0.0.1` requirement on the member breaks.
"""

from __future__ import annotations

import itertools
import json
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

VERSION = re.compile(r'^version\s*=\s*"([^"+]+)(?:\+[^"]*)?"', re.M)
PACKAGE_TABLE = re.compile(r"^\[(?:workspace\.)?package\]\s*$(.*?)(?=^\[|\Z)", re.M | re.S)
EDITS = itertools.count()


def package_version(text: str) -> re.Match[str] | None:
    """The literal version of `[package]` (else `[workspace.package]`), not a dependency's."""
    for table in PACKAGE_TABLE.finditer(text):
        version = VERSION.search(text, table.start(1), table.end(1))
        if version is not None:
            return version
    return None


def edit_version(manifest: Path) -> None:
    """Give the package's literal version a build metadata of its own."""
    text = manifest.read_text()
    version = package_version(text)
    if version is None:
        raise SystemExit(f'{manifest}: no literal `version = "…"` in [package] to edit')
    edited = f'version = "{version.group(1)}+edit.{next(EDITS)}"'
    manifest.write_text(text[: version.start()] + edited + text[version.end() :])


def parse_spec(spec: str) -> tuple[Path, str | None]:
    """`PATH` or `PATH::crates/x/Cargo.toml` (the member manifest, relative to PATH)."""
    path, _, member = spec.partition("::")
    root = Path(path).expanduser().resolve()
    if not (root / "Cargo.toml").is_file():
        raise SystemExit(f"--workspace {spec}: no Cargo.toml in {root}")
    return root, member or None


def copy_checkout(root: Path, destination: Path) -> Path:
    """The checkout without its build outputs and git history: runs edit this copy only."""
    ignored = shutil.ignore_patterns("target", ".git", "node_modules")
    shutil.copytree(root, destination, ignore=ignored, symlinks=True)
    return destination


def find_member(copy: Path, environment: dict[str, str]) -> Path:
    """The first workspace member (in cargo's order) with a literal version of its own; else the
    root manifest (its `[workspace.package]` version)."""
    command = ["cargo", "metadata", "--no-deps", "--format-version", "1"]
    result = subprocess.run(command, cwd=copy, env=environment, capture_output=True, text=True)
    if result.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed in {copy}:\n{result.stderr}")
    metadata = json.loads(result.stdout)
    members = set(metadata["workspace_members"])
    for package in metadata["packages"]:
        manifest = Path(package["manifest_path"])
        if package["id"] in members and package_version(manifest.read_text()):
            return manifest
    return copy / "Cargo.toml"


def workspace_copy(spec: str, scratch: Path, environment: dict[str, str]) -> tuple[Path, Path]:
    """(the copy's root, the member manifest to edit) for one `--workspace` value."""
    root, member = parse_spec(spec)
    # A folder of its own per checkout: two checkouts may share a name (two uv versions).
    (scratch / "workspaces").mkdir(exist_ok=True)
    parent = Path(tempfile.mkdtemp(dir=scratch / "workspaces"))
    copy = copy_checkout(root, parent / root.name)
    manifest = copy / member if member else find_member(copy, environment)
    if not manifest.is_file():
        raise SystemExit(f"--workspace {spec}: no {member} in {root}")
    if package_version(manifest.read_text()) is None:
        relative = manifest.relative_to(copy)
        raise SystemExit(
            f"--workspace {spec}: {relative} has no literal version (name a member that has one)"
        )
    return copy, manifest
