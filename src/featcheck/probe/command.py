"""The matmul probe: burn-flex as the member builds it (and with featcheck's fix), planned,
built (cached), timed and judged in the steps member.py runs; and the member's graph with a
fix, resolved on a copy of the workspace, for the matmul and the rule probes alike.
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.util
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

from featcheck.cargo.runner import CargoRunner
from featcheck.errors import FeatcheckError
from featcheck.fixes.apply import FileChange, plan_changes
from featcheck.fixes.workspace_copy import WorkspaceCopy
from featcheck.probe.measure import TorchStats, measure, measure_torch, usable_cores
from featcheck.probe.programs import MATMUL, Program
from featcheck.probe.resolve import MemberGraph, matmul_config, read_tree, release_profile
from featcheck.probe.verdict import Decision
from featcheck.report import fix_words

if TYPE_CHECKING:
    from featcheck.probe.build import BuildPlan, ProbeBuilder
    from featcheck.report import Finding


@dataclass(frozen=True)
class ProbeOptions:
    path: Path = Path(".")
    package: str | None = None
    n: int = 1024
    compare_fix: bool = False
    offline: bool = False
    timeout: float = 300.0
    """Seconds for each cargo resolution and each probe run."""
    on_command: Callable[[list[str]], None] | None = None
    confirm: Callable[[str], bool] | None = None
    """Asked with the build statement before anything is compiled; None: proceed (--yes)."""
    codes: tuple[str, ...] = ()
    """`--rule`: only these rules' findings (`all`: any with a program) and no matmul."""


@dataclass
class VariantResult:
    build: BuildPlan
    decision: Decision


@dataclass
class MatmulReport:
    n: int
    cores: int
    current: VariantResult
    fixed: VariantResult | None = None
    compare: bool = False
    torch: TorchStats | None = None
    fix_description: str | None = None
    notes: list[str] = field(default_factory=list)
    seconds_to_timing: float = 0.0
    """From the start of the command to the first timed run (resolving, building or not)."""


def fix_changes(findings: list[Finding]) -> tuple[list[FileChange], str | None]:
    """What `featcheck --fix` would write for these findings, and in words."""
    described = "; ".join(
        f"{f.code}: {fix_words(f.fix)}" for f in findings if f.fix is not None and f.fix.safe
    )
    return plan_changes(findings), described or None


@dataclass(frozen=True)
class Planned:
    """A program's builds, prepared in the cache: the member's configuration first, then the
    one it is timed against (featcheck's fix, or a rule's feature changed), if any."""

    program: Program
    plans: list[BuildPlan]
    fix: str | None
    """What the second build changes, in words."""
    notes: list[str] = field(default_factory=list)


def plan_matmul(
    builder: ProbeBuilder, resolved: MemberGraph, findings: list[Finding], options: ProbeOptions
) -> Planned:
    preset = os.environ.get("RAYON_NUM_THREADS")
    notes = []
    if preset is not None:
        notes.append(
            f"RAYON_NUM_THREADS={preset} is set here; the probe sets it to 1 for one run and "
            "unsets it for the all-core run"
        )
    config = matmul_config(resolved)
    configs, fix_description = [config], None
    if options.compare_fix:
        changes, fix_description = fix_changes(findings)
        if not changes:
            notes.append(f"featcheck has no confirmed fix for {config.member}: nothing to compare")
        else:
            fixed = matmul_config(graph_with_changes(resolved, changes), "with featcheck's fix")
            if fixed.pins == config.pins:
                notes.append(
                    f"featcheck's fix does not change {config.backend}: nothing to compare"
                )
            else:
                configs.append(fixed)
    return Planned(MATMUL, [builder.plan(c, MATMUL) for c in configs], fix_description, notes)


def time_matmul(
    builder: ProbeBuilder,
    prepared: Planned,
    options: ProbeOptions,
    started: float,
) -> MatmulReport:
    """Once the builds are consented to; `started`: when the command began (time.monotonic)."""
    builds = [builder.build(plan) for plan in prepared.plans]
    cores = usable_cores()
    seconds_to_timing = time.monotonic() - started
    decisions = measure(
        [b.binary for b in builds],
        options.n,
        cores=cores,
        timeout=options.timeout,
        say=builder.say,
        trust=builder.trust,
    )
    variants = [VariantResult(b, d) for b, d in zip(builds, decisions, strict=True)]
    torch = None
    if options.compare_fix and importlib.util.find_spec("torch") is not None:
        builder.say("timing PyTorch's matmul the same way (torch is importable here)")
        try:
            torch = measure_torch(importlib.import_module("torch"), options.n)
        except Exception as error:  # a broken torch install must not sink the probe's result
            builder.say(f"PyTorch could not be timed: {error}")
    return MatmulReport(
        n=options.n,
        cores=cores,
        current=variants[0],
        fixed=variants[1] if len(variants) > 1 else None,
        compare=options.compare_fix,
        torch=torch,
        fix_description=prepared.fix,
        notes=prepared.notes,
        seconds_to_timing=seconds_to_timing,
    )


def graph_with_changes(resolved: MemberGraph, changes: list[FileChange]) -> MemberGraph:
    """The member's graph after `changes`, resolved by cargo on a temporary copy of the
    workspace (the fixes' own, which writes no file of the user's through a link); the copy's
    Cargo.lock is what `--fix` would leave."""
    with contextlib.closing(WorkspaceCopy(resolved.metadata.root, for_cargo=True)) as copy:
        try:
            copy.apply(changes)
            manifest = copy.moved(resolved.manifest)
        except ValueError:
            raise FeatcheckError(
                "the fix edits a manifest outside the workspace: the probe cannot copy it"
            ) from None
        except OSError as error:
            raise FeatcheckError(
                f"could not copy the workspace to probe the fix: {error}"
            ) from None
        # The copy is the checkout too: the probe's context, derived for it; and the member's
        # cargo, toolchain and configuration answer for it.
        first = resolved.runner
        runner = CargoRunner(
            copy.path,
            trust=first.trust.derive(copy.path),
            offline=first.offline,
            timeout=first.timeout,
            on_command=first.on_command,
            setup=first.prepared_setup(),
        )
        member = resolved.member
        graph = read_tree(runner.tree(manifest, f"{member.name}@{member.version}", resolved.target))
        lockfile = copy.lockfile()
        profile = release_profile(copy.path / "Cargo.toml")
    return replace(resolved, graph=graph, lockfile=lockfile, profile=profile)
