"""The rule probes of `featcheck probe` (alone with `--rule CODE`): each finding of the member
with a probe program, timed as the member builds the crate and as featcheck's fix builds it
(see the package's text); probe/member.py runs them next to the matmul."""

from __future__ import annotations

import statistics
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path

from featcheck.boundary import TrustContext
from featcheck.errors import FeatcheckError
from featcheck.fix_words import fix_words
from featcheck.fixes.apply import plan_changes
from featcheck.graph import DependencyGraph, Node
from featcheck.probe.build import BuildPlan, BuiltProbe, ProbeBuilder
from featcheck.probe.command import ProbeOptions, built
from featcheck.probe.measure import run_program
from featcheck.probe.resolve import BackendConfig, MemberGraph, Pin, graph_with_changes
from featcheck.probe.rules.programs import PROGRAMS, Program, program_for, program_timing
from featcheck.report import Finding
from featcheck.wording import plural
from featcheck.workspace.model import FEATURE, FeatureValue


@dataclass(frozen=True)
class Workload:
    """One hot path of the program, in both builds: medians over the runs, in ms."""

    name: str
    current_ms: float
    fixed_ms: float

    @property
    def ratio(self) -> float:
        """How many times slower the member's build is (below 1: faster)."""
        return self.current_ms / self.fixed_ms if self.fixed_ms > 0 else float("inf")


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
class RuleProbeReport:
    member: str
    target: str
    runs: int
    results: list[RuleProbeResult]
    notes: list[str] = field(default_factory=list)


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


@dataclass(frozen=True)
class RulePlan:
    """Each finding's two builds (as the member has the crate, and as fixed), planned."""

    findings: list[Finding]
    pairs: list[tuple[BackendConfig, BackendConfig, str]]
    """Per finding: the member's build, the fixed one, the fix in words."""
    plans: list[BuildPlan]
    """Two per finding, in order."""


def plan_rules(
    builder: ProbeBuilder,
    resolved: MemberGraph,
    findings: list[Finding],
    options: ProbeOptions,
) -> RulePlan:
    """Both builds of every finding, resolved (the fix on a copy) and prepared in the cache."""
    pairs = [_configurations(resolved, finding, options) for finding in findings]
    plans = [
        builder.plan(config, _program(finding))
        for finding, pair in zip(findings, pairs, strict=True)
        for config in pair[:2]
    ]
    return RulePlan(findings, pairs, plans)


def time_rules(
    builder: ProbeBuilder,
    resolved: MemberGraph,
    prepared: RulePlan,
    options: ProbeOptions,
    say: Callable[[str], None],
) -> RuleProbeReport:
    """Build what is planned (consent given), and run both builds of each finding in turn."""
    results = []
    for index, (finding, (current, fixed, fix)) in enumerate(
        zip(prepared.findings, prepared.pairs, strict=True)
    ):
        plan_now, plan_fixed = prepared.plans[2 * index : 2 * index + 2]
        builds = (built(builder, plan_now, say), built(builder, plan_fixed, say))
        program = _program(finding)
        say(
            f"timing {finding.crate} {finding.crate_version}: {program.work}, "
            f"{plural(options.runs, 'run')}"
        )
        workloads, agree = _timed(builds, options, builder.trust)
        results.append(
            RuleProbeResult(finding, program, current, fixed, fix, workloads, agree, builds)
        )
    return RuleProbeReport(resolved.member.name, resolved.target, options.runs, results)


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


def enabling_features(table: dict[str, tuple[FeatureValue, ...]], feature: str) -> set[str]:
    """`feature` and every feature of the same crate that turns it on, directly or through
    another (lz4_flex's `default` turns on `safe-decode`)."""
    enabling = {feature}
    grew = True
    while grew:
        grew = False
        for name, values in table.items():
            if name not in enabling and any(
                value.kind == FEATURE and value.name in enabling for value in values
            ):
                enabling.add(name)
                grew = True
    return enabling


def pins_for(graph: DependencyGraph, crate: str, version: str) -> tuple[Pin, ...]:
    """The crate as the graph builds it, then the dependencies of it that its program calls
    as well (Program.uses), each as the graph builds it."""
    nodes = [n for n in graph.named(crate) if n.version == version and not n.host]
    if len(nodes) != 1:
        raise FeatcheckError(
            f"cannot tell which build of {crate} {version} to time "
            f"({len(nodes)} in the member's graph)"
        )
    program = program_for(crate, version)
    uses = program.uses if program is not None else ()
    below = graph.dependencies(nodes[0])
    used = []
    for name in uses:
        found = [n for n in below if n.name == name and not n.host]
        if len(found) != 1:
            raise FeatcheckError(
                f"the probe of {crate} {version} calls {name}, which it "
                f"does not depend on once in the member's graph ({len(found)} builds)"
            )
        used.append(_pin(found[0]))
    return (_pin(nodes[0]), *used)


def _pin(node: Node) -> Pin:
    if node.package.source is not None:
        raise FeatcheckError(
            f"{node.name} {node.version} comes from {node.package.source}, not a registry: "
            "the probe builds registry crates only"
        )
    return Pin(node.name, node.version, tuple(sorted(node.features)))


def _timed(
    builds: tuple[BuiltProbe, BuiltProbe], options: ProbeOptions, trust: TrustContext
) -> tuple[tuple[Workload, ...], bool]:
    """Both binaries run in turn, `runs` times each: every workload's median of the runs'
    medians, and whether the builds computed the same results."""
    samples: list[dict[str, list[float]]] = [{}, {}]
    results: list[dict[str, str]] = [{}, {}]
    for _ in range(options.runs):
        for index, build in enumerate(builds):
            for name, milliseconds, result in _run_program(build.binary, options.timeout, trust):
                samples[index].setdefault(name, []).append(milliseconds)
                results[index][name] = result
    workloads = tuple(
        Workload(
            name,
            statistics.median(samples[0][name]),
            statistics.median(samples[1].get(name, [0.0])),
        )
        for name in samples[0]
    )
    return workloads, results[0] == results[1]


def _run_program(binary: Path, timeout: float, trust: TrustContext) -> list[tuple[str, float, str]]:
    """One run of a probe program: `name<TAB>median ms<TAB>result` per workload."""
    rows = []
    for line in run_program(binary, [], timeout, trust).splitlines():
        name, _, rest = line.partition("\t")
        text, _, result = rest.partition("\t")
        try:
            rows.append((name, float(text), result))
        except ValueError:
            raise FeatcheckError(f"the probe printed an unexpected line: {line[:80]!r}") from None
    return rows
