"""`featcheck probe`: resolve the member, build the probe (cached), time it, decide.

The probe is the only part of featcheck that compiles and runs code: registry crates at the
member's locked versions (their build scripts and proc-macros run while compiling) plus
featcheck's own probe crate, built in the user's cache directory. Before compiling, it states
exactly that and asks (`confirm`); a cached build compiles nothing. The audited crate, its build
script and its path dependencies are never compiled or run.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from featcheck.audit import find_manifest
from featcheck.boundary import checkout_root
from featcheck.errors import FeatcheckError
from featcheck.fixes.apply import plan_changes
from featcheck.manifest.document import read_manifest
from featcheck.options import AuditOptions
from featcheck.pipeline import audit_project
from featcheck.probe.build import ProbeBuilder
from featcheck.probe.measure import Measurement, TorchStats, measure, measure_torch, usable_cores
from featcheck.probe.plan import BuildPlan, BuiltProbe
from featcheck.probe.resolve import (
    BackendConfig,
    MemberResolution,
    resolve_member,
    resolve_with_changes,
)
from featcheck.probe.verdict import Decision, check_n, decide
from featcheck.wording import plural

DEFAULT_N = 1024


@dataclass(frozen=True)
class ProbeOptions:
    """What `featcheck probe` was asked to do."""

    path: Path = Path(".")
    package: str | None = None
    n: int = DEFAULT_N
    compare_fix: bool = False
    offline: bool = False
    mlp: bool = True
    """Also time the MLP train step (the published measurement's second number)."""
    timeout: float = 300.0
    """Seconds for each cargo resolution and each probe run."""
    build_timeout: float = 3600.0
    """Seconds for one probe build (at least `timeout`)."""
    on_command: Callable[[list[str]], None] | None = None
    confirm: Callable[[str], bool] | None = None
    """Asked with the build statement before anything is compiled; None: proceed (--yes)."""


TOOLCHAIN_HINT = (
    "(the probe builds with one of your own toolchains, never the checkout's: set "
    "RUSTUP_TOOLCHAIN to an installed one, e.g. RUSTUP_TOOLCHAIN=stable)"
)
_TRUST_HINT = re.compile(r"\(pass --trust-checkout[^)]*\)")


def probe_error(error: FeatcheckError) -> FeatcheckError:
    """`error` with hints the probe can act on: it has no --trust-checkout (it never runs the
    checkout's toolchain), so that advice becomes RUSTUP_TOOLCHAIN, which it honours."""
    message = error.message
    if "--trust-checkout" not in message:
        return error
    message = _TRUST_HINT.sub(TOOLCHAIN_HINT, message)
    if "--trust-checkout" in message:
        message = message.replace("--trust-checkout", "RUSTUP_TOOLCHAIN=<an installed toolchain>")
    return FeatcheckError(message, path=error.path, line=error.line, column=error.column)


def build_statement(plans: list[BuildPlan], member: str, lockfile: str) -> str:
    """What building `plans` compiles and runs, in words, before it happens."""
    crates = sorted({c for plan in plans for c in plan.crates})
    macros = sorted({c for plan in plans for c in plan.proc_macros})
    known = [plan.build_scripts for plan in plans if plan.build_scripts is not None]
    if len(known) == len(plans):
        scripts = sorted({c for listed in known for c in listed})
        run = f"the build scripts of {len(scripts)} of them ({', '.join(scripts) or 'none'})"
    else:
        run = "the build scripts among them (cargo metadata could not list which here)"
    backends = " and ".join(str(plan.config.backend) for plan in plans)
    return (
        f"building the probe for {backends} will compile {plural(len(crates), 'crate')} from the "
        f"registry at the versions {lockfile} pins, plus featcheck's own probe crate, then "
        "run the probe. While "
        f"compiling, cargo runs {run} and rustc loads {plural(len(macros), 'proc-macro')} "
        f"({', '.join(macros) or 'none'}). Nothing of {member}'s own code (its crate, build "
        "script or path dependencies) is compiled or run"
    )


@dataclass
class VariantResult:
    """One build of the probe, measured and judged."""

    config: BackendConfig
    build: BuiltProbe
    measurement: Measurement
    decision: Decision


@dataclass
class ProbeReport:
    """Everything the renderers show."""

    member: str
    target: str
    n: int
    cores: int
    mlp: bool
    current: VariantResult
    fixed: VariantResult | None = None
    compare: bool = False
    torch: TorchStats | None = None
    fix_description: str | None = None
    notes: list[str] = field(default_factory=list)
    seconds_to_timing: float = 0.0
    """From the start of the command to the first timed run (resolving, building or not)."""


def _fix_changes(
    resolution: MemberResolution, options: ProbeOptions, say: Callable[[str], None]
) -> tuple[dict[Path, str], str | None]:
    """What `featcheck --fix` would write for this member (path -> new text), and in words."""
    say(f"auditing {resolution.member.name} for featcheck's fix (cargo confirms it)")
    result = audit_project(
        resolution.manifest,
        AuditOptions(
            packages=(resolution.member.name,),
            targets=(resolution.config.target,),
            offline=options.offline,
            timeout=options.timeout,
            on_command=options.on_command,
        ),
    )
    findings = [f for f in result.findings if f.member == resolution.member.name]
    changes = plan_changes(findings)
    described = "; ".join(
        f"{f.code}: {f.fix.description}" for f in findings if f.fix is not None and f.fix.safe
    )
    return {change.path: change.updated for change in changes}, described or None


def _torch(n: int, say: Callable[[str], None]) -> TorchStats | None:
    if importlib.util.find_spec("torch") is None:
        return None
    say("timing PyTorch's matmul the same way (torch is importable here)")
    try:
        torch = importlib.import_module("torch")
        return measure_torch(torch, n)
    except Exception as error:  # a broken torch install must not sink the probe's result
        say(f"PyTorch could not be timed: {error}")
        return None


def run_probe(options: ProbeOptions, say: Callable[[str], None]) -> ProbeReport:
    """Run the whole probe; raises FeatcheckError (one line) on any failure."""
    try:
        return _run_probe(options, say)
    except FeatcheckError as error:
        raise probe_error(error) from None


def _run_probe(options: ProbeOptions, say: Callable[[str], None]) -> ProbeReport:
    started = time.monotonic()
    manifest = _checked_manifest(options)
    # cargo, rustc and a linker first: no point resolving what cannot be built.
    builder = ProbeBuilder(
        manifest.parent,
        offline=options.offline,
        timeout=max(options.build_timeout, options.timeout),
        say=say,
        on_command=options.on_command,
    )
    say("resolving the member's features with cargo (nothing of the checkout is built or run)")
    resolution = resolve_member(
        manifest,
        options.package,
        offline=options.offline,
        timeout=options.timeout,
        on_command=options.on_command,
    )
    config = resolution.config
    notes = _environment_notes()
    configs, fix_description = _configurations(resolution, options, say, notes)
    plans = [builder.plan(variant, mlp=options.mlp) for variant in configs]
    _confirm_build(plans, config, options, say)
    builds = [built(builder, plan, say) for plan in plans]
    cores = usable_cores()
    seconds_to_timing = time.monotonic() - started
    variants = _measured(configs, builds, options, cores, say)
    return ProbeReport(
        member=config.member,
        target=config.target,
        n=options.n,
        cores=cores,
        mlp=options.mlp,
        current=variants[0],
        fixed=variants[1] if len(variants) > 1 else None,
        compare=options.compare_fix,
        torch=_torch(options.n, say) if options.compare_fix else None,
        fix_description=fix_description,
        notes=notes,
        seconds_to_timing=seconds_to_timing,
    )


def _checked_manifest(options: ProbeOptions) -> Path:
    """The member's Cargo.toml, read once to refuse a bad one, after a valid --n."""
    try:
        check_n(options.n)
    except ValueError as error:
        raise FeatcheckError(str(error)) from None
    manifest = find_manifest(options.path)
    read_manifest(manifest, root=checkout_root(manifest))
    return manifest


def _environment_notes() -> list[str]:
    preset = os.environ.get("RAYON_NUM_THREADS")
    if preset is None:
        return []
    return [
        f"RAYON_NUM_THREADS={preset} is set here; the probe sets it to 1 for one run and "
        "unsets it for the all-core run"
    ]


def _configurations(
    resolution: MemberResolution,
    options: ProbeOptions,
    say: Callable[[str], None],
    notes: list[str],
) -> tuple[list[BackendConfig], str | None]:
    """The member's configuration, and with --compare-fix the one featcheck's fix gives where
    it differs (else a note why not); also the fix in words."""
    config = resolution.config
    if not options.compare_fix:
        return [config], None
    changes, fix_description = _fix_changes(resolution, options, say)
    if not changes:
        notes.append(f"featcheck has no confirmed fix for {config.member}: nothing to compare")
        return [config], fix_description
    fixed = resolve_with_changes(
        resolution,
        changes,
        offline=options.offline,
        timeout=options.timeout,
        on_command=options.on_command,
    )
    if fixed.pins == config.pins:
        notes.append(f"featcheck's fix does not change {config.backend}: nothing to compare")
        return [config], fix_description
    return [config, fixed], fix_description


def _confirm_build(
    plans: list[BuildPlan],
    config: BackendConfig,
    options: ProbeOptions,
    say: Callable[[str], None],
) -> None:
    confirm_build(plans, config.member, config.lockfile is not None, options.confirm, say)


def confirm_build(
    plans: list[BuildPlan],
    member: str,
    locked: bool,
    confirm: Callable[[str], bool] | None,
    say: Callable[[str], None],
) -> None:
    """State what the builds to come compile and run, and ask before compiling anything
    (`confirm` None: --yes); `locked`: the checkout has a Cargo.lock the builds copy."""
    to_build = [plan for plan in plans if not plan.cached]
    if not to_build:
        return
    lockfile = "the checkout's Cargo.lock" if locked else "cargo resolves"
    statement = build_statement(to_build, member, lockfile)
    say(statement)
    if confirm is not None and not confirm(statement):
        raise FeatcheckError("nothing was built: the probe's build was not confirmed")


def built(builder: ProbeBuilder, plan: BuildPlan, say: Callable[[str], None]) -> BuiltProbe:
    """The plan's binary, built now or before (said, so that no build passes unnoticed)."""
    binary = builder.build(plan)
    if binary.cached:
        say(
            f"using the probe built before for {plan.config.backend}: nothing is compiled "
            f"({binary.binary.parent})"
        )
    return binary


def _measured(
    configs: list[BackendConfig],
    builds: list[BuiltProbe],
    options: ProbeOptions,
    cores: int,
    say: Callable[[str], None],
) -> list[VariantResult]:
    """Every build timed with 1 thread and all cores, and judged."""
    measurements = measure(
        [b.binary for b in builds],
        options.n,
        cores=cores,
        mlp=options.mlp,
        timeout=options.timeout,
        say=say,
    )
    return [
        VariantResult(
            c,
            b,
            m,
            decide(m.single, m.every, cores, m.idle_cores, n=options.n, other_cores=m.other_cores),
        )
        for c, b, m in zip(configs, builds, measurements, strict=True)
    ]
