"""What the probe's builds compile and run, said before it happens, and the consent to it.

The statement is read at a prompt: short lines, the number of crates, how long the first build
may take on this machine, and every build script and proc-macro by name, one per line.
"""

from __future__ import annotations

import os
from collections.abc import Callable

from featcheck.errors import FeatcheckError
from featcheck.probe.build import BuildPlan
from featcheck.probe.measure import usable_cores
from featcheck.wording import plural

CPU_SECONDS_PER_CRATE = 2.5
"""CPU time one crate of the probe's graph takes to compile in release, on average. Calibrated
on first builds of the burn-flex probe (124 crates and the program) on the shared 2-core build
machine: 154 s at a load of 0.5 (this model: 195 s), 806 s at a load of 6-10 (this model at
8: 781 s)."""


def load_average() -> float | None:
    """The 1-minute load average: runnable work that competes with the build (None: the
    platform has none)."""
    try:
        return os.getloadavg()[0]
    except (AttributeError, OSError):
        return None


def first_build_seconds(crates: int, cores: int, load: float | None) -> float:
    """About how long compiling `crates` takes here from nothing: cargo runs one job per core,
    and the runnable work already there (`load`) takes its share of the cores."""
    cores = max(cores, 1)
    share = cores * cores / (cores + max(load or 0.0, 0.0))
    return crates * CPU_SECONDS_PER_CRATE / share


def _duration(seconds: float) -> str:
    if seconds < 90:
        return f"{max(10, round(seconds, -1)):.0f} s"
    return f"{round(seconds / 60):.0f} minutes"


def estimate_lines(crates: int, cores: int, load: float | None) -> list[str]:
    """The estimated first-build time, said to be one, with what it rests on."""
    seconds = first_build_seconds(crates, cores, load)
    busy = "no load average" if load is None else f"load {load:.1f} from other work"
    return [
        f"  first build: about {_duration(seconds)} here, an estimate",
        f"  ({plural(crates, 'crate')}, {plural(cores, 'core')}, {busy});",
        "  crates an earlier probe built are reused",
    ]


def _listed(title: str, names: list[str]) -> list[str]:
    if not names:
        return [f"  {title}: none"]
    return [f"  {title} ({len(names)}):", *(f"    {name}" for name in names)]


def build_statement(
    plans: list[BuildPlan],
    member: str,
    versions: str,
    *,
    cores: int | None = None,
    load: float | None = None,
) -> str:
    """What building `plans` compiles and runs, in short lines, before it happens; `versions`:
    whose versions (`the checkout's Cargo.lock pins`)."""
    crates = sorted({c for plan in plans for c in plan.crates})
    macros = sorted({c for plan in plans for c in plan.proc_macros})
    known = [plan.build_scripts for plan in plans if plan.build_scripts is not None]
    if len(plans) == 1:
        lines = [f"building the probe for {plans[0].config.backend}"]
    else:
        lines = [f"building {len(plans)} probes, for", *(f"    {p.config.backend}" for p in plans)]
    lines += [
        f"  compiles {plural(len(crates), 'crate')} from the registry, at the versions",
        f"  {versions}, and featcheck's own probe",
        "  crate, then runs the probe.",
        *estimate_lines(len(crates) + len(plans), cores or usable_cores(), load),
    ]
    if len(known) == len(plans):
        scripts = sorted({c for listed in known for c in listed})
        lines += _listed("build scripts cargo runs while compiling", scripts)
    else:
        lines.append("  build scripts: cargo metadata could not list which run here")
    lines += _listed("proc-macros rustc loads while compiling", macros)
    lines += [
        f"  nothing of {member}'s own code (its crate, build script",
        "  or path dependencies) is compiled or run",
    ]
    return "\n".join(lines)


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
    versions = "the checkout's Cargo.lock pins" if locked else "cargo resolves now"
    statement = build_statement(to_build, member, versions, load=load_average())
    say(statement)
    if confirm is not None and not confirm(statement):
        raise FeatcheckError("nothing was built: the probe's build was not confirmed")
