"""FC004 gpu-without-fusion: a burn GPU backend built without `fusion`."""

from __future__ import annotations

from featcheck.graph import Node
from featcheck.report import Severity
from featcheck.rules.base import BuildView, MissingFeatureRule, RuleDoc
from featcheck.rules.selection import present

GPU_BACKENDS = ("burn-wgpu", "burn-cuda", "burn-rocm", "burn-cpu")


class GpuWithoutFusion(MissingFeatureRule):
    code = "FC004"
    name = "gpu-without-fusion"
    severity = Severity.WARNING
    summary = "a burn CubeCL backend (wgpu, cuda, rocm, cpu) is built without `fusion`"
    crates = GPU_BACKENDS
    feature = "fusion"
    consequence = "its tensor type does not wrap Fusion, so no kernel fusion"
    doc = RuleDoc(
        what=(
            "Flags burn-wgpu, burn-cuda, burn-rocm or burn-cpu built without `fusion`. These "
            "crates are optional in burn: being built means being selected."
        ),
        why=(
            "These backends default to `fusion` and `autotune`; with burn's defaults off and "
            "only `wgpu` named, both are gone. The `Wgpu`/`Cuda` types wrap Fusion only when the "
            "backend crate's own `fusion` is on, so element-wise chains launch one kernel per "
            "operation instead of one fused kernel."
        ),
        example=(
            'burn = { version = "=0.22.1", default-features = false, features = ["std", "wgpu"] }'
        ),
        fix="Add `fusion` to burn's features (burn passes it through), or keep burn's defaults.",
        ignore="When debugging kernels one operation at a time. Say why in a suppression.",
    )

    def in_use(self, view: BuildView, node: Node) -> str | None:
        return present(view, node)
