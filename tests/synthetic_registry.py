"""A small synthetic registry for rule fixtures: crates with only the features and dependency
declarations that feature resolution reads, from fixtures/rules/registry.toml.

It is written once per test session as a cargo directory source; `cargo metadata` over a
fixture resolves against it offline in a fraction of a second.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from support import FIXTURES

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

REGISTRY_SPEC = FIXTURES / "rules" / "registry.toml"


def _toml_value(value: Any) -> str:
    if isinstance(value, dict):
        return "{ " + ", ".join(f'"{k}" = {_toml_value(v)}' for k, v in value.items()) + " }"
    return json.dumps(value)


def write_registry(directory: Path, spec: dict[str, Any] | None = None) -> Path:
    """Write every crate of registry.toml (or of `spec`, in its form) under `directory` (a
    cargo directory source)."""
    if spec is None:
        spec = tomllib.loads(REGISTRY_SPEC.read_text())
    for name, versions in spec.items():
        for version, crate in versions.items():
            root = directory / f"{name}-{version}"
            (root / "src").mkdir(parents=True)
            (root / "src" / "lib.rs").write_text("")
            lines = ["[package]", f'name = "{name}"', f'version = "{version}"', 'edition = "2021"']
            if "lib" in crate:  # `{"proc-macro": True}`: a crate built for the host
                lines += ["", "[lib]"]
                lines += [f'"{k}" = {_toml_value(v)}' for k, v in crate["lib"].items()]
            lines += ["", "[features]"]
            lines += [f'"{k}" = {_toml_value(v)}' for k, v in crate.get("features", {}).items()]
            lines += ["", "[dependencies]"]
            lines += [f'"{k}" = {_toml_value(v)}' for k, v in crate.get("dependencies", {}).items()]
            for platform, table in crate.get("target", {}).items():  # {"cfg(unix)": {dep: spec}}
                lines += ["", f"[target.'{platform}'.dependencies]"]
                lines += [f'"{k}" = {_toml_value(v)}' for k, v in table.items()]
            (root / "Cargo.toml").write_text("\n".join(lines) + "\n")
            (root / ".cargo-checksum.json").write_text('{"files": {}, "package": null}')
    return directory


def write_cargo_home(cargo_home: Path, registry: Path) -> Path:
    """A CARGO_HOME whose config replaces crates.io with `registry`, offline."""
    cargo_home.mkdir(parents=True, exist_ok=True)
    (cargo_home / "config.toml").write_text(
        "[source.crates-io]\n"
        'replace-with = "synthetic"\n'
        "[source.synthetic]\n"
        f"directory = {json.dumps(registry.as_posix())}\n"
        "[net]\n"
        "offline = true\n"
    )
    return cargo_home


def use_registry(base: Path, spec: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> Path:
    """Every cargo started from here on resolves against `spec`'s crates, offline, building in
    a target directory of its own; returns the cargo home, written under `base`."""
    home = write_cargo_home(base / "home", write_registry(base / "registry", spec))
    monkeypatch.setenv("CARGO_HOME", str(home))
    monkeypatch.setenv("CARGO_TARGET_DIR", str(home / "target"))
    return home


def project_rule(code: str, crate: str, feature: str) -> str:
    """A project rule (featcheck.toml) for the registries of the tests: an error wherever
    `crate` is built without `feature`."""
    return (
        f'[[rule]]\ncode = "{code}"\nname = "{crate}-without-{feature}"\nseverity = "error"\n'
        f'crates = ["{crate}"]\nfeature = "{feature}"\nused-when = {{ reachable = true }}\n'
    )


GEMMISH_RULE = project_rule("ACME001", "gemmish", "rayon")
"""A project rule for the registries of the tests: gemmish built without `rayon`."""


POOLED_REGISTRY = {
    "pool": {"1.0.0": {}},
    "gemmish": {
        "0.1.0": {
            "features": {"default": [], "rayon": ["dep:pool"]},
            "dependencies": {"pool": {"version": "1.0.0", "optional": True}},
        }
    },
}
"""gemmish, whose `rayon` brings a package of its own (its thread pool, as matrixmultiply's
`threading` brings thread-tree): Cargo.lock lacks it until a build turns `rayon` on."""


PACKAGE = '[package]\nname = "{}"\nversion = "0.1.0"\nedition = "2021"\n\n'
"""A package table, `PACKAGE.format(name)`, for the manifests of `write_project`."""


def write_project(project: Path, files: Mapping[str, str]) -> Path:
    """A project of `files` (a path relative to it: its text) with GEMMISH_RULE in its
    featcheck.toml, locked by cargo over the registry `use_registry` made."""
    for relative, text in {**files, "featcheck.toml": GEMMISH_RULE}.items():
        (project / relative).parent.mkdir(parents=True, exist_ok=True)
        (project / relative).write_text(text)
    subprocess.run(["cargo", "generate-lockfile", "--offline"], cwd=project, check=True)
    return project


def locked_packages(project: Path) -> set[tuple[str, str]]:
    """The name and version of every package of the project's Cargo.lock."""
    text = (project / "Cargo.lock").read_text()
    return set(re.findall(r'name = "(.*)"\nversion = "(.*)"', text))
