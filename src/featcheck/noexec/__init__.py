"""Audit without starting any process (`--no-exec`): no cargo, no rustc, no rustup.

`cargo metadata` and `rustc --print cfg` are replaced by reading files: the workspace's
manifests, its Cargo.lock, the dependency manifests already unpacked in the local cargo registry
(`$CARGO_HOME/registry/src/*/NAME-VERSION/`), a `vendor/` directory at the workspace root or
the local source the cargo configuration puts in place of the registry (`sources`),
and built-in cfg tables for the common targets. See `metadata.build_metadata`. What it cannot
read goes through the same audit as a gap (`gaps`), never a second, weaker one.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from featcheck.noexec.metadata import FileMetadata, build_metadata
    from featcheck.noexec.targets import SUPPORTED_TARGETS, builtin_cfg, detect_host_triple

__all__ = [
    "SUPPORTED_TARGETS",
    "FileMetadata",
    "build_metadata",
    "builtin_cfg",
    "detect_host_triple",
]

_HOMES = {
    "FileMetadata": "metadata",
    "build_metadata": "metadata",
    "SUPPORTED_TARGETS": "targets",
    "builtin_cfg": "targets",
    "detect_host_triple": "targets",
}


def __getattr__(name: str) -> Any:
    # Loaded on first use: the default audit imports `gaps` (which packages a build could not
    # read) and must not pay for the archive and registry readers it never calls.
    if name not in _HOMES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from importlib import import_module

    return getattr(import_module(f"featcheck.noexec.{_HOMES[name]}"), name)
