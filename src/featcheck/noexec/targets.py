"""Target cfg values and the host triple without running rustc."""

from __future__ import annotations

import platform
import sys

from featcheck.cargo.cfg import TargetCfg
from featcheck.errors import FeatcheckError
from featcheck.noexec.cfg_tables import CFG_TEXT

SUPPORTED_TARGETS: tuple[str, ...] = tuple(CFG_TEXT)
"""Targets a --no-exec audit knows the cfg of."""


def builtin_cfg(triple: str) -> TargetCfg:
    """The cfg of `triple` from the built-in tables; an unknown target is a FeatcheckError."""
    text = CFG_TEXT.get(triple)
    if text is None:
        raise FeatcheckError(
            f"--no-exec does not know the cfg of target {triple!r}"
            f" (supported: {', '.join(SUPPORTED_TARGETS)}); drop --no-exec to ask rustc"
        )
    return TargetCfg.parse(triple, text)


def detect_host_triple(system: str | None = None, machine: str | None = None) -> str:
    """The host triple guessed from the Python runtime (`sys.platform`, `platform.machine()`)."""
    system = sys.platform if system is None else system
    machine = (platform.machine() if machine is None else machine).lower()
    arch = {"amd64": "x86_64", "x86_64": "x86_64", "arm64": "aarch64", "aarch64": "aarch64"}.get(
        machine
    )
    triple: str | None = None
    if arch is not None:
        if system.startswith("linux"):
            triple = f"{arch}-unknown-linux-gnu"
        elif system == "darwin":
            triple = f"{arch}-apple-darwin"
        elif system in ("win32", "cygwin") and arch == "x86_64":
            triple = "x86_64-pc-windows-msvc"
    if triple is None or triple not in CFG_TEXT:
        raise FeatcheckError(
            f"--no-exec cannot tell the host target of this machine ({system}, {machine}):"
            f" pass --target (supported: {', '.join(SUPPORTED_TARGETS)})"
        )
    return triple
