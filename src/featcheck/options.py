"""What an audit is asked to do: the options a caller (the command line) sets."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

from featcheck.boundary import repository_root
from featcheck.featureset import FeatureSelection


# A NamedTuple, not a dataclass: made before cargo starts (see audit.py).
class AuditOptions(NamedTuple):
    """What to audit and how to call cargo."""

    packages: tuple[str, ...] = ()
    """Members to audit (`-p`); empty means every member the path selects."""
    targets: tuple[str, ...] = ()
    """Target triples; empty means the host."""
    offline: bool = False
    locked: bool = False
    timeout: float = 300.0
    select: tuple[str, ...] = ()
    """Rules to run besides the defaults (codes or names), e.g. the opt-in hints."""
    ignore: tuple[str, ...] = ()
    """Rules not to run."""
    check_new_packages: bool = True
    """Before calling a fix confirmed that turns on dependencies Cargo.lock holds no version
    of, let cargo resolve all such fixes once over a temporary copy (False: memory decides)."""
    search_fixes: bool = True
    """False: no fix is searched, and a finding points at the member's own declaration on the
    way to the crate (`--new-since`'s audit of the base revision, where only findings count)."""
    confirm_fixes: bool = True
    """Call a fix safe once featcheck's resolver, with the edits made in memory, builds the
    missing feature and leaves no finding of the crate behind (False: fixes are listed only)."""
    on_command: Callable[[list[str]], None] | None = None
    """Called with each cargo/rustc command line before it runs (the CLI's --verbose)."""
    update_lockfile: bool = False
    """Keep what cargo writes to Cargo.lock (after --fix), instead of restoring the user's."""
    no_exec: bool = False
    """Start no process: read the manifests, Cargo.lock and the dependency manifests in the
    local cargo registry or vendor/, with built-in target cfgs; no fix is confirmed safe."""
    configurations: tuple[FeatureSelection, ...] = ()
    """Feature selections to audit (`--features`, `--no-default-features`, `--all-features`);
    empty means the configuration's `configurations`, else the default features."""
    each_feature: bool = False
    """Also audit each feature of each member on its own (`--each-feature`)."""
    on_progress: Callable[[str], None] | None = None
    """Called with a short text while cargo downloads (the CLI's progress line)."""
    root: Path | None = None
    """What reported paths are relative to (`--root`); None: the repository root above the
    audited directory, else that directory (see `report_root`)."""


def beyond_defaults(configurations: tuple[FeatureSelection, ...], each_feature: bool) -> bool:
    """Whether any configuration needs more than the default features."""
    return each_feature or any(not c.is_default for c in configurations)


def report_root(audited: Path, chosen: Path | None) -> Path:
    """The directory locations are reported relative to: `chosen`, else the repository root
    (git's top level: where a developer stands, what code scanning and annotations attach to),
    else the audited directory. Absolute, symlinks kept as the manifest paths keep them."""
    if chosen is not None:
        return Path(os.path.abspath(chosen))
    return repository_root(audited) or audited
