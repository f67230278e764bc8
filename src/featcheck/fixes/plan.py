"""Candidate fixes for a finding, smallest first, computed from the real feature tables.

1. add the feature that passes the missing one through (e.g. `rayon` on burn 0.22), with its
   companions (FC001 also adds `simd` where it is missing and passed through);
2. drop `default-features = false` when the defaults bring the feature (burn 0.20, 0.21);
3. depend on the backend crate directly with the feature.
"""

from __future__ import annotations

from collections.abc import Callable

from featcheck.cargo.metadata import WorkspaceMetadata
from featcheck.graph import Node
from featcheck.locate import Cut
from featcheck.report import Edit, Fix
from featcheck.suggest import FeatureSearch


def candidate_edits(
    metadata: WorkspaceMetadata,
    search: FeatureSearch,
    node: Node,
    feature: str,
    companions: tuple[str, ...],
    cut: Cut,
) -> list[tuple[Edit, ...]]:
    """Every candidate, smallest first; each is a tuple of edits applied together."""
    declared = metadata.find(cut.dependency.name, cut.dependency.version)
    goal = metadata.find(node.name, node.version)
    if declared is None or goal is None:
        return []
    manifest = cut.site.manifest.path
    already = cut.dependency.features
    candidates: list[tuple[Edit, ...]] = []
    extra = tuple(
        named[0]
        for companion in companions
        if companion not in node.features
        and (named := _named(search.enabling_features(declared, goal, companion), already))
    )
    if declared.id == goal.id:
        wanted = (feature, *(c for c in companions if c not in node.features))
        candidates.append((Edit(manifest, cut.site.path, "add-features", wanted),))
        if cut.disables_defaults:
            candidates.append((Edit(manifest, cut.site.path, "remove-default-features"),))
        return candidates
    options = search.enabling_features(declared, goal, feature)
    named = _named(options, already)
    if named:
        wanted = tuple(dict.fromkeys((named[0], *extra)))
        candidates.append((Edit(manifest, cut.site.path, "add-features", wanted),))
    if cut.disables_defaults and "default" in options:
        candidates.append((Edit(manifest, cut.site.path, "remove-default-features"),))
    candidates.append(
        (
            Edit(
                cut.owner.manifest_path,
                ("dependencies", node.name),
                "add-dependency",
                (feature,),
                f"={node.version}",
            ),
        )
    )
    return candidates


def _named(options: list[str], already: frozenset[str]) -> list[str]:
    return [f for f in options if f != "default" and f not in already]


def choose_fix(
    candidates: list[tuple[Edit, ...]],
    confirm: Callable[[tuple[Edit, ...]], tuple[bool, str]] | None,
) -> tuple[Fix | None, tuple[Fix, ...]]:
    """The first candidate cargo confirms becomes the safe fix; the others are alternatives.

    Without `confirm` (confirmation switched off) nothing is called safe.
    """
    safe: Fix | None = None
    alternatives: list[Fix] = []
    for edits in candidates:
        if safe is None and confirm is not None:
            confirmed, note = confirm(edits)
            if confirmed:
                safe = Fix(edits, confirmed=True, safe=True)
                continue
            alternatives.append(Fix(edits, note=note))
        else:
            alternatives.append(Fix(edits))
    return safe, tuple(alternatives)
