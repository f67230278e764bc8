"""The audit of a project: checks its inputs, starts cargo, and hands the answer to the pipeline.

This module is what the command line loads first, so it stays light: `cargo metadata` is started
before the rest of the audit (`pipeline.py`, the rules, the renderers) is even imported, and
Python loads those while cargo resolves.

What runs before cargo starts is kept free of the `dataclasses` module: its import (which
brings `inspect`) and the methods it generates for each class cost 15 ms of a clean crate's
audit, measured beside cargo in benchmarks/bench_cli.py. The value types on that path
(`AuditOptions`, `FeatureSelection`, the runner's, the gate's and the toolchain's) are
NamedTuples, and `CargoRunner` is a plain class; the stages after cargo use dataclasses.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import nullcontext
from pathlib import Path
from typing import TYPE_CHECKING

from featcheck.boundary import check_within
from featcheck.cargo.argv_gate import GateError, target_triple
from featcheck.cargo.runner import CargoRunner
from featcheck.errors import FeatcheckError
from featcheck.lockfile import LockfileGuard, refuse_lockfile_links
from featcheck.options import AuditOptions, Resolver, beyond_defaults

if TYPE_CHECKING:
    from featcheck.cargo.metadata import WorkspaceMetadata
    from featcheck.locate import ManifestCache
    from featcheck.report import AuditResult


KEPT_UNTIL_EXIT: list[object] | None = None
"""Set to a list by a process that ends right after its audit (the command line, which exits
without tearing the interpreter down): the metadata documents are kept there instead of being
freed object by object when the audit returns (4 ms of a clean crate's 0.45 s)."""


def _check_builtin_codes(options: AuditOptions) -> None:
    """An unknown FC code fails before cargo runs; other names may be the project's own rules,
    known once its configuration is read."""
    if not (options.select or options.ignore):
        return  # the usual run: the rules load while cargo works
    from featcheck.rules import select_rules
    from featcheck.rules.load import BUILTIN_CODE

    fc = tuple(
        c for c in (*options.select, *options.ignore) if BUILTIN_CODE.fullmatch(c.strip().upper())
    )
    try:
        select_rules(fc)
    except ValueError as error:
        raise FeatcheckError(str(error)) from None


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


def find_manifest_upward(start: Path) -> Path:
    """The Cargo.toml that cargo would use when started in `start` without --manifest-path:
    the one in the nearest directory at or above it, made absolute (from a member's `src/`,
    the member's)."""
    start = start.absolute()
    for directory in (start, *start.parents):
        manifest = directory / "Cargo.toml"
        if manifest.is_file():
            return manifest
    raise FeatcheckError("could not find `Cargo.toml` here or in any parent directory", path=start)


def manifest_path_option(path: Path) -> Path:
    """The value of `--manifest-path`, which names the manifest itself, as cargo wants it."""
    if path.name != "Cargo.toml":
        raise FeatcheckError("--manifest-path must be a path to a Cargo.toml file", path=path)
    if not path.is_file():
        raise FeatcheckError("no such manifest", path=path)
    return path.absolute()


def project_manifest(path: Path | None, manifest_path: Path | None) -> Path:
    """The project that PATH or `--manifest-path` names, else the Cargo.toml cargo would use
    in the current directory."""
    if manifest_path is not None:
        if path is not None:
            raise FeatcheckError("give PATH or --manifest-path, not both")
        return manifest_path_option(manifest_path)
    if path is not None:
        return path
    return find_manifest_upward(Path.cwd())


def audit_project(
    path: Path, options: AuditOptions, *, meanwhile: Callable[[], object] | None = None
) -> AuditResult:
    """Audit every selected member on every target, as cargo resolves it.

    `meanwhile` runs while cargo works (the command line loads its renderer there)."""
    _check_builtin_codes(options)
    for target in options.targets:  # each reaches rustc's and cargo's command lines
        try:
            target_triple(target)
        except GateError as error:
            raise FeatcheckError(f"--target: {error}") from None
    manifest = find_manifest(path)
    runner = (_file_runner() if options.no_exec else CargoRunner)(
        manifest.parent,
        offline=options.offline,
        locked=options.locked,
        timeout=options.timeout,
        on_command=options.on_command,
        trust_checkout=options.trust_checkout,
        on_progress=options.on_progress,
    )
    checkout = runner.checkout
    # Before cargo starts: the audited manifest may be a link out of the checkout (cargo would
    # read it), a Cargo.lock one cargo would write through (kept or not).
    check_within(manifest, checkout, "reading a Cargo.toml")
    refuse_lockfile_links(manifest, checkout)
    with nullcontext() if options.update_lockfile else LockfileGuard.around(manifest, checkout):
        all_features = beyond_defaults(options.configurations, options.each_feature)
        pending = runner.start_metadata(manifest, all_features=all_features)
        try:
            # While cargo resolves: load the rest of the audit, read the manifest (a broken one
            # gets featcheck's one-line error, not cargo's), then ask rustc for the host and the
            # targets' cfg, which do not depend on the metadata: all of it off the path the user
            # waits on, and rustc only once the imports no longer need the other core.
            from featcheck import pipeline
            from featcheck.locate import ManifestCache
            from featcheck.rules.catalogue import builtin_rules

            builtin_rules()  # the rule specs, read once per process

            manifests = ManifestCache(checkout)
            manifests.get(manifest)
            if meanwhile is not None:
                meanwhile()
            _warm_target_cfgs(runner, options.targets)
            pending.read_last_answer()
            ahead = _audit_ahead(
                pending.last_answer, manifest, options, runner, manifests, all_features
            )
            metadata = pending.result()
        finally:
            pending.cancel()
        if KEPT_UNTIL_EXIT is not None:
            KEPT_UNTIL_EXIT.append(metadata)
        try:
            if ahead is not None and ahead[0] is metadata:  # cargo answered the same again
                return ahead[1]
            return pipeline.audit_workspace(
                manifest, options, runner, metadata, manifests, all_features=all_features
            )
        finally:
            pending.settle()


def _audit_ahead(
    known: WorkspaceMetadata | None,
    manifest: Path,
    options: AuditOptions,
    runner: CargoRunner,
    manifests: ManifestCache,
    all_features: bool,
) -> tuple[WorkspaceMetadata, AuditResult] | None:
    """While cargo works: the audit of the answer it gave last time (see last_answer.py),
    which stands only if cargo now answers exactly the same. Given up (None) where it would
    start a process (cargo to confirm a fix, say) or fails in any way: the audit after cargo's
    answer then does it all, and raises what there is to raise."""
    if known is None or options.resolver is Resolver.CARGO:  # its cargo calls run on other threads
        return None
    from featcheck import pipeline
    from featcheck.cargo.process import ProcessRefused, refusing_processes

    try:
        with refusing_processes():
            result = pipeline.audit_workspace(
                manifest, options, runner, known, manifests, all_features=all_features
            )
    except (ProcessRefused, Exception):
        return None
    return known, result


def _file_runner() -> type[CargoRunner]:
    """`--no-exec`'s runner, loaded only for it (it brings the registry and archive readers)."""
    from featcheck.noexec.runner import FileRunner

    return FileRunner


def _warm_target_cfgs(runner: CargoRunner, targets: tuple[str, ...]) -> None:
    """Fill the runner's caches of rustc answers; an error is left for the real call to raise."""
    try:
        for target in targets or (runner.host_triple(),):
            runner.target_cfg(target)
    except FeatcheckError:
        pass
