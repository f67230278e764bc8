"""FC009 matrixmultiply-without-threading: matrixmultiply built without `threading`."""

from __future__ import annotations

from featcheck.graph import Node
from featcheck.report import Severity
from featcheck.rules.base import BuildView, MissingFeatureRule, RuleDoc
from featcheck.rules.selection import used_outside


class MatrixmultiplyWithoutThreading(MissingFeatureRule):
    code = "FC009"
    name = "matrixmultiply-without-threading"
    severity = Severity.WARNING
    summary = "matrixmultiply (ndarray's matmul) is built without `threading`"
    crates = ("matrixmultiply",)
    feature = "threading"
    consequence = "ndarray's `dot` runs on one core"
    doc = RuleDoc(
        what=(
            "Flags matrixmultiply built without `threading` when your crates reach it other "
            "than through burn-ndarray (FC002 covers that path), typically through ndarray."
        ),
        why=(
            "ndarray's matrix products go to matrixmultiply, which threads only with its "
            "`threading` feature. ndarray's own `rayon` feature gives the `par_*` APIs, not a "
            "threaded matmul, so enabling it does not help."
        ),
        example='ndarray = { version = "0.16", features = ["rayon"] }',
        fix=(
            "ndarray 0.16 and later pass it through as `matrixmultiply-threading`; otherwise "
            "depend on matrixmultiply directly with the feature (cargo unifies it into "
            "ndarray's copy).\n\n"
            'ndarray = { version = "0.16", features = ["rayon", "matrixmultiply-threading"] }'
        ),
        ignore="For small matrices, where threads cost more than they give. Say why.",
    )

    def in_use(self, view: BuildView, node: Node) -> str | None:
        return used_outside(view, node, ("burn-ndarray",))
