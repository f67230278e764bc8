"""A fix in words: the one place where featcheck words an edit.

The report's `Fix` and `Edit` are structure (which declaration, which action, which features);
every format words them here: the text report's fix line, JSON's `description`, the
suggestions GitHub annotations and SARIF carry, and the probe's. To change how a fix reads,
change the phrase below.
"""

from __future__ import annotations

from collections.abc import Iterable

from featcheck.report import Edit, Fix


def add_features(features: Iterable[str], key: str) -> str:
    """`add "rayon", "simd" to the features of burn`"""
    return f"add {_listed(features)} to the features of {key}"


def remove_defaults(key: str) -> str:
    """`remove `default-features = false` from burn`"""
    return f"remove `default-features = false` from {key}"


def edit_words(edit: Edit) -> str:
    key = str(edit.declaration[-1])
    if edit.action == "add-features":
        return add_features(edit.features, key)
    if edit.action == "remove-default-features":
        return remove_defaults(key)
    if edit.action == "add-feature-values":
        return f"add {_listed(edit.features)} to `{key}` in [features]"
    return f"add {key} = {edit.declared_value()} to [dependencies]"


def fix_words(fix: Fix) -> str:
    """The fix in words; with edits in several manifests, each names its file."""
    if len({edit.manifest for edit in fix.edits}) == 1:
        return " and ".join(edit_words(edit) for edit in fix.edits)
    return "; ".join(
        f"{edit_words(edit)} ({edit.file})" if edit.file else edit_words(edit) for edit in fix.edits
    )


def _listed(features: Iterable[str]) -> str:
    return ", ".join(f'"{f}"' for f in features)
