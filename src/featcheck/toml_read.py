"""TOML that is only read, never edited or located: the fastest parser installed.

tomllib, or before Python 3.11 its original, tomli (a cold --no-exec audit parses hundreds of
registry manifests: 0.2 s, where tomlkit takes 1.8 s); tomlkit only where neither is installed.
A module of its own, so that what runs before cargo starts loads no TOML parser.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

_parser: tuple[Callable[[str], dict[str, Any]], type[Exception]]
if sys.version_info >= (3, 11):
    import tomllib

    _parser = (tomllib.loads, tomllib.TOMLDecodeError)
else:
    try:
        import tomli

        _parser = (tomli.loads, tomli.TOMLDecodeError)
    except ImportError:
        import tomlkit
        import tomlkit.exceptions

        _parser = (lambda t: tomlkit.parse(t).unwrap(), tomlkit.exceptions.TOMLKitError)


def toml_data(text: str) -> dict[str, Any]:
    loads, invalid = _parser
    try:
        return loads(text)
    except (invalid, RecursionError) as error:
        raise ValueError(str(error)) from None
