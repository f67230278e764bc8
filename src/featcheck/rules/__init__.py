"""The rule catalogue: every rule, in code order. A code is never reused."""

from __future__ import annotations

from featcheck.rules.base import BuildView, Detection, Rule
from featcheck.rules.threading import FlexWithoutRayon, NdarrayWithoutThreading

ALL_RULES: tuple[Rule, ...] = (FlexWithoutRayon(), NdarrayWithoutThreading())

__all__ = ["ALL_RULES", "BuildView", "Detection", "Rule"]
