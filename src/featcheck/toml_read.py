"""TOML that is only read, never edited or located: tomli, whose compiled wheels parse in a
third of tomllib's time (a cold --no-exec audit parses hundreds of registry manifests), where
tomlkit takes ten times tomllib's. A module of its own, so that what runs before cargo starts
loads no TOML parser.
"""

from __future__ import annotations

import sys
from typing import Any

import tomli

if sys.version_info >= (3, 11):
    import tomllib
else:  # tomli is pure Python there, as interruptible as tomllib
    import tomli as tomllib

COMPILED_AT_MOST = 1 << 20
"""The longest text tomli's compiled parser is given: compiled code runs Python's signal
handlers (the audit's alarm at `--timeout`, deadline.py; Ctrl-C) only once it returns, 0.1 s
after a MiB; a larger file (a hostile lockfile) goes to tomllib, which they stop at once."""


def toml_data(text: str) -> dict[str, Any]:
    loads = tomli.loads if len(text) <= COMPILED_AT_MOST else tomllib.loads
    try:
        return loads(text)
    except (tomli.TOMLDecodeError, tomllib.TOMLDecodeError, RecursionError) as error:
        raise ValueError(str(error)) from None
