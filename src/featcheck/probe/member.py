"""`featcheck probe`: every measurement the member's findings have, in one run.

The member is resolved and audited once. Where it builds burn-flex, burn's matmul is timed
(command.py: the verdict on one core or several, whatever burn-flex's findings say). Each finding
whose crate has a rule program (regex, memchr, ...) is timed as the member builds the crate and
as featcheck's fix builds it: the program is built twice in the user's cache, with the crate
pinned to the member's version and exactly its resolved features, then with the features the fix
gives it, and the two binaries run in turn (`--rule CODE`: only those findings, no matmul). One
statement and one consent cover every build, then one report (report.py, schema.py). Nothing of
the member's code is built or run.

The statement is read at a prompt: short lines, the number of crates, how long the first build
may take on this machine, and every build script and proc-macro by name, one per line.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import dataclass, replace

from featcheck.boundary import TrustContext
from featcheck.errors import FeatcheckError
from featcheck.fix_words import fix_words
from featcheck.fixes.apply import plan_changes
from featcheck.probe.build import BuildPlan, BuiltProbe, ProbeBuilder
from featcheck.probe.command import (
    RULE_RUNS,
    MatmulReport,
    ProbeOptions,
    built,
    checked_manifest,
    member_findings,
    plan_matmul,
    probe_error,
    start_probe,
    time_matmul,
)
from featcheck.probe.measure import Workload, compare_builds, usable_cores
from featcheck.probe.programs import PROGRAMS, Program, program_timing
from featcheck.probe.resolve import (
    BACKEND,
    BackendConfig,
    MemberGraph,
    Pin,
    builds_backend,
    enabling_features,
    graph_with_changes,
    pins_for,
)
from featcheck.report import Finding
from featcheck.severity import plural

COSTS_FROM = 1.10
"""The ratio from which a finding counts as costing speed here (exit code 1)."""


@dataclass(frozen=True)
class RuleProbeResult:
    """One finding's cost, measured here."""

    finding: Finding
    program: Program
    current: BackendConfig
    fixed: BackendConfig
    fix: str
    """What the second build has: featcheck's fix in words, or the feature added by hand."""
    workloads: tuple[Workload, ...]
    agree: bool
    """Both builds computed the same results (else the ratio compares different work)."""
    builds: tuple[BuiltProbe, BuiltProbe]

    @property
    def headline(self) -> Workload:
        """The workload where the feature matters most."""
        return max(self.workloads, key=lambda workload: workload.ratio)


@dataclass
class ProbeReport:
    """The member's measurements: burn's matmul where it builds burn-flex, and the findings
    the rule programs time (None: no rule probe ran)."""

    member: str
    target: str
    matmul: MatmulReport | None
    rules: list[RuleProbeResult] | None
    runs: int = RULE_RUNS
    """Runs of each rule probe's two builds."""


def costs_here(results: list[RuleProbeResult]) -> bool:
    """Whether some finding's build is measurably slower than the fixed one."""
    return any(r.agree and r.headline.ratio >= COSTS_FROM for r in results)


def unsettled(results: list[RuleProbeResult]) -> bool:
    """Whether some finding got no ratio: its two builds computed different results."""
    return any(not r.agree for r in results)


def run_member_probe(
    options: ProbeOptions, say: Callable[[str], None], trust: TrustContext
) -> ProbeReport:
    """Probe everything of the member that has a program, in the run's trust context
    (`TrustContext.of` the path the user named); a FeatcheckError (one line) when nothing
    has, or on any failure."""
    try:
        return _run(options, say, trust)
    except FeatcheckError as error:
        raise probe_error(error) from None


def _run(options: ProbeOptions, say: Callable[[str], None], trust: TrustContext) -> ProbeReport:
    started = time.monotonic()
    manifest = checked_manifest(options, trust)
    builder, resolved = start_probe(manifest, options, say, trust)
    member = resolved.member.name
    say(f"auditing {member} for its findings and featcheck's fixes (cargo confirms them)")
    wanted = {code.upper() for code in options.codes} or {"ALL"}
    findings = member_findings(
        resolved,
        # A rule named runs even where it is opt-in (FC015's hint): it was asked for.
        select=tuple(sorted(wanted - {"ALL"})),
        offline=options.offline,
        timeout=options.timeout,
        on_command=options.on_command,
    )
    timed = timed_findings(findings, wanted)
    flex = not options.codes and builds_backend(resolved.graph)
    if not flex and not timed:
        raise FeatcheckError(_nothing_to_probe(resolved, options.codes, wanted))
    matmul = plan_matmul(builder, resolved, findings, options) if flex else None
    pairs, plans = plan_rules(builder, resolved, timed, options)
    confirm_build(
        [*(matmul.plans if matmul else ()), *plans],
        member,
        resolved.lockfile is not None,
        options.confirm,
        say,
    )
    return ProbeReport(
        member,
        resolved.target,
        time_matmul(builder, matmul, options, say, started) if matmul else None,
        _time_rules(builder, timed, pairs, plans, options, say) if timed else None,
        options.runs,
    )


def timed_crates() -> str:
    """The crates a rule probe can time, for messages."""
    return ", ".join(sorted(p.describe() for p in PROGRAMS.values()))


def timed_findings(findings: list[Finding], codes: set[str]) -> list[Finding]:
    """Those of `findings` of the rule `codes` (or `ALL`) that a program can time."""
    return [
        f
        for f in findings
        if ("ALL" in codes or f.code in codes)
        and program_timing(f.crate, f.crate_version, f.feature) is not None
    ]


def _nothing_to_probe(resolved: MemberGraph, codes: tuple[str, ...], wanted: set[str]) -> str:
    member, target = resolved.member.name, resolved.target
    if not codes:
        return (
            f"nothing to probe: {member} does not build {BACKEND} (burn's CPU backend Flex) "
            f"for {target} and has no finding whose crate the probe can time ({timed_crates()})"
        )
    asked = "any rule with a probe" if "ALL" in wanted else ", ".join(sorted(wanted))
    return (
        f"nothing to probe: {member} has no finding of {asked} on {target} whose crate the "
        f"probe can time ({timed_crates()})"
    )


def plan_rules(
    builder: ProbeBuilder, resolved: MemberGraph, findings: list[Finding], options: ProbeOptions
) -> tuple[list[tuple[BackendConfig, BackendConfig, str]], list[BuildPlan]]:
    """Both builds of every finding, resolved (the fix on a copy) and prepared in the cache:
    per finding the member's build, the fixed one and the fix in words; two plans per finding,
    in order."""
    pairs = [_configurations(resolved, finding, options) for finding in findings]
    plans = [
        builder.plan(config, _program(finding))
        for finding, pair in zip(findings, pairs, strict=True)
        for config in pair[:2]
    ]
    return pairs, plans


def _time_rules(
    builder: ProbeBuilder,
    findings: list[Finding],
    pairs: list[tuple[BackendConfig, BackendConfig, str]],
    plans: list[BuildPlan],
    options: ProbeOptions,
    say: Callable[[str], None],
) -> list[RuleProbeResult]:
    """Build what is planned (consent given, two plans per finding), and run both builds of
    each finding in turn."""
    results = []
    for index, (finding, (current, fixed, fix)) in enumerate(zip(findings, pairs, strict=True)):
        plan_now, plan_fixed = plans[2 * index : 2 * index + 2]
        builds = (built(builder, plan_now, say), built(builder, plan_fixed, say))
        program = _program(finding)
        say(
            f"timing {finding.crate} {finding.crate_version}: {program.work}, "
            f"{plural(options.runs, 'run')}"
        )
        workloads, agree = compare_builds(
            builds[0].binary,
            builds[1].binary,
            runs=options.runs,
            timeout=options.timeout,
            trust=builder.trust,
        )
        results.append(
            RuleProbeResult(finding, program, current, fixed, fix, workloads, agree, builds)
        )
    return results


def _program(finding: Finding) -> Program:
    program = program_timing(finding.crate, finding.crate_version, finding.feature)
    assert program is not None  # timed_findings keeps only findings with a program
    return program


def _configurations(
    resolved: MemberGraph, finding: Finding, options: ProbeOptions
) -> tuple[BackendConfig, BackendConfig, str]:
    """The crate as the member builds it, and as featcheck's fix builds it (or, without a
    confirmed fix, with the rule's feature added)."""
    pins = pins_for(resolved.graph, finding.crate, finding.crate_version)
    now = pins[0]
    current = BackendConfig(
        resolved.member.name, resolved.target, "", pins, resolved.lockfile, resolved.profile
    )
    if finding.fix is not None and finding.fix.safe:
        changes = {c.path: c.updated for c in plan_changes([finding])}
        after = graph_with_changes(
            resolved,
            changes,
            offline=options.offline,
            timeout=options.timeout,
            on_command=options.on_command,
        )
        fixed = replace(
            current,
            pins=pins_for(after.graph, finding.crate, finding.crate_version),
            lockfile=after.lockfile,
            profile=after.profile,
            label="with featcheck's fix",
        )
        return current, fixed, f"featcheck's fix: {fix_words(finding.fix)}"
    # No confirmed fix (and none for a feature that costs when on): the feature itself.
    present = finding.feature in now.features
    if present:
        # `default` (or any feature) that turns it on would bring it back: they go with it.
        package = resolved.metadata.find(finding.crate, finding.crate_version)
        table = package.features if package is not None else {}
        features = set(now.features) - enabling_features(table, finding.feature)
    else:
        features = set(now.features) | {finding.feature}
    changed = Pin(now.name, now.version, tuple(sorted(features)))
    label = f"without `{finding.feature}`" if present else f"with `{finding.feature}`"
    fixed = replace(current, pins=(changed, *pins[1:]), label=label)
    if present:
        return current, fixed, f"`{finding.feature}` turned off"
    return current, fixed, f"`{finding.feature}` added; featcheck has no confirmed fix"


# --- the statement before building, and the consent to it --------------------------------------


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
