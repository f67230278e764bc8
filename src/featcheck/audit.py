"""The front of a project's audit: checks its inputs and starts cargo (`started_audit`);
`pipeline.audit_started` does the rest with cargo's answer.

This module is what the command line loads first, so it stays light: `cargo metadata` is started
before the rest of the audit (`pipeline.py`, the rules, the renderers) is even imported, and
Python loads those while cargo resolves (cli/lazy.py).

What runs before cargo starts is kept free of the `dataclasses` module: its import (which
brings `inspect`) and the methods it generates for each class cost 15 ms of a clean crate's
audit, measured beside cargo in benchmarks/bench_cli.py. The value types on that path
(`AuditOptions`, `FeatureSelection`, the runner's, the gate's and the toolchain's) are
NamedTuples, `CargoRunner` is a plain class and `MetadataSource` a Protocol; the stages after
cargo use dataclasses.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager, nullcontext
from pathlib import Path
from typing import NamedTuple

from featcheck.boundary import TrustContext, check_within
from featcheck.cargo.argv_gate import GateError, target_triple
from featcheck.cargo.pending_metadata import MetadataSource, PendingMetadata
from featcheck.cargo.runner import CargoRunner
from featcheck.errors import FeatcheckError
from featcheck.featureset import AuditOptions, beyond_defaults
from featcheck.fileio import LockfileWatch, lockfiles_kept, refuse_lockfile_links

KEPT_UNTIL_EXIT: list[object] | None = None
"""Set to a list by a process that ends right after its audit (the command line, which exits
without tearing the interpreter down): the metadata documents are kept there instead of being
freed object by object when the audit returns (4 ms of a clean crate's 0.45 s)."""


def find_manifest(path: Path) -> Path:
    """The Cargo.toml that PATH names (a directory or the manifest itself), made absolute."""
    path = path.absolute()
    if path.is_dir():
        manifest = path / "Cargo.toml"
        if not manifest.is_file():
            raise FeatcheckError("not a Cargo project: no Cargo.toml here", path=path)
        return manifest
    if not path.exists():
        raise FeatcheckError("no such file or directory", path=path)
    if path.suffix != ".toml":
        raise FeatcheckError("expected a directory or a Cargo.toml", path=path)
    return path


def project_manifest(path: Path | None, manifest_path: Path | None) -> Path:
    """The project that PATH or `--manifest-path` names, else the Cargo.toml cargo would use
    in the current directory."""
    if manifest_path is not None:
        if path is not None:
            raise FeatcheckError("give PATH or --manifest-path, not both")
        # `--manifest-path` names the manifest itself, as cargo wants it.
        if manifest_path.name != "Cargo.toml":
            raise FeatcheckError(
                "--manifest-path must be a path to a Cargo.toml file", path=manifest_path
            )
        if not manifest_path.is_file():
            raise FeatcheckError("no such manifest", path=manifest_path)
        return manifest_path.absolute()
    if path is not None:
        return path
    # Without either, the one cargo would use: in the nearest directory at or above this one
    # (from a member's `src/`, the member's), made absolute.
    start = Path.cwd().absolute()
    for directory in (start, *start.parents):
        manifest = directory / "Cargo.toml"
        if manifest.is_file():
            return manifest
    raise FeatcheckError("could not find `Cargo.toml` here or in any parent directory", path=start)


class Started(NamedTuple):
    """An audit whose `cargo metadata` is on its way."""

    manifest: Path
    options: AuditOptions
    source: MetadataSource
    pending: PendingMetadata
    all_features: bool
    """Whether cargo was asked with `--all-features`."""
    lockfile: LockfileWatch | None = None
    """Says whether cargo rewrote Cargo.lock (None: the run lets cargo keep what it writes)."""


SourceFactory = Callable[[Path, AuditOptions, TrustContext], MetadataSource]
"""Makes an audit's source for the directory of its manifest, in the run's trust context."""


def cargo_source(workdir: Path, options: AuditOptions, trust: TrustContext) -> CargoRunner:
    return CargoRunner(
        workdir,
        trust=trust,
        offline=options.offline,
        locked=options.locked,
        timeout=options.timeout,
        on_command=options.on_command,
        on_progress=options.on_progress,
        setup=options.setup,
        toolchain=options.toolchain,
    )


@contextmanager
def started_audit(
    path: Path, options: AuditOptions, trust: TrustContext, source_of: SourceFactory
) -> Iterator[Started]:
    """The audit of PATH with its workspace on its way from the source `source_of` makes
    (`cargo_source`, or `--no-exec`'s files) in the run's trust context (derived for the tree
    that holds PATH), inside the guard that restores Cargo.lock after cargo."""
    for target in options.targets:  # each reaches rustc's and cargo's command lines
        try:
            target_triple(target)
        except GateError as error:
            raise FeatcheckError(f"--target: {error}") from None
    manifest = find_manifest(path)
    source = source_of(manifest.parent, options, trust)
    checkout = source.checkout
    # Before cargo starts: the audited manifest may be a link out of the checkout (cargo would
    # read it), a Cargo.lock one cargo would write through (kept or not).
    check_within(manifest, checkout, "reading a Cargo.toml")
    refuse_lockfile_links(manifest, checkout)
    kept = lockfiles_kept(manifest, checkout, cargo_writes=not options.no_exec)
    guard = nullcontext() if options.update_lockfile else kept
    with guard as lockfile:
        all_features = beyond_defaults(options.configurations, options.each_feature)
        pending = source.start_metadata(manifest, all_features=all_features)
        try:
            yield Started(manifest, options, source, pending, all_features, lockfile)
        finally:
            pending.cancel()
