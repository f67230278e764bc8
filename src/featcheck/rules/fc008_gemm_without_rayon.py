"""FC008 gemm-without-rayon: gemm used directly, built without `rayon`."""

from __future__ import annotations

from featcheck.graph import Node
from featcheck.report import Severity
from featcheck.rules.base import BuildView, MissingFeatureRule, RuleDoc
from featcheck.rules.selection import used_outside


class GemmWithoutRayon(MissingFeatureRule):
    code = "FC008"
    name = "gemm-without-rayon"
    severity = Severity.WARNING
    summary = "gemm is used without burn-flex and built without `rayon`"
    crates = ("gemm",)
    feature = "rayon"
    consequence = "`Parallelism::Rayon` runs on one thread"
    doc = RuleDoc(
        what=(
            "Flags gemm built without `rayon` when your crates reach it other than through "
            "burn-flex or faer (FC001 and FC010 cover those paths)."
        ),
        why=(
            "gemm defaults to f16, rayon and std; declared with `default-features = false` it "
            "loses rayon, and `Parallelism::Rayon(n)` then computes on the calling thread. This "
            "is the loss FC001 measures for burn-flex (21.4 ms against 3.50 ms for a 1024^2 f32 "
            "matmul on 12 cores)."
        ),
        example='gemm = { version = "0.19", default-features = false, features = ["std"] }',
        fix="Add `rayon` to gemm's features, or keep its defaults.",
        ignore="For single-threaded environments (wasm). Say why in a suppression.",
    )

    def in_use(self, view: BuildView, node: Node) -> str | None:
        # Through burn-flex or faer, FC001 and FC010 report it at the crate the user named.
        return used_outside(view, node, ("burn-flex", "faer"))
