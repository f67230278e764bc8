"""The probe's Cargo.toml, written from a resolved backend configuration.

burn gives the probe its API (`Device::flex()`, `Tensor::matmul`), with only the features that
select Flex (plus autodiff and optim for the MLP workload); burn-flex and the gemm crates below
it are direct dependencies pinned to the member's versions with `default-features = false` and
exactly the member's resolved features, so that cargo's feature unification gives them the
member's feature set, no more and no less (checked with cargo tree before building).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from typing import Any

from featcheck.probe.resolve import FACADE, BackendConfig

PACKAGE = "featcheck-probe"
BURN_FEATURES = ("std", "flex")
MLP_FEATURES = ("autodiff", "optim")
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


def render_cargo_toml(config: BackendConfig, bin_name: str, *, mlp: bool) -> str:
    """The probe's manifest for `config`, building a binary called `bin_name`."""
    lines = [
        *package_head(
            "`featcheck probe`; rewritten on every probe of this configuration",
            PACKAGE,
            config,
            bin_name,
        ),
        "[features]",
        f"default = {toml_array(['mlp'] if mlp else [])}",
        f"mlp = {toml_array(f'{FACADE}/{feature}' for feature in MLP_FEATURES)}",
        "",
        "[dependencies]",
        dependency_line(FACADE, config.burn_version, BURN_FEATURES),
        *(dependency_line(pin.name, pin.version, pin.features) for pin in config.pins),
        "",
        "[target.'cfg(unix)'.dependencies]",
        'libc = "0.2"',
        "",
        *release_and_workspace(config),
    ]
    return "\n".join(lines)


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
