"""FC001 flex-without-rayon: burn's Flex CPU backend built without `rayon`."""

from __future__ import annotations

from featcheck.graph import Node
from featcheck.report import Severity
from featcheck.rules.base import BuildView, MissingFeatureRule, RuleDoc
from featcheck.rules.selection import flex_selection


class FlexWithoutRayon(MissingFeatureRule):
    code = "FC001"
    name = "flex-without-rayon"
    severity = Severity.ERROR
    summary = "burn-flex is the selected CPU backend but is built without `rayon`"
    crates = ("burn-flex",)
    feature = "rayon"
    consequence = "every matmul runs on one core"
    companions = ("simd",)
    doc = RuleDoc(
        what=(
            "Flags a build in which burn's Flex CPU backend is selected (the `flex` feature "
            "resolved on burn, burn-core, burn-tensor or burn-dispatch, or burn-flex a direct "
            "dependency of a crate you own) and burn-flex is compiled without its `rayon` "
            "feature. burn-flex can be in a build without being its backend (burn's 0.22 "
            "development branch links it into every build; burn-train pulls it in): a build "
            "that does not select Flex (a GPU-only application, a backend-agnostic library) is "
            "not flagged."
        ),
        why=(
            "burn-flex hands matmul to gemm with `Parallelism::Rayon` only when it is compiled "
            "with `rayon` (and only above 192^3 multiply-adds); without it every matmul runs on "
            "one core. Measured with burn 0.22.1 on a 12-core M2 Max (release builds, warm-up "
            "then 20 timed runs, minimum of two rounds): a 1024x1024 f32 matmul took 21.4 ms "
            "without rayon and 3.50 ms with it, 6.1x slower; PyTorch took 0.80 ms (27x). The "
            "MLP 784-512-10 train step (batch 256) took 4.41 ms against 1.62 ms. Pinning the "
            "fast build to RAYON_NUM_THREADS=1 brings it back to 21.6 ms: rayon is the "
            "difference."
        ),
        example=(
            'burn = { version = "=0.22.1", default-features = false, '
            'features = ["std", "flex", "autodiff", "optim"] }'
        ),
        fix=(
            "Turn `rayon` on. burn 0.22 passes it through: add it to burn's features. burn "
            "0.21.0 has no `rayon` feature: drop `default-features = false`, or depend on "
            'burn-flex directly with `features = ["rayon"]`. featcheck computes which applies '
            "from the feature tables.\n\n"
            'burn = { version = "=0.22.1", default-features = false, '
            'features = ["std", "flex", "autodiff", "optim", "rayon"] }'
        ),
        ignore=(
            "For wasm, no_std or embedded targets, or where you measured rayon to be slower for "
            "your (small) matrices. Say why in a suppression."
        ),
    )

    def in_use(self, view: BuildView, node: Node) -> str | None:
        return flex_selection(view, node)
