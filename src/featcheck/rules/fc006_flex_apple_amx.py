"""FC006 flex-apple-amx: Apple's matrix coprocessor is available to Flex on Apple silicon."""

from __future__ import annotations

from featcheck.graph import Node
from featcheck.report import Severity
from featcheck.rules.base import BuildView, MissingFeatureRule, RuleDoc
from featcheck.rules.selection import flex_selection


class FlexAppleAmx(MissingFeatureRule):
    code = "FC006"
    name = "flex-apple-amx"
    severity = Severity.INFO
    enabled_by_default = False
    summary = "burn-flex on aarch64-apple-darwin could use `apple-amx`"
    crates = ("burn-flex",)
    feature = "apple-amx"
    consequence = "matmul does not use the Apple AMX coprocessor (experimental)"
    doc = RuleDoc(
        what=(
            "An opt-in hint (`--select FC006`), never a failure: when auditing the "
            "`aarch64-apple-darwin` target and Flex is selected without `apple-amx` "
            "(gemm's `experimental-apple-amx`)."
        ),
        why=(
            "Published measurement (burn 0.22.1, M2 Max, 1024x1024 f32 matmul): 1.56 ms with "
            "simd, rayon and apple-amx against 3.50 ms with simd and rayon; 1.4-1.6 ms with 8 "
            "threads and already 3.5 ms on one thread. The feature is marked experimental and "
            "is not a default."
        ),
        example=(
            'burn = { version = "=0.22.1", default-features = false, '
            'features = ["std", "flex", "simd", "rayon"] }'
        ),
        fix="Add `apple-amx` to burn's features for Apple silicon builds (burn 0.22 passes it).",
        ignore="If you avoid experimental features; suppress FC006 in the configuration.",
    )

    def applies_to(self, target: str | None) -> bool:
        return target == "aarch64-apple-darwin"

    def in_use(self, view: BuildView, node: Node) -> str | None:
        return flex_selection(view, node)
