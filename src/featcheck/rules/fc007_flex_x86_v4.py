"""FC007 flex-x86-v4: AVX-512 kernels are available to Flex on x86_64."""

from __future__ import annotations

from featcheck.graph import Node
from featcheck.report import Severity
from featcheck.rules.base import BuildView, MissingFeatureRule, RuleDoc
from featcheck.rules.selection import flex_selection


class FlexX86V4(MissingFeatureRule):
    code = "FC007"
    name = "flex-x86-v4"
    severity = Severity.INFO
    enabled_by_default = False
    summary = "burn-flex on x86_64 could use `x86-v4` (AVX-512 kernels)"
    crates = ("burn-flex",)
    feature = "x86-v4"
    consequence = "gemm's AVX-512 (x86-64-v4) kernels are not compiled in"
    doc = RuleDoc(
        what=(
            "An opt-in hint (`--select FC007`), never a failure: when auditing an x86_64 "
            "target and Flex is selected without `x86-v4` (gemm's `x86-v4`)."
        ),
        why=(
            "gemm compiles AVX-512 micro-kernels only with its `x86-v4` feature and picks them "
            "at run time on CPUs that have AVX-512; without the feature such CPUs run the AVX2 "
            "kernels. featcheck has no measurement of the gain: try it with `featcheck probe`."
        ),
        example=(
            'burn = { version = "=0.22.1", default-features = false, '
            'features = ["std", "flex", "simd", "rayon"] }'
        ),
        fix="Add `x86-v4` to burn's features (burn 0.22 passes it through to burn-flex).",
        ignore="When your CPUs have no AVX-512; suppress FC007 in the configuration.",
    )

    def applies_to(self, target: str | None) -> bool:
        return target is not None and target.startswith("x86_64-")

    def in_use(self, view: BuildView, node: Node) -> str | None:
        return flex_selection(view, node)
