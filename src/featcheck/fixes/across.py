"""One candidate for a finding that several of a member's configurations share, where each
configuration selects the crate through a feature of its own.

A library's `enc = ["dep:encoding_rs"]` and `enc2 = ["dep:encoding_rs"]` each bring the crate: one
finding covers both builds, and its fix must clear both. A new line behind `enc` leaves `enc2`'s
build as it was, and a plain line gives the crate to builds with neither (lewm-rs's `tract-nnef`
and `tract-onnx`): so what a candidate asks of one selecting feature is asked of the other too.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import replace

from featcheck.fixes.direct import Candidate
from featcheck.report import Edit
from featcheck.workspace.model import MoreFeatureValues, Package

Elsewhere = tuple[frozenset[str], list[str]]
"""One other build of the finding: the member's features on in it, and those of them that select
the crate (`DirectDependencies.selecting_features`)."""


def across_builds(
    found: Iterable[Candidate], member: Package, position: int, elsewhere: list[Elsewhere]
) -> Iterator[Candidate]:
    """Each candidate asking through one feature of the member (`position` in the index), with
    the same values asked of a feature that selects the crate in each other build without it;
    none where some other build has no such feature."""
    for candidate in found:
        asked = [
            edit
            for edit in candidate.edits
            if edit.action == "add-feature-values" and edit.manifest == member.manifest_path
        ]
        if len(asked) != 1 or asked[0].declaration[-1] == "std":  # std's builds are on purpose
            continue
        edit, more = asked[0], dict[str, None]()
        for features, selecting in elsewhere:
            if edit.declaration[-1] in features:
                continue
            if not selecting:
                break
            more.setdefault(selecting[0])
        else:
            if more:
                values = edit.features
                edits = [Edit(edit.manifest, ("features", f), edit.action, values) for f in more]
                model = [MoreFeatureValues(position, f, values) for f in more]
                yield replace(
                    candidate,
                    edits=(*candidate.edits, *edits),
                    model=candidate.model | frozenset(model),
                )
