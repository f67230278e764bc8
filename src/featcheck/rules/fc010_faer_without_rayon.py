"""FC010 faer-without-rayon: faer built without `rayon`."""

from __future__ import annotations

from featcheck.graph import Node
from featcheck.report import Severity
from featcheck.rules.base import BuildView, MissingFeatureRule, RuleDoc
from featcheck.rules.selection import used_outside


class FaerWithoutRayon(MissingFeatureRule):
    code = "FC010"
    name = "faer-without-rayon"
    severity = Severity.WARNING
    summary = "faer is built without `rayon`"
    crates = ("faer",)
    feature = "rayon"
    consequence = "`Par::rayon` runs on one thread"
    doc = RuleDoc(
        what="Flags faer built without `rayon` when your crates use it.",
        why=(
            "faer's parallel algorithms (matmul, decompositions) run on rayon only when the "
            "crate is compiled with `rayon`, one of its defaults; with `default-features = "
            "false` they run on the calling thread."
        ),
        example='faer = { version = "0.22", default-features = false, features = ["std"] }',
        fix="Add `rayon` to faer's features, or keep its defaults.",
        ignore="For single-threaded environments (wasm). Say why in a suppression.",
    )

    def in_use(self, view: BuildView, node: Node) -> str | None:
        return used_outside(view, node, ())
