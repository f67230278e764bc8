"""The rule catalogue: every rule, in code order. A code is never reused.

Adding a rule: one file here (subclass `MissingFeatureRule` or `Rule`, fill in the doc), one
entry below, one fixture that triggers it; `featcheck rules` and docs/rules.md follow.
"""

from __future__ import annotations

from featcheck.rules.base import BuildView, Detection, MissingFeatureRule, Rule, RuleDoc
from featcheck.rules.fc001_flex_without_rayon import FlexWithoutRayon
from featcheck.rules.fc002_ndarray_without_threading import NdarrayWithoutThreading
from featcheck.rules.fc003_flex_without_simd import FlexWithoutSimd
from featcheck.rules.fc004_gpu_without_fusion import GpuWithoutFusion
from featcheck.rules.fc005_gpu_without_autotune import GpuWithoutAutotune
from featcheck.rules.fc006_flex_apple_amx import FlexAppleAmx
from featcheck.rules.fc007_flex_x86_v4 import FlexX86V4
from featcheck.rules.fc008_gemm_without_rayon import GemmWithoutRayon
from featcheck.rules.fc009_matrixmultiply_without_threading import (
    MatrixmultiplyWithoutThreading,
)
from featcheck.rules.fc010_faer_without_rayon import FaerWithoutRayon

ALL_RULES: tuple[Rule, ...] = (
    FlexWithoutRayon(),
    NdarrayWithoutThreading(),
    FlexWithoutSimd(),
    GpuWithoutFusion(),
    GpuWithoutAutotune(),
    FlexAppleAmx(),
    FlexX86V4(),
    GemmWithoutRayon(),
    MatrixmultiplyWithoutThreading(),
    FaerWithoutRayon(),
)


def select_rules(select: tuple[str, ...] = (), ignore: tuple[str, ...] = ()) -> tuple[Rule, ...]:
    """The rules to run: the defaults plus `select`ed ones (codes or names), minus `ignore`d.

    Unknown codes raise ValueError naming them.
    """
    unknown = [c for c in (*select, *ignore) if rule_by_code(c) is None]
    if unknown:
        raise ValueError(f"unknown rule {', '.join(unknown)} (see `featcheck rules`)")
    chosen = {r.code for r in ALL_RULES if r.enabled_by_default}
    chosen |= {r.code for c in select if (r := rule_by_code(c))}
    chosen -= {r.code for c in ignore if (r := rule_by_code(c))}
    return tuple(r for r in ALL_RULES if r.code in chosen)


def rule_by_code(code: str) -> Rule | None:
    """The rule with this code or name (case-insensitive), if any."""
    wanted = code.strip().lower()
    return next((r for r in ALL_RULES if wanted in (r.code.lower(), r.name)), None)


__all__ = [
    "ALL_RULES",
    "BuildView",
    "Detection",
    "MissingFeatureRule",
    "Rule",
    "RuleDoc",
    "rule_by_code",
    "select_rules",
]
