"""The files source (`--no-exec`): the workspace from the manifests, Cargo.lock and the local
registry, cfg from built-in tables. It starts no process, and has no way to start one."""

from __future__ import annotations

import os
import platform
import sys
from collections.abc import Callable, Sequence
from functools import cached_property
from pathlib import Path
from typing import NamedTuple

from featcheck.boundary import TrustContext
from featcheck.cargo.argv_gate import environment_rustflags
from featcheck.cargo.checkout_config import CheckoutConfig, read_checkout_config
from featcheck.cargo.pending_metadata import PendingMetadata, Unification, decide
from featcheck.deadline import Deadline
from featcheck.errors import FeatcheckError
from featcheck.featureset import AuditOptions
from featcheck.noexec.metadata import build_metadata
from featcheck.semantics.cfg import TargetCfg


class FileSource:
    """A `MetadataSource` (cargo/pending_metadata.py) that reads files only, within the
    audit's `--timeout` from its making (a `SourceFactory`, audit.py)."""

    def __init__(self, workdir: Path, options: AuditOptions, trust: TrustContext) -> None:
        trust.refuse_outside_tree(workdir)
        self.workdir = workdir
        self.trust = trust
        self.deadline = Deadline(options.timeout)
        self.checkout: Path = trust.root
        self._host: str | None = None
        self._cfg_cache: dict[str, TargetCfg] = {}

    def start_metadata(
        self, manifest_path: Path, *, all_features: bool = False, features: tuple[str, ...] = ()
    ) -> PendingMetadata:
        """The workspace, read when the audit asks for it. Its resolve comes from Cargo.lock,
        which lists every optional dependency any feature turns on, so it serves every feature
        selection (the flags change nothing)."""
        patches = self._checkout_config.patch_paths
        return PendingMetadata(
            lambda _parse: build_metadata(manifest_path, self.trust, self.deadline, patches)
        )

    def host_triple(self) -> str:
        if self._host is None:
            self._host = detect_host_triple()
        return self._host

    def default_targets(self) -> list[str]:
        return list(self._checkout_config.build_targets) or [self.host_triple()]

    def host_cfg(self) -> TargetCfg:
        """The built-in cfg table of the host (host units get no rustflags, as in cargo)."""
        return builtin_cfg(self.host_triple())

    def target_cfg(self, triple: str) -> TargetCfg:
        """The built-in cfg table of `triple`, with the rustflags cargo would give that target."""
        if triple not in self._cfg_cache:
            try:
                plain = builtin_cfg(triple)
            except FeatcheckError as error:
                if triple in self._checkout_config.build_targets:
                    error.message += " (it is the cargo configuration's `build.target`)"
                raise
            flags = environment_rustflags(os.environ)
            if flags is None:
                flags = self._checkout_config.rustflags(triple, plain)
            self._cfg_cache[triple] = with_rustflags(plain, flags) if flags else plain
        return self._cfg_cache[triple]

    def unification(self, show: Callable[[Path], str]) -> Unification:
        """What the configuration asks, with the toolchain's channel unknown (see `decide`)."""
        return decide(self._checkout_config.unification, os.environ, None, show)

    @cached_property
    def _checkout_config(self) -> CheckoutConfig:
        """The checkout's configuration, only read (nothing goes on the network)."""
        return read_checkout_config(
            self.workdir,
            os.environ,
            self.trust.cargo_home,
            offline=True,
            untrusted_home=self.trust.untrusted_cargo_home,
            root=self.checkout,
        )


# Target cfg values and the host triple without running rustc.


class _Printed(NamedTuple):
    """What `rustc --print cfg` prints for a target beyond its triple's own parts (arch, vendor,
    env: `ARCH-VENDOR-OS[-ENV]`)."""

    os: str
    family: str
    pointer_width: str
    atomics: str
    features: str
    panic: str = "unwind"


_PRINTED: dict[str, _Printed] = {
    "x86_64-unknown-linux-gnu": _Printed("linux", "unix", "64", "8 16 32 64", "fxsr sse sse2"),
    "aarch64-unknown-linux-gnu": _Printed("linux", "unix", "64", "8 16 32 64 128", "neon"),
    "x86_64-apple-darwin": _Printed(
        "macos", "unix", "64", "8 16 32 64 128", "cmpxchg16b fxsr sse sse2 sse3 sse4.1 ssse3"
    ),
    "aarch64-apple-darwin": _Printed(
        "macos",
        "unix",
        "64",
        "8 16 32 64 128",
        "aes crc dit dotprod dpb dpb2 fcma fhm flagm fp16 frintts jsconv lor lse neon paca pacg "
        "pan pmuv3 ras rcpc rcpc2 rdm sb sha2 sha3 ssbs vh",
    ),
    "x86_64-pc-windows-msvc": _Printed(
        "windows", "windows", "64", "8 16 32 64 128", "cmpxchg16b fxsr sse sse2 sse3"
    ),
    "wasm32-unknown-unknown": _Printed(
        "unknown",
        "wasm",
        "32",
        "8 16 32 64",
        "bulk-memory multivalue mutable-globals nontrapping-fptoint reference-types sign-ext",
        panic="abort",
    ),
}

SUPPORTED_TARGETS: tuple[str, ...] = tuple(_PRINTED)
"""Targets a --no-exec audit knows the cfg of."""


def builtin_cfg(triple: str) -> TargetCfg:
    """The cfg of `triple` from the built-in tables; an unknown target is a FeatcheckError."""
    printed = _PRINTED.get(triple)
    if printed is None:
        raise FeatcheckError(
            f"--no-exec does not know the cfg of target {triple!r}"
            f" (supported: {', '.join(SUPPORTED_TARGETS)}); drop --no-exec to ask rustc"
        )
    arch, vendor, _, *env = triple.split("-")
    names = {"debug_assertions"} | ({printed.family} if printed.family != "wasm" else set())
    pairs = {
        ("panic", printed.panic),
        ("target_abi", ""),
        ("target_arch", arch),
        ("target_endian", "little"),
        ("target_env", "".join(env)),
        ("target_family", printed.family),
        ("target_os", printed.os),
        ("target_pointer_width", printed.pointer_width),
        ("target_vendor", vendor),
        *(("target_feature", feature) for feature in printed.features.split()),
        *(("target_has_atomic", width) for width in [*printed.atomics.split(), "ptr"]),
    }
    return TargetCfg(triple, frozenset(names), frozenset(pairs))


def detect_host_triple(system: str | None = None, machine: str | None = None) -> str:
    """The host triple guessed from the Python runtime (`sys.platform`, `platform.machine()`)."""
    system = sys.platform if system is None else system
    machine = (platform.machine() if machine is None else machine).lower()
    # Any other architecture makes a triple without a table here: refused below.
    arch = {"amd64": "x86_64", "arm64": "aarch64"}.get(machine, machine)
    triple: str | None = None
    if system.startswith("linux"):
        triple = f"{arch}-unknown-linux-gnu"
    elif system == "darwin":
        triple = f"{arch}-apple-darwin"
    elif system in ("win32", "cygwin") and arch == "x86_64":
        triple = "x86_64-pc-windows-msvc"
    if triple is None or triple not in _PRINTED:
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


def with_rustflags(cfg: TargetCfg, flags: Sequence[str]) -> TargetCfg:
    """`cfg` as rustc reports it given the kept rustflags (`--cfg=...`, `-Ckey=value`, see
    `argv_gate.filter_rustflags`). `--cfg`, `panic`, `debug-assertions` and `crt-static`
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
    # `-C target-feature` items in order (`+x` adds, `-x` drops; rustc ignores an item without
    # a sign), crt-static as rustc decides it.
    for feature in features:
        if feature[1:] == "crt-static":
            continue
        if feature[:1] == "+":
            pairs.add(("target_feature", feature[1:]))
        elif feature[:1] == "-":
            pairs.discard(("target_feature", feature[1:]))
    if cfg.triple in _CRT_STATIC_RESPECTED and "+crt-static" in features:
        pairs.add(_CRT_STATIC)
    elif cfg.triple in _CRT_STATIC_RESPECTED and "-crt-static" in features:
        pairs.discard(_CRT_STATIC)
    return TargetCfg(cfg.triple, frozenset(names), frozenset(pairs))
