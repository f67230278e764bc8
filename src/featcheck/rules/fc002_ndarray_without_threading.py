"""FC002 ndarray-without-threading: burn's NdArray backend built without threading."""

from __future__ import annotations

from packaging.version import InvalidVersion, Version

from featcheck.graph import Node
from featcheck.report import Severity
from featcheck.rules.base import BuildView, MissingFeatureRule, RuleDoc
from featcheck.rules.selection import present


def ndarray_threading_feature(version: str) -> str:
    """burn-ndarray threads with `multi-threads` since 0.19; before, `std` brought threading."""
    try:
        parsed = Version(version)
    except InvalidVersion:
        return "multi-threads"
    return "multi-threads" if parsed >= Version("0.19.0.dev0") else "std"


class NdarrayWithoutThreading(MissingFeatureRule):
    code = "FC002"
    name = "ndarray-without-threading"
    severity = Severity.ERROR
    summary = "burn-ndarray is built without its threading feature (`multi-threads`; `std` < 0.19)"
    crates = ("burn-ndarray",)
    feature = "multi-threads"
    consequence = "every matmul runs on one core"
    doc = RuleDoc(
        what=(
            "Flags a build that uses burn's NdArray backend (burn-ndarray is optional "
            "everywhere in burn, so being built means being selected) without its threading "
            "feature: `multi-threads` since burn 0.19, `std` before 0.19."
        ),
        why=(
            "burn-ndarray multiplies through matrixmultiply, which threads only with its "
            "`threading` feature; since burn 0.19 burn-ndarray switches that on (with "
            "ndarray/rayon) only through `multi-threads`, before 0.19 through `std`. Without it "
            "every matmul of the NdArray backend runs on one core, the same loss FC001 measures "
            "for Flex."
        ),
        example=(
            'burn = { version = "=0.20.1", default-features = false, '
            'features = ["std", "ndarray"] }'
        ),
        fix=(
            "burn has no `multi-threads` passthrough: drop `default-features = false`, or "
            "depend on burn-ndarray directly with the feature.\n\n"
            'burn-ndarray = { version = "=0.20.1", default-features = false, '
            'features = ["multi-threads"] }'
        ),
        ignore="For no_std or wasm builds, where threads are not available. Say why.",
    )

    def missing_feature(self, node: Node) -> str:
        return ndarray_threading_feature(node.version)

    def in_use(self, view: BuildView, node: Node) -> str | None:
        return present(view, node)
