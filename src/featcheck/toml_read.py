"""TOML that is only read, never edited or located: tomli, whose compiled wheels parse in a
third of tomllib's time (a cold --no-exec audit parses hundreds of registry manifests), where
tomlkit takes ten times tomllib's. A module of its own, so that what runs before cargo starts
loads no TOML parser.
"""

from __future__ import annotations

from typing import Any

import tomli


def toml_data(text: str) -> dict[str, Any]:
    try:
        return tomli.loads(text)
    except (tomli.TOMLDecodeError, RecursionError) as error:
        raise ValueError(str(error)) from None
