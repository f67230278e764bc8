"""The rules: specs (data), one detector, and the catalogue of a run.

A built-in rule is one TOML file in `builtin/` (see docs/rules.md, "Adding a rule"); a project
adds its own in the same form under `[[rule]]` in its configuration. A code is never reused.
"""

from __future__ import annotations

from featcheck.errors import FeatcheckError
from featcheck.rules.base import BuildView, Detection
from featcheck.rules.catalogue import Catalogue, builtin_rules
from featcheck.rules.detect import detect, skipped_for_target
from featcheck.rules.load import BUILTIN_CODE
from featcheck.rules.spec import Rule, RuleDoc


def __getattr__(name: str) -> tuple[Rule, ...]:
    # ALL_RULES, read on first use: the specs are data files.
    if name == "ALL_RULES":
        return builtin_rules()
    raise AttributeError(name)


def select_rules(select: tuple[str, ...] = (), ignore: tuple[str, ...] = ()) -> tuple[Rule, ...]:
    """The built-in rules to run: the defaults plus `select`ed ones, minus `ignore`d.

    Unknown codes raise ValueError naming them.
    """
    return Catalogue.builtin().select(select, ignore)


def rule_by_code(code: str) -> Rule | None:
    """The built-in rule with this code or name (case-insensitive), if any."""
    return Catalogue.builtin().find(code)


__all__ = [
    "ALL_RULES",
    "BuildView",
    "Catalogue",
    "Detection",
    "Rule",
    "RuleDoc",
    "builtin_rules",
    "detect",
    "rule_by_code",
    "select_rules",
    "skipped_for_target",
]


def check_builtin_codes(select: tuple[str, ...], ignore: tuple[str, ...]) -> None:
    """An unknown FC code fails before cargo runs; other names may be the project's own rules,
    known once its configuration is read."""
    fc = tuple(c for c in (*select, *ignore) if BUILTIN_CODE.fullmatch(c.strip().upper()))
    try:
        select_rules(fc)
    except ValueError as error:
        raise FeatcheckError(str(error)) from None
