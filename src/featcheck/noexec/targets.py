"""Target cfg values and the host triple without running rustc."""

from __future__ import annotations

import platform
import sys
from collections.abc import Sequence

from featcheck.errors import FeatcheckError
from featcheck.semantics.cfg import TargetCfg

# Built-in `rustc --print cfg --target T` output (rustc 1.95.0).
CFG_TEXT: dict[str, str] = {
    "x86_64-unknown-linux-gnu": (
        "debug_assertions\n"
        'panic="unwind"\n'
        'target_abi=""\n'
        'target_arch="x86_64"\n'
        'target_endian="little"\n'
        'target_env="gnu"\n'
        'target_family="unix"\n'
        'target_feature="fxsr"\n'
        'target_feature="sse"\n'
        'target_feature="sse2"\n'
        'target_has_atomic="16"\n'
        'target_has_atomic="32"\n'
        'target_has_atomic="64"\n'
        'target_has_atomic="8"\n'
        'target_has_atomic="ptr"\n'
        'target_os="linux"\n'
        'target_pointer_width="64"\n'
        'target_vendor="unknown"\n'
        "unix\n"
    ),
    "aarch64-unknown-linux-gnu": (
        "debug_assertions\n"
        'panic="unwind"\n'
        'target_abi=""\n'
        'target_arch="aarch64"\n'
        'target_endian="little"\n'
        'target_env="gnu"\n'
        'target_family="unix"\n'
        'target_feature="neon"\n'
        'target_has_atomic="128"\n'
        'target_has_atomic="16"\n'
        'target_has_atomic="32"\n'
        'target_has_atomic="64"\n'
        'target_has_atomic="8"\n'
        'target_has_atomic="ptr"\n'
        'target_os="linux"\n'
        'target_pointer_width="64"\n'
        'target_vendor="unknown"\n'
        "unix\n"
    ),
    "x86_64-apple-darwin": (
        "debug_assertions\n"
        'panic="unwind"\n'
        'target_abi=""\n'
        'target_arch="x86_64"\n'
        'target_endian="little"\n'
        'target_env=""\n'
        'target_family="unix"\n'
        'target_feature="cmpxchg16b"\n'
        'target_feature="fxsr"\n'
        'target_feature="sse"\n'
        'target_feature="sse2"\n'
        'target_feature="sse3"\n'
        'target_feature="sse4.1"\n'
        'target_feature="ssse3"\n'
        'target_has_atomic="128"\n'
        'target_has_atomic="16"\n'
        'target_has_atomic="32"\n'
        'target_has_atomic="64"\n'
        'target_has_atomic="8"\n'
        'target_has_atomic="ptr"\n'
        'target_os="macos"\n'
        'target_pointer_width="64"\n'
        'target_vendor="apple"\n'
        "unix\n"
    ),
    "aarch64-apple-darwin": (
        "debug_assertions\n"
        'panic="unwind"\n'
        'target_abi=""\n'
        'target_arch="aarch64"\n'
        'target_endian="little"\n'
        'target_env=""\n'
        'target_family="unix"\n'
        'target_feature="aes"\n'
        'target_feature="crc"\n'
        'target_feature="dit"\n'
        'target_feature="dotprod"\n'
        'target_feature="dpb"\n'
        'target_feature="dpb2"\n'
        'target_feature="fcma"\n'
        'target_feature="fhm"\n'
        'target_feature="flagm"\n'
        'target_feature="fp16"\n'
        'target_feature="frintts"\n'
        'target_feature="jsconv"\n'
        'target_feature="lor"\n'
        'target_feature="lse"\n'
        'target_feature="neon"\n'
        'target_feature="paca"\n'
        'target_feature="pacg"\n'
        'target_feature="pan"\n'
        'target_feature="pmuv3"\n'
        'target_feature="ras"\n'
        'target_feature="rcpc"\n'
        'target_feature="rcpc2"\n'
        'target_feature="rdm"\n'
        'target_feature="sb"\n'
        'target_feature="sha2"\n'
        'target_feature="sha3"\n'
        'target_feature="ssbs"\n'
        'target_feature="vh"\n'
        'target_has_atomic="128"\n'
        'target_has_atomic="16"\n'
        'target_has_atomic="32"\n'
        'target_has_atomic="64"\n'
        'target_has_atomic="8"\n'
        'target_has_atomic="ptr"\n'
        'target_os="macos"\n'
        'target_pointer_width="64"\n'
        'target_vendor="apple"\n'
        "unix\n"
    ),
    "x86_64-pc-windows-msvc": (
        "debug_assertions\n"
        'panic="unwind"\n'
        'target_abi=""\n'
        'target_arch="x86_64"\n'
        'target_endian="little"\n'
        'target_env="msvc"\n'
        'target_family="windows"\n'
        'target_feature="cmpxchg16b"\n'
        'target_feature="fxsr"\n'
        'target_feature="sse"\n'
        'target_feature="sse2"\n'
        'target_feature="sse3"\n'
        'target_has_atomic="128"\n'
        'target_has_atomic="16"\n'
        'target_has_atomic="32"\n'
        'target_has_atomic="64"\n'
        'target_has_atomic="8"\n'
        'target_has_atomic="ptr"\n'
        'target_os="windows"\n'
        'target_pointer_width="64"\n'
        'target_vendor="pc"\n'
        "windows\n"
    ),
    "wasm32-unknown-unknown": (
        "debug_assertions\n"
        'panic="abort"\n'
        'target_abi=""\n'
        'target_arch="wasm32"\n'
        'target_endian="little"\n'
        'target_env=""\n'
        'target_family="wasm"\n'
        'target_feature="bulk-memory"\n'
        'target_feature="multivalue"\n'
        'target_feature="mutable-globals"\n'
        'target_feature="nontrapping-fptoint"\n'
        'target_feature="reference-types"\n'
        'target_feature="sign-ext"\n'
        'target_has_atomic="16"\n'
        'target_has_atomic="32"\n'
        'target_has_atomic="64"\n'
        'target_has_atomic="8"\n'
        'target_has_atomic="ptr"\n'
        'target_os="unknown"\n'
        'target_pointer_width="32"\n'
        'target_vendor="unknown"\n'
    ),
}

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


# rustc decides `crt-static` itself, not from the feature list in order: on when any
# `+crt-static` is given, else off when any `-crt-static` is, else the target's default; and only
# on targets that respect it (measured with rustc 1.95: Apple and wasm32 ignore it).
_CRT_STATIC_RESPECTED = frozenset(
    {"x86_64-unknown-linux-gnu", "aarch64-unknown-linux-gnu", "x86_64-pc-windows-msvc"}
)
_CRT_STATIC = ("target_feature", "crt-static")


def _with_target_features(
    triple: str, pairs: set[tuple[str, str]], features: list[str]
) -> set[tuple[str, str]]:
    """`pairs` after `-C target-feature` items in order (`+x` adds, `-x` drops; rustc ignores
    an item without a sign), crt-static as rustc decides it."""
    for feature in features:
        if feature[1:] == "crt-static":
            continue
        if feature[:1] == "+":
            pairs.add(("target_feature", feature[1:]))
        elif feature[:1] == "-":
            pairs.discard(("target_feature", feature[1:]))
    if triple in _CRT_STATIC_RESPECTED and "+crt-static" in features:
        pairs.add(_CRT_STATIC)
    elif triple in _CRT_STATIC_RESPECTED and "-crt-static" in features:
        pairs.discard(_CRT_STATIC)
    return pairs


def with_rustflags(cfg: TargetCfg, flags: Sequence[str]) -> TargetCfg:
    """`cfg` as rustc reports it given the kept rustflags (`--cfg=...`, `-Ckey=value`, see
    `rustflags.filter_rustflags`). `--cfg`, `panic`, `debug-assertions` and `crt-static`
    are exact; other target features are added and removed by name only (rustc also adds the
    features they imply), and `target-cpu` is not known without rustc."""
    names, pairs = set(cfg.names), set(cfg.pairs)
    features: list[str] = []
    for flag in flags:
        if flag.startswith("--cfg="):
            key, equals, value = flag[len("--cfg=") :].partition("=")
            key = key.strip().removeprefix("r#")  # rustc reports a raw name without `r#`
            if equals:
                pairs.add((key, value.strip().strip('"')))
            else:
                names.add(key)
        elif flag.startswith("-Ctarget-feature="):
            features += flag[len("-Ctarget-feature=") :].split(",")
        elif flag.startswith("-Cpanic="):
            pairs = {p for p in pairs if p[0] != "panic"} | {("panic", flag[len("-Cpanic=") :])}
        elif flag.startswith("-Cdebug-assertions"):
            setting = flag.partition("=")[2] or "yes"
            if setting in ("yes", "y", "on", "true"):
                names.add("debug_assertions")
            else:
                names.discard("debug_assertions")
    pairs = _with_target_features(cfg.triple, pairs, features)
    return TargetCfg(cfg.triple, frozenset(names), frozenset(pairs))
