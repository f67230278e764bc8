"""featcheck's own cache files: JSON written whole, read back only in the format written."""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from featcheck.fileio import create_hidden_file


def read_cache(file: Path, version: int, key: str) -> dict[str, Any]:
    """The entries under `key` of a cache file featcheck wrote in format `version`; none when
    it is missing, unreadable or of another version."""
    with contextlib.suppress(OSError, ValueError):
        document = json.loads(file.read_bytes())
        if isinstance(document, dict) and document.get("version") == version:
            entries = document.get(key)
            if isinstance(entries, dict):
                return entries
    return {}


def write_cache(file: Path, version: int, key: str, entries: Mapping[str, Any]) -> None:
    """Replace a cache file with `entries` under `key` (see `replace_cache_file`)."""
    replace_cache_file(file, json.dumps({"version": version, key: entries}))


def replace_cache_file(file: Path, text: str) -> bool:
    """Replace a cache file with `text`, atomically but without syncing (a cache lost in a
    crash is only worked out again): written beside it as `.STEM-…` first. False, and nothing
    replaced, where it fails."""
    try:
        file.parent.mkdir(parents=True, exist_ok=True)
        handle, temporary = create_hidden_file(file.parent, f".{file.stem}-")
    except OSError:
        return False
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as stream:
            stream.write(text)
        os.replace(temporary, file)
        return True
    except OSError:
        return False
    finally:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
