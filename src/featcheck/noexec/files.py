"""Reading files for `--no-exec`: only inside the checkout or the cargo registry, never a traceback.

Everything read here is the checkout's (or a published crate's) text. A path is read only when
it lies, symlinks resolved, inside one of the allowed directories, so a manifest cannot make
featcheck quote another project's files; every OS error becomes a one-line FeatcheckError; and
names that cargo would refuse are refused before they can reach a terminal or a report.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, TypeGuard

from featcheck.boundary import read_checkout_file
from featcheck.cargo.failures import CONTROL, printable
from featcheck.errors import FeatcheckError
from featcheck.fileio import MAX_MANIFEST_BYTES, decode_text
from featcheck.manifest.document import parse_document
from featcheck.toml_read import toml_data

_PACKAGE_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_-]*")


def valid_package_name(name: object) -> TypeGuard[str]:
    """cargo's rule for package names (ASCII letters, digits, `-`, `_`; not starting with `-`)."""
    return isinstance(name, str) and _PACKAGE_NAME.fullmatch(name) is not None


def has_control(text: str) -> bool:
    """Whether `text` holds control characters (cargo refuses them in names and features)."""
    return CONTROL.search(text) is not None


class ReadScope:
    """The directories `--no-exec` may read from (symlinks resolved)."""

    def __init__(self, directories: Iterable[Path]) -> None:
        self._directories = tuple(Path(os.path.realpath(d)) for d in directories)

    def contains(self, path: Path) -> bool:
        """Whether `path`, symlinks resolved, lies inside an allowed directory."""
        real = Path(os.path.realpath(path))
        return any(real == d or d in real.parents for d in self._directories)


def is_manifest(path: Path, *, what: str) -> bool:
    """Whether `path` is there as a regular file; a path that cannot even be looked at (too
    long, a directory without permission, a loop of links) is a FeatcheckError."""
    try:
        mode = path.stat().st_mode
    except (FileNotFoundError, NotADirectoryError):
        return False
    except OSError as error:
        raise FeatcheckError(
            f"failed to load {what}: {error.strerror or error}", path=printable(path)
        ) from None
    return stat.S_ISREG(mode)


def load_toml(
    path: Path, checkout: Path | None, what: str = "Cargo.toml", limit: int = MAX_MANIFEST_BYTES
) -> dict[str, Any]:
    """A TOML file's data, read as every manifest is (a regular file within `limit`, BOM
    accepted, never through a link out of `checkout`: boundary.py); featcheck's one-line
    error, with line and column, when it cannot be."""
    raw = read_checkout_file(path, what, limit, checkout)
    try:
        return toml_data(decode_text(raw, path))
    except ValueError:
        return parse_document(path, raw).data  # the one-line error with its position


def table(value: Any) -> Mapping[str, Any]:
    """`value` when it is a TOML table, else an empty one (cargo reports wrong types; the
    audit reports them through `shape_error`)."""
    return value if isinstance(value, Mapping) else {}


def shape_error(path: Path, error: Exception) -> FeatcheckError:
    """A manifest whose values have the wrong types, as one line."""
    return FeatcheckError(f"unexpected manifest content ({printable(error)})", path=path)
