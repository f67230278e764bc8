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


def _string(value: str) -> str:
    # A JSON string of printable ASCII is a valid TOML basic string.
    return json.dumps(value, ensure_ascii=True)


def _array(values: Iterable[str]) -> str:
    return "[" + ", ".join(_string(v) for v in values) + "]"


def _value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    return _string(str(value))


def _key(name: str) -> str:
    return name if _BARE_KEY.fullmatch(name) else _string(name)


def _dependency(name: str, version: str, features: Iterable[str]) -> str:
    return (
        f"{_key(name)} = {{ version = {_string('=' + version)}, default-features = false, "
        f"features = {_array(features)} }}"
    )


def render_cargo_toml(config: BackendConfig, bin_name: str, *, mlp: bool) -> str:
    """The probe's manifest for `config`, building a binary called `bin_name`."""
    lines = [
        "# Written by `featcheck probe`; rewritten on every probe of this configuration.",
        f"# Reproduces {config.member}'s build of {config.backend} ({config.target}).",
        "[package]",
        f"name = {_string(PACKAGE)}",
        'version = "0.1.0"',
        'edition = "2021"',
        "publish = false",
        "",
        "[[bin]]",
        f"name = {_string(bin_name)}",
        'path = "src/main.rs"',
        "",
        "[features]",
        f"default = {_array(['mlp'] if mlp else [])}",
        f"mlp = {_array(f'{FACADE}/{feature}' for feature in MLP_FEATURES)}",
        "",
        "[dependencies]",
        _dependency(FACADE, config.burn_version, BURN_FEATURES),
        *(_dependency(pin.name, pin.version, pin.features) for pin in config.pins),
        "",
        "[target.'cfg(unix)'.dependencies]",
        'libc = "0.2"',
        "",
        "[profile.release]",
        "debug = false",
        *(f"{key} = {_value(value)}" for key, value in sorted(config.profile.items())),
        "",
        "# Keep the probe out of any workspace above it.",
        "[workspace]",
        "",
    ]
    return "\n".join(lines)
