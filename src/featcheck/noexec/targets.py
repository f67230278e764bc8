"""Target cfg values and the host triple without running rustc."""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence

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


def _machine() -> str:
    """`platform.machine()`: `uname -m` where there is one (what `platform` reads there too,
    without the milliseconds of importing it), else what `platform` finds."""
    if hasattr(os, "uname"):
        return os.uname().machine
    import platform

    return platform.machine()


def detect_host_triple(system: str | None = None, machine: str | None = None) -> str:
    """The host triple guessed from the Python runtime (`sys.platform`, `platform.machine()`)."""
    system = sys.platform if system is None else system
    machine = (_machine() if machine is None else machine).lower()
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


def with_rustflags(cfg: TargetCfg, flags: Sequence[str]) -> TargetCfg:
    """`cfg` as rustc reports it given the kept rustflags (`--cfg=...`, `-Ckey=value`, see
    `checkout_config.filter_rustflags`). `--cfg`, `panic` and `debug-assertions` are exact;
    `target-feature` adds and removes the named features only (rustc also adds the features
    they imply), and `target-cpu` is not known without rustc."""
    names, pairs = set(cfg.names), set(cfg.pairs)
    for flag in flags:
        if flag.startswith("--cfg="):
            key, equals, value = flag[len("--cfg=") :].partition("=")
            if equals:
                pairs.add((key.strip(), value.strip().strip('"')))
            else:
                names.add(key.strip())
        elif flag.startswith("-Ctarget-feature="):
            for feature in flag[len("-Ctarget-feature=") :].split(","):
                if feature[:1] == "+":
                    pairs.add(("target_feature", feature[1:]))
                elif feature[:1] == "-":
                    pairs.discard(("target_feature", feature[1:]))
        elif flag.startswith("-Cpanic="):
            pairs = {p for p in pairs if p[0] != "panic"} | {("panic", flag[len("-Cpanic=") :])}
        elif flag.startswith("-Cdebug-assertions"):
            setting = flag.partition("=")[2] or "yes"
            if setting in ("yes", "y", "on", "true"):
                names.add("debug_assertions")
            else:
                names.discard("debug_assertions")
    return TargetCfg(cfg.triple, frozenset(names), frozenset(pairs))
