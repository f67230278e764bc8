"""FC003 flex-without-simd: burn's Flex backend built without `simd`."""

from __future__ import annotations

from featcheck.graph import Node
from featcheck.report import Severity
from featcheck.rules.base import BuildView, MissingFeatureRule, RuleDoc
from featcheck.rules.selection import flex_selection


class FlexWithoutSimd(MissingFeatureRule):
    code = "FC003"
    name = "flex-without-simd"
    severity = Severity.WARNING
    summary = "burn-flex is the selected CPU backend but is built without `simd`"
    crates = ("burn-flex",)
    feature = "simd"
    consequence = "Flex's own kernels (reductions, activations, comparisons) are not vectorised"
    doc = RuleDoc(
        what=(
            "Flags a build that selects Flex (as FC001 decides) with burn-flex lacking `simd` "
            "but having `rayon`. Without `rayon` FC001 fires instead, and its fix adds `simd` "
            "too where burn passes it through."
        ),
        why=(
            "`simd` vectorises Flex's own kernels (reductions, masks, activations, comparisons) "
            "through macerator. It does not change single-threaded f32 matmul time, which goes "
            "to gemm either way (published measurement, burn 0.22.1, M2 Max). Caveat: `simd` "
            "also changes f32 summation results (bit patterns differ between builds), so when "
            "comparing numerics say which build produced them."
        ),
        example=(
            'burn = { version = "=0.22.1", default-features = false, '
            'features = ["std", "flex", "rayon"] }'
        ),
        fix="Add `simd` to burn's features (burn 0.22 passes it through to burn-flex).",
        ignore=(
            "When bit-for-bit reproducibility with a build without simd matters more than "
            "speed. Say why in a suppression."
        ),
    )

    def in_use(self, view: BuildView, node: Node) -> str | None:
        if "rayon" not in node.features:
            return None  # FC001's finding and fix cover this node
        return flex_selection(view, node)
