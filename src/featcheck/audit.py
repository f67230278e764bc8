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

import os
from collections.abc import Callable
from contextlib import nullcontext
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from featcheck.boundary import check_within
from featcheck.cargo.argv_gate import GateError, target_triple
from featcheck.cargo.runner import CargoRunner
from featcheck.errors import FeatcheckError
from featcheck.featureset import FeatureSelection
from featcheck.lockfile import LockfileGuard, refuse_lockfile_links

if TYPE_CHECKING:
    from featcheck.locate import ManifestCache
    from featcheck.report import AuditResult
    from featcheck.workspace.workspace import Workspace


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
    confirm_fixes: bool = True
    """Call a fix safe once featcheck's resolver, with the edits made in memory, builds the
    missing feature and leaves no finding of the crate behind (False: fixes are listed only)."""
    on_command: Callable[[list[str]], None] | None = None
    """Called with each cargo/rustc command line before it runs (the CLI's --verbose)."""
    trust_checkout: bool = False
    """Let cargo obey the checkout's rust-toolchain.toml and .cargo/config.toml (runs its code)."""
    update_lockfile: bool = False
    """Keep what cargo writes to Cargo.lock (after --fix), instead of restoring the user's."""
    resolver: str = "featcheck"
    """`featcheck`: resolve features in-process from the one `cargo metadata` call (proven equal
    to cargo's answer); `cargo`: ask `cargo tree -e normal` once per member and target."""
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
    known: Workspace | None,
    manifest: Path,
    options: AuditOptions,
    runner: CargoRunner,
    manifests: ManifestCache,
    all_features: bool,
) -> tuple[Workspace, AuditResult] | None:
    """While cargo works: the audit of the answer it gave last time (see last_answer.py),
    which stands only if cargo now answers exactly the same. Given up (None) where it would
    start a process (cargo to confirm a fix, say) or fails in any way: the audit after cargo's
    answer then does it all, and raises what there is to raise."""
    if known is None or options.resolver == "cargo":  # its cargo calls run on other threads
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


def report_root(audited: Path, chosen: Path | None) -> Path:
    """The directory locations are reported relative to: `chosen`, else the repository root
    (git's top level: where a developer stands, what code scanning and annotations attach to),
    else the audited directory. Absolute, symlinks kept as the manifest paths keep them."""
    if chosen is not None:
        return Path(os.path.abspath(chosen))
    from featcheck.boundary import repository_root

    return repository_root(audited) or audited


def beyond_defaults(configurations: tuple[FeatureSelection, ...], each_feature: bool) -> bool:
    """Whether any configuration needs more than the default features."""
    return each_feature or any(not c.is_default for c in configurations)
