"""What `--no-exec` read from registry manifests, kept between runs.

A package unpacked in `$CARGO_HOME/registry/src` never changes, yet parsing the TOML of a few
hundred published manifests is most of a --no-exec audit. The package data distilled from each
one (name, version, declarations, features, targets, edition) is kept in one JSON file under
the user's cache directory (`$XDG_CACHE_HOME/featcheck/`, default `~/.cache/featcheck/`), keyed
by the manifest's path and checked against its size and modification time. Only the cargo
home's manifests are kept, never the checkout's (`vendor/` included): nothing a checkout writes
is remembered. A cache that cannot be read or written is ignored.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

_VERSION = 1


def cache_file(environment: Mapping[str, str]) -> Path | None:
    """`$XDG_CACHE_HOME/featcheck/noexec-manifests.json`, or under `~/.cache`."""
    base = environment.get("XDG_CACHE_HOME", "")
    try:
        root = Path(base) if base else Path.home() / ".cache"
    except RuntimeError:
        return None
    return root / "featcheck" / "noexec-manifests.json"


def _stamp(path: Path) -> list[int] | None:
    try:
        stat = path.stat()
    except OSError:
        return None
    return [stat.st_size, stat.st_mtime_ns]


class ManifestCache:
    """Distilled registry manifests by path; `save()` writes what was added."""

    def __init__(self, file: Path | None) -> None:
        self.file = file
        self.entries: dict[str, Any] = {}
        self.changed = False
        if file is None:
            return
        with contextlib.suppress(OSError, ValueError):
            document = json.loads(file.read_text(encoding="utf-8"))
            if isinstance(document, dict) and document.get("version") == _VERSION:
                entries = document.get("manifests")
                self.entries = entries if isinstance(entries, dict) else {}

    def get(self, manifest: Path) -> dict[str, Any] | None:
        """The distilled data of `manifest`, if kept and the file has not changed since."""
        entry = self.entries.get(str(manifest))
        if not isinstance(entry, dict) or entry.get("stamp") != _stamp(manifest):
            return None
        data = entry.get("data")
        return data if isinstance(data, dict) else None

    def put(self, manifest: Path, data: dict[str, Any]) -> None:
        """Remember `data` for `manifest` as it is now."""
        stamp = _stamp(manifest)
        if self.file is not None and stamp is not None:
            self.entries[str(manifest)] = {"stamp": stamp, "data": data}
            self.changed = True

    def save(self) -> None:
        """Write the cache when something was added (atomically; failures are ignored)."""
        if self.file is None or not self.changed:
            return
        text = json.dumps({"version": _VERSION, "manifests": self.entries})
        with contextlib.suppress(OSError):
            self.file.parent.mkdir(parents=True, exist_ok=True)
            handle, temporary = tempfile.mkstemp(prefix=".noexec-", dir=self.file.parent)
            try:
                with os.fdopen(handle, "w", encoding="utf-8") as stream:
                    stream.write(text)
                os.replace(temporary, self.file)
            finally:
                with contextlib.suppress(OSError):
                    os.unlink(temporary)
