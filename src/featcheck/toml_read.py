"""TOML that is only read, never edited or located: tomli, whose compiled wheels parse in a
third of tomllib's time (a cold --no-exec audit parses hundreds of registry manifests), where
tomlkit takes ten times tomllib's. A module of its own, so that what runs before cargo starts
loads no TOML parser.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

import tomli

COMPILED_AT_MOST = 1 << 20
"""The longest text tomli's compiled parser is given: compiled code runs Python's signal
handlers (the audit's alarm at `--timeout`, deadline.py; Ctrl-C) only once it returns, 0.1 s
after a MiB; a larger file (a hostile lockfile) goes to tomllib, which they stop at once.
(Python 3.10 has no tomllib, and tomli is pure Python there: as interruptible.)"""


def toml_data(text: str) -> dict[str, Any]:
    loads: Callable[[str], dict[str, Any]] = tomli.loads
    invalid: type[Exception] = tomli.TOMLDecodeError
    if len(text) > COMPILED_AT_MOST and sys.version_info >= (3, 11):
        import tomllib  # only for such a file: 3 ms of every run's start otherwise

        loads, invalid = tomllib.loads, tomllib.TOMLDecodeError
    try:
        return loads(text)
    except (invalid, RecursionError) as error:
        raise ValueError(str(error)) from None
