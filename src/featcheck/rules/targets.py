"""What a target provides, as far as rules care: the standard library and threads.

Read from the target's cfg values (`rustc --print cfg --target T`) where featcheck has them,
else from the triple. A rule about rayon or threading means nothing where there are no threads:
on `wasm32-*` without the `atomics` target feature (rayon then runs everything on the calling
thread, or needs a thread-pool shim and a nightly build) and on targets without `std`
(`thumbv7em-none-eabihf`, `*-none-*`), where rayon does not build at all.
"""

from __future__ import annotations

from fnmatch import fnmatchcase

from featcheck.rules.spec import TargetScope
from featcheck.semantics.cfg import TargetCfg

CAPABILITIES = ("std", "threads")
"""What `target-needs` may name."""


def _has_std(triple: str, cfg: TargetCfg | None) -> bool:
    if cfg is not None and ("target_os", "none") in cfg.pairs:
        return False
    return "-none" not in triple


def _has_threads(triple: str, cfg: TargetCfg | None) -> bool:
    if not _has_std(triple, cfg):
        return False
    wasm = triple.startswith(("wasm32", "wasm64"))
    if cfg is not None:
        wasm = wasm or ("target_family", "wasm") in cfg.pairs
    if not wasm:
        return True
    # wasm threads need shared memory: the `atomics` target feature (`wasm32-wasip1-threads`
    # has it built in; stable rustc does not print that unstable feature, hence the triple).
    atomics = cfg is not None and ("target_feature", "atomics") in cfg.pairs
    return atomics or "-threads" in triple


def lacks(capability: str, triple: str, cfg: TargetCfg | None) -> str | None:
    """Why the target lacks `capability` (one of CAPABILITIES), or None if it has it."""
    if capability == "std" and not _has_std(triple, cfg):
        return "the target has no `std`"
    if capability == "threads" and not _has_threads(triple, cfg):
        if not _has_std(triple, cfg):
            return "the target has no `std`, so no threads"
        return "the target has no threads (wasm without the `atomics` target feature)"
    return None


def not_applicable(scope: TargetScope, triple: str | None, cfg: TargetCfg | None) -> str | None:
    """Why a rule with this scope does not apply to `triple`, or None when it does.

    An unknown target (saved tree text) gets every rule that is not about particular triples:
    featcheck cannot tell what it lacks.
    """
    if triple is None:
        return "the target is unknown" if scope.triples else None
    if scope.triples and not any(fnmatchcase(triple, p) for p in scope.triples):
        return "the rule applies only to " + ", ".join(scope.triples)
    for capability in scope.needs:
        reason = lacks(capability, triple, cfg)
        if reason is not None:
            return reason
    return None
