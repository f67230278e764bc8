"""The command lines featcheck gives cargo and rustc, and what cargo's messages say of places.

Every value on a command line (package, target, manifest path) passes the gate in argv_gate.py,
whoever the caller is, and goes as one `--flag=value` argument.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from pathlib import Path

from featcheck.cargo.argv_gate import (
    ABSOLUTE_PATH,
    FEATURE,
    TARGET,
    Argument,
    GateError,
    Grammar,
    option,
    target_triple,
    word,
)
from featcheck.errors import FeatcheckError
from featcheck.featureset import FeatureSelection
from featcheck.fileio import special_manifest

# `{p} [{f}]` gives "name vX (source) [features]" per line; `--prefix depth` makes the nesting
# unambiguous and `--charset ascii` keeps the text independent of the terminal.
TREE_FORMAT = "{p} [{f}]"


def gated(check: Callable[[str], str], value: str, what: str) -> str:
    """`check(value)`, its GateError as the one-line error of an audit."""
    try:
        return check(value)
    except GateError as error:
        raise FeatcheckError(f"{what}: {error}") from None


def checked_option(flag: str, value: str, grammar: Grammar) -> Argument:
    """`--flag=value` for a value that passes `grammar`; else the audit's one-line error."""
    try:
        return option(flag, value, grammar)
    except GateError as error:
        raise FeatcheckError(f"{flag.lstrip('-')}: {error}") from None


def constant(flag: str, value: str) -> Argument:
    """`--flag=value` for a value that is featcheck's own constant, never checkout text."""
    return Argument(f"{flag}={value}")


def feature_arguments(selection: FeatureSelection) -> list[Argument]:
    """cargo's feature flags: one `--features=NAME` per feature (each checked by the gate;
    `featureset` already holds them to cargo's grammar), then the switches."""
    found = [checked_option("--features", name, FEATURE) for name in selection.features]
    if selection.no_default_features:
        found.append(word("--no-default-features"))
    if selection.all_features:
        found.append(word("--all-features"))
    return found


def manifest_argument(manifest_path: Path) -> Argument:
    # Absolute: cargo runs in another directory.
    return checked_option("--manifest-path", str(manifest_path.absolute()), ABSOLUTE_PATH)


def target_argument(workdir: Path, target: str) -> Argument:
    """`--target=T` for a target that passed the gate. A custom target file (`x.json`) is
    named relative to the audited directory (`workdir`), as when cargo ran there, and made
    absolute for cargo and rustc running elsewhere."""
    target = gated(target_triple, target, "target")
    if target.endswith(".json"):
        return checked_option("--target", str(workdir.absolute() / target), ABSOLUTE_PATH)
    return checked_option("--target", target, TARGET)


_LOCATION = re.compile(r"^(?P<lead>\s*-->\s+)(?P<path>.+?)(?P<place>(:\d+)+)?$", re.MULTILINE)


def relative_locations(stderr: str, cwd: Path) -> str:
    """cargo's `--> FILE:LINE:COL` names FILE relative to cargo's working directory; name it
    relative to featcheck's own (or absolutely, outside it) so that it can be opened."""

    def rewrite(match: re.Match[str]) -> str:
        path = match["path"]
        full = os.path.normpath(os.path.join(cwd, path))
        try:
            here = os.getcwd()
            shown = os.path.relpath(full, here) if Path(full).is_relative_to(here) else full
        except (OSError, ValueError):
            shown = full
        return match["lead"] + shown + (match["place"] or "")

    return _LOCATION.sub(rewrite, stderr)


_MANIFEST_NAMES = frozenset({"Cargo.toml", "Cargo.lock"})


def refuse_special_manifests(manifest_path: Path, checkout: Path) -> None:
    """Refuse a FIFO or device named Cargo.toml or Cargo.lock anywhere cargo may read one
    (below the outermost directory with a Cargo.toml): cargo would block on it until the
    timeout; and, in the checkout, one that links out of it (see `special_manifest`)."""
    root = manifest_path.absolute().parent
    for directory in root.parents:
        if (directory / "Cargo.toml").is_file():
            root = directory
    found = special_manifest(root, _MANIFEST_NAMES, checkout)
    if found is not None:
        raise FeatcheckError(found[1], path=found[0])
