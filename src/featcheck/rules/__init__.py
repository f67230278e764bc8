"""The rules: specs (data), one detector, and the catalogue of a run.

A built-in rule is one TOML file in `builtin/` (docs/writing-rules.md says how to add one); a
project adds its own in the same form under `[[rule]]` in its configuration. A code is never
reused.
"""

from __future__ import annotations

from featcheck.errors import FeatcheckError
from featcheck.rules.catalogue import Catalogue, builtin_rules
from featcheck.rules.detect import BuildView, Detection, detect, skipped_for_target
from featcheck.rules.load import BUILTIN_CODE
from featcheck.rules.spec import Rule, RuleDoc

__all__ = [
    "BuildView",
    "Catalogue",
    "Detection",
    "Rule",
    "RuleDoc",
    "builtin_rules",
    "detect",
    "skipped_for_target",
]


def check_builtin_codes(select: tuple[str, ...], ignore: tuple[str, ...]) -> None:
    """An unknown FC code fails before cargo runs; other names may be the project's own rules,
    known once its configuration is read."""
    fc = tuple(c for c in (*select, *ignore) if BUILTIN_CODE.fullmatch(c.strip().upper()))
    try:
        Catalogue.builtin().select(fc)
    except ValueError as error:
        raise FeatcheckError(str(error)) from None
