"""FC005 gpu-without-autotune: a burn GPU backend built without `autotune`."""

from __future__ import annotations

from featcheck.graph import Node
from featcheck.report import Severity
from featcheck.rules.base import BuildView, MissingFeatureRule, RuleDoc
from featcheck.rules.fc004_gpu_without_fusion import GPU_BACKENDS
from featcheck.rules.selection import present


class GpuWithoutAutotune(MissingFeatureRule):
    code = "FC005"
    name = "gpu-without-autotune"
    severity = Severity.WARNING
    summary = "a burn CubeCL backend (wgpu, cuda, rocm, cpu) is built without `autotune`"
    crates = GPU_BACKENDS
    feature = "autotune"
    consequence = "kernels are not tuned for this device"
    doc = RuleDoc(
        what="Flags burn-wgpu, burn-cuda, burn-rocm or burn-cpu built without `autotune`.",
        why=(
            "These backends default to `autotune`, which benchmarks the candidate kernels of "
            "matmul, convolution and reductions on the actual device and keeps the fastest; "
            "without it a fixed default kernel runs everywhere. With burn's defaults off and "
            "only a backend named, autotune is gone."
        ),
        example=(
            'burn = { version = "=0.22.1", default-features = false, features = ["std", "wgpu"] }'
        ),
        fix="Add `autotune` to burn's features (burn passes it through), or keep its defaults.",
        ignore=(
            "When start-up latency matters more than steady-state speed (autotune benchmarks on "
            "first use), or for deterministic kernel choice. Say why in a suppression."
        ),
    )

    def in_use(self, view: BuildView, node: Node) -> str | None:
        return present(view, node)
