"""A probe crate's Cargo.toml: its program's crates, each a direct dependency pinned to the
member's version with `default-features = false` and exactly the member's resolved features, so
that cargo's feature unification gives them the member's feature set, no more and no less
(checked with cargo tree before building); the member's release speed settings.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from typing import Any

from featcheck.probe.programs import Program
from featcheck.probe.resolve import BackendConfig

PACKAGE = "featcheck-probe"
_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")


def toml_string(value: str) -> str:
    # A JSON string of printable ASCII is a valid TOML basic string.
    return json.dumps(value, ensure_ascii=True)


def toml_array(values: Iterable[str]) -> str:
    return "[" + ", ".join(toml_string(v) for v in values) + "]"


def value_text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    return toml_string(str(value))


def toml_key(name: str) -> str:
    return name if _BARE_KEY.fullmatch(name) else toml_string(name)


def dependency_line(name: str, version: str, features: Iterable[str]) -> str:
    return (
        f"{toml_key(name)} = {{ version = {toml_string('=' + version)}, default-features = false, "
        f"features = {toml_array(features)} }}"
    )


def package_head(written_by: str, package: str, config: BackendConfig, bin_name: str) -> list[str]:
    """The opening of a probe crate's manifest: who writes it, what it reproduces, the
    package and its one binary `bin_name`."""
    return [
        f"# Written by {written_by}.",
        f"# Reproduces {config.member}'s build of {config.backend} ({config.target}).",
        "[package]",
        f"name = {toml_string(package)}",
        'version = "0.1.0"',
        'edition = "2021"',
        "publish = false",
        "",
        "[[bin]]",
        f"name = {toml_string(bin_name)}",
        'path = "src/main.rs"',
        "",
    ]


def render_manifest(config: BackendConfig, program: Program, bin_name: str) -> str:
    """The manifest of `program`'s probe crate for `config`, building `bin_name`."""
    return "\n".join(
        [
            *package_head(
                "`featcheck probe`; rewritten on every probe of this build",
                PACKAGE,
                config,
                bin_name,
            ),
            *_features(config, program),
            "[dependencies]",
            *(dependency_line(pin.name, pin.version, pin.features) for pin in config.pins),
            "",
            *release_and_workspace(config),
        ]
    )


def _features(config: BackendConfig, program: Program) -> list[str]:
    """The probe crate's own features, for a program that tests the crate's features with
    `cfg`: each declared, on by default exactly when the pinned crate has it (so that cargo
    builds the program's code for that API, and nothing else changes)."""
    if not program.cfg_features:
        return []
    return [
        "[features]",
        f"default = {toml_array(program.probe_features(config.backend.features))}",
        *(f"{toml_key(feature)} = []" for feature in sorted(program.cfg_features)),
        "",
    ]


def release_and_workspace(config: BackendConfig) -> list[str]:
    """A probe manifest's last lines: the member's speed settings, and no workspace above."""
    return [
        "[profile.release]",
        "debug = false",
        *(f"{key} = {value_text(value)}" for key, value in sorted(config.profile.items())),
        "",
        "# Keep the probe out of any workspace above it.",
        "[workspace]",
        "",
    ]
