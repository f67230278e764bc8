"""CPU backends built without their threading feature: matmul on one core.

Both rules look only at nodes compiled for the target, and only at backends the build actually
selects: burn 0.22 always links burn-flex, even into GPU-only or backend-agnostic crates.
"""

from __future__ import annotations

from packaging.version import InvalidVersion, Version

from featcheck.findings import Severity
from featcheck.graph import Node
from featcheck.rules.base import BuildView, Detection, Rule

# Packages whose `flex` feature selects the Flex backend (burn >= 0.21).
_FLEX_SELECTORS = ("burn", "burn-core", "burn-tensor", "burn-dispatch")
_UNKNOWN_SELECTION = (
    "the saved tree shows no dependents of this crate, so featcheck cannot tell whether it is "
    "the selected backend; save the full tree (without --depth, with a --prefix) to know"
)


def flex_selection(view: BuildView, node: Node) -> str | None:
    """Why Flex counts as selected for this burn-flex node, or None if it is not."""
    if not view.structured:
        return "burn-flex is in the build"
    ancestors = view.graph.ancestors(node)
    for ancestor in sorted(ancestors):
        if ancestor.name in _FLEX_SELECTORS and "flex" in ancestor.features:
            return f"the `flex` feature of {ancestor.name} {ancestor.version} selects Flex"
    for ancestor in sorted(ancestors):
        if ancestor.package.is_local and node in view.graph.dependencies(ancestor):
            return f"burn-flex is a direct dependency of {ancestor.name}"
    return None


class FlexWithoutRayon(Rule):
    code = "FC001"
    name = "flex-without-rayon"
    severity = Severity.ERROR
    summary = "burn-flex is the selected CPU backend but is built without `rayon`"
    why = (
        "burn-flex hands matmul to gemm with Parallelism::Rayon only when it is compiled with "
        "`rayon` (and only above 192^3 multiply-adds); without it every matmul runs on one core. "
        "Measured with burn 0.22.1 on a 12-core M2 Max (release, 20 runs, min of two rounds): "
        "a 1024x1024 f32 matmul took 21.4 ms without rayon and 3.50 ms with it, 6.1x slower; "
        "PyTorch took 0.80 ms (27x)."
    )

    def detect(self, view: BuildView) -> list[Detection]:
        found: list[Detection] = []
        for node in sorted(view.target_nodes()):
            if node.name != "burn-flex" or "rayon" in node.features:
                continue
            evidence = flex_selection(view, node)
            if evidence is None:
                continue  # linked but not selected: a GPU-only or backend-agnostic build
            notes = () if view.structured else (_UNKNOWN_SELECTION,)
            found.append(
                Detection(
                    node,
                    "rayon",
                    f"burn-flex {node.version} is built without `rayon`: "
                    "every matmul runs on one core",
                    evidence,
                    notes,
                )
            )
        return found


def ndarray_threading_feature(version: str) -> str:
    """burn-ndarray threads with `multi-threads` since 0.19; before, `std` brought threading."""
    try:
        parsed = Version(version)
    except InvalidVersion:
        return "multi-threads"
    return "multi-threads" if parsed >= Version("0.19.0.dev0") else "std"


class NdarrayWithoutThreading(Rule):
    code = "FC002"
    name = "ndarray-without-threading"
    severity = Severity.ERROR
    summary = (
        "burn-ndarray is built without its threading feature (`multi-threads`; `std` before 0.19)"
    )
    why = (
        "burn-ndarray multiplies through matrixmultiply, which threads only with its "
        "`threading` feature; since burn 0.19 burn-ndarray switches that (with ndarray/rayon) "
        "on only through `multi-threads`, before 0.19 through `std`. Without it every matmul "
        "of the NdArray backend runs on one core."
    )

    def detect(self, view: BuildView) -> list[Detection]:
        found: list[Detection] = []
        for node in sorted(view.target_nodes()):
            if node.name != "burn-ndarray":
                continue
            feature = ndarray_threading_feature(node.version)
            if feature in node.features:
                continue
            # burn-ndarray is optional everywhere in burn: being built means being selected.
            found.append(
                Detection(
                    node,
                    feature,
                    f"burn-ndarray {node.version} is built without `{feature}`: "
                    "every matmul runs on one core",
                    "burn-ndarray is in the build",
                )
            )
        return found
