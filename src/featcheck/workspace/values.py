"""Feature values: the strings of a `[features]` table or a dependency's `features` list.

cargo reads each string into one of three shapes (`FeatureValue::new` in cargo): a plain feature
of the same package (`std`), an optional dependency (`dep:rayon`), or a feature of a dependency
(`gemm/rayon`, or the weak `gemm?/rayon` that never turns the dependency on by itself).
"""

from __future__ import annotations

from functools import cache
from typing import NamedTuple

FEATURE = 0
"""`name`: another feature of the same package."""
DEP = 1
"""`dep:name`: turn on the optional dependency declared as `name`."""
DEP_FEATURE = 2
"""`name/feature` or `name?/feature`: a feature of the dependency declared as `name`."""


class FeatureValue(NamedTuple):
    """One parsed feature string; tuples keep the resolver's hot loop cheap."""

    kind: int
    name: str
    """The feature name (FEATURE) or the dependency's name in the manifest (DEP, DEP_FEATURE)."""
    dep_feature: str = ""
    """The dependency's feature (DEP_FEATURE only)."""
    weak: bool = False
    """True for `name?/feature` (DEP_FEATURE only)."""


@cache
def parse_feature_value(text: str) -> FeatureValue:
    """Read one feature string exactly as cargo's `FeatureValue::new` does."""
    slash = text.find("/")
    if slash >= 0:
        dep_name, dep_feature = text[:slash], text[slash + 1 :]
        if dep_name.endswith("?"):
            return FeatureValue(DEP_FEATURE, dep_name[:-1], dep_feature, True)
        return FeatureValue(DEP_FEATURE, dep_name, dep_feature, False)
    if text.startswith("dep:"):
        return FeatureValue(DEP, text[len("dep:") :])
    return FeatureValue(FEATURE, text)


def parse_feature_values(texts: list[str] | tuple[str, ...]) -> tuple[FeatureValue, ...]:
    """Read a list of feature strings (`map` over the cached reader: an audit reads the
    `[features]` of every package it visits)."""
    return tuple(map(parse_feature_value, texts))
