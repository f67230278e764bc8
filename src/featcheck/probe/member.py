"""`featcheck probe`: every measurement the member's findings have, in one run (README,
"Measuring it on this machine"). The member is resolved and audited once; burn's matmul is timed
where it builds burn-flex (command.py), and each finding whose crate has a rule program as the
member builds the crate and as featcheck's fix builds it. One statement and one consent cover
every build, then one report (report.py, schema.py). Nothing of the member's code is built or run.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

from featcheck.audit import find_manifest
from featcheck.boundary import TrustContext
from featcheck.cargo.runner import CargoRunner
from featcheck.errors import FeatcheckError
from featcheck.featureset import AuditOptions
from featcheck.fixes.apply import plan_changes
from featcheck.manifest.document import read_manifest
from featcheck.probe.build import BuildPlan, ProbeBuilder, build_statement
from featcheck.probe.command import (
    MatmulReport,
    Planned,
    ProbeOptions,
    graph_with_changes,
    plan_matmul,
    time_matmul,
)
from featcheck.probe.measure import RULE_RUNS, Workload, compare_builds
from featcheck.probe.programs import PROGRAMS, Program, program_timing
from featcheck.probe.resolve import (
    BACKEND,
    BackendConfig,
    MemberGraph,
    Pin,
    enabling_features,
    member_graph,
    pins_for,
)
from featcheck.probe.verdict import COSTS_FROM
from featcheck.report import AuditResult, Finding, fix_words
from featcheck.severity import plural


@dataclass(frozen=True)
class RuleProbeResult:
    """One finding's cost, measured here."""

    finding: Finding
    program: Program
    current: BuildPlan
    fixed: BuildPlan
    fix: str | None
    """What the second build has: featcheck's fix in words, or the feature added by hand."""
    workloads: tuple[Workload, ...]
    agree: bool
    """Both builds computed the same results (else the ratio compares different work)."""

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

    @property
    def costs_here(self) -> bool:
        """Whether some finding's build is measurably slower than the fixed one."""
        return any(r.agree and r.headline.ratio >= COSTS_FROM for r in self.rules or ())


TOOLCHAIN_HINT = (
    "(the probe builds with one of your own toolchains, never the checkout's: set "
    "RUSTUP_TOOLCHAIN to an installed one, e.g. RUSTUP_TOOLCHAIN=stable)"
)
_TRUST_HINT = re.compile(r"\(pass --trust-checkout[^)]*\)")


Audit = Callable[[Path, AuditOptions, TrustContext], AuditResult]
"""`pipeline.audit_project`, handed in by the command (cli/probe.py), which imports both: the
probe sits beside the audit rather than above it."""


def run_member_probe(
    options: ProbeOptions, say: Callable[[str], None], trust: TrustContext, audit: Audit
) -> ProbeReport:
    """A FeatcheckError (one line) when nothing of the member has a program, or on any failure.

    The probe has no --trust-checkout (it never runs the checkout's toolchain), so an error's
    advice to pass it becomes RUSTUP_TOOLCHAIN, which the probe honours."""
    try:
        return _run(options, say, trust, audit)
    except FeatcheckError as error:
        message = error.message
        if "--trust-checkout" not in message:
            raise
        message = _TRUST_HINT.sub(TOOLCHAIN_HINT, message)
        message = message.replace("--trust-checkout", "RUSTUP_TOOLCHAIN=<an installed toolchain>")
        raise FeatcheckError(
            message, path=error.path, line=error.line, column=error.column
        ) from None


def _run(
    options: ProbeOptions, say: Callable[[str], None], trust: TrustContext, audit: Audit
) -> ProbeReport:
    started = time.monotonic()
    if options.n < 1:
        raise FeatcheckError(f"--n {options.n}: expected a positive integer")
    manifest = find_manifest(options.path)
    read_manifest(manifest, root=trust.root)  # a bad Cargo.toml is refused before cargo runs
    # The builder first (cargo, rustc and a linker found): no point resolving what cannot be
    # built. Its runner only picks the toolchain and environment, and is not offline: a
    # registry the checkout defines is refused there even under --offline.
    timeout = max(3600.0, options.timeout)  # for one probe build: an hour, at least --timeout
    builder = ProbeBuilder(
        CargoRunner(manifest.parent, trust=trust, timeout=timeout),
        offline=options.offline,
        timeout=timeout,
        say=say,
        on_command=options.on_command,
    )
    say("resolving the member's features with cargo (nothing of the checkout is built or run)")
    runner = CargoRunner(
        manifest.parent,
        trust=trust,
        offline=options.offline,
        timeout=options.timeout,
        on_command=options.on_command,
    )
    resolved = member_graph(runner, manifest, options.package)
    member = resolved.member.name
    say(f"auditing {member} for its findings and featcheck's fixes (cargo confirms them)")
    wanted = {code.upper() for code in options.codes} or {"ALL"}
    # A rule named runs even where it is opt-in (FC015's hint): it was asked for.
    findings = member_findings(audit, resolved, select=tuple(sorted(wanted - {"ALL"})))
    timed = timed_findings(findings, wanted)
    # The member links burn-flex (a copy only a proc-macro uses is not timed).
    flex = not options.codes and any(not n.host for n in resolved.graph.named(BACKEND))
    if not flex and not timed:
        raise FeatcheckError(_nothing_to_probe(resolved, options.codes, wanted))
    matmul = plan_matmul(builder, resolved, findings, options) if flex else None
    rules = _plan_rules(builder, resolved, timed)
    plans = [*(matmul.plans if matmul else ()), *(plan for rule in rules for plan in rule.plans)]
    confirm_build(plans, resolved, options.confirm, say)
    return ProbeReport(
        member,
        resolved.target,
        time_matmul(builder, matmul, options, started) if matmul else None,
        _time_rules(builder, timed, rules, options) if timed else None,
    )


def member_findings(
    audit: Audit, resolved: MemberGraph, *, select: tuple[str, ...] = ()
) -> list[Finding]:
    """The member's findings on the host, each with featcheck's fix where cargo confirms one
    (`select`: rules to run besides the configured ones, e.g. an opt-in rule asked for)."""
    result = audit(
        resolved.manifest,
        AuditOptions(
            select=select,
            packages=(resolved.member.name,),
            targets=(resolved.target,),
            offline=resolved.runner.offline,
            timeout=resolved.runner.timeout,
            on_command=resolved.runner.on_command,
        ),
        resolved.runner.trust,
    )
    return [f for f in result.findings if f.member == resolved.member.name]


def timed_findings(findings: list[Finding], codes: set[str]) -> list[Finding]:
    return [
        f
        for f in findings
        if ("ALL" in codes or f.code in codes)
        and program_timing(f.crate, f.crate_version, f.feature) is not None
    ]


def _nothing_to_probe(resolved: MemberGraph, codes: tuple[str, ...], wanted: set[str]) -> str:
    member, target = resolved.member.name, resolved.target
    timed_crates = ", ".join(sorted(p.describe() for p in PROGRAMS.values()))
    if not codes:
        return (
            f"nothing to probe: {member} does not build {BACKEND} (burn's CPU backend Flex) "
            f"for {target} and has no finding whose crate the probe can time ({timed_crates})"
        )
    asked = "any rule with a probe" if "ALL" in wanted else ", ".join(sorted(wanted))
    return (
        f"nothing to probe: {member} has no finding of {asked} on {target} whose crate the "
        f"probe can time ({timed_crates})"
    )


def _plan_rules(
    builder: ProbeBuilder, resolved: MemberGraph, findings: list[Finding]
) -> list[Planned]:
    configured = [rule_configurations(resolved, finding) for finding in findings]
    planned = []
    for finding, (current, fixed, fix) in zip(findings, configured, strict=True):
        program = program_timing(finding.crate, finding.crate_version, finding.feature)
        assert program is not None  # timed_findings keeps only findings with a program
        planned.append(Planned(program, [builder.plan(c, program) for c in (current, fixed)], fix))
    return planned


def _time_rules(
    builder: ProbeBuilder,
    findings: list[Finding],
    planned: list[Planned],
    options: ProbeOptions,
) -> list[RuleProbeResult]:
    """Build what is planned (consent given), and run both builds of each finding in turn."""
    results = []
    for finding, rule in zip(findings, planned, strict=True):
        current, fixed = (builder.build(plan) for plan in rule.plans)
        builder.say(
            f"timing {finding.crate} {finding.crate_version}: {rule.program.work}, "
            f"{plural(RULE_RUNS, 'run')}"
        )
        workloads, agree = compare_builds(
            [current.binary, fixed.binary], timeout=options.timeout, trust=builder.trust
        )
        result = RuleProbeResult(finding, rule.program, current, fixed, rule.fix, workloads, agree)
        results.append(result)
    return results


def rule_configurations(
    resolved: MemberGraph, finding: Finding
) -> tuple[BackendConfig, BackendConfig, str]:
    """The crate as the member builds it, and as featcheck's fix builds it (or, without a
    confirmed fix, with the rule's feature added)."""
    pins = pins_for(resolved.graph, finding.crate, finding.crate_version)
    now = pins[0]
    current = resolved.config(pins)
    if finding.fix is not None and finding.fix.safe:
        after = graph_with_changes(resolved, plan_changes([finding]))
        pinned = pins_for(after.graph, finding.crate, finding.crate_version)
        fixed = after.config(pinned, label="with featcheck's fix")
        return current, fixed, f"featcheck's fix: {fix_words(finding.fix)}"
    # No confirmed fix (and none for a feature that costs when on): the feature itself.
    feature = finding.feature
    if feature in now.features:
        # `default` (or any feature) that turns it on would bring it back: they go with it.
        package = resolved.metadata.find(finding.crate, finding.crate_version)
        table = package.features if package is not None else {}
        features = set(now.features) - enabling_features(table, feature)
        label, fix = f"without `{feature}`", f"`{feature}` turned off"
    else:
        features = set(now.features) | {feature}
        label, fix = f"with `{feature}`", f"`{feature}` added; featcheck has no confirmed fix"
    changed = Pin(now.name, now.version, tuple(sorted(features)))
    return current, replace(current, pins=(changed, *pins[1:]), label=label), fix


def confirm_build(
    plans: list[BuildPlan],
    resolved: MemberGraph,
    confirm: Callable[[str], bool] | None,
    say: Callable[[str], None],
) -> None:
    """State what the builds to come compile and run, and ask before compiling anything
    (`confirm` None: --yes)."""
    to_build = [plan for plan in plans if not plan.cached]
    if not to_build:
        return
    # The builds copy the checkout's Cargo.lock where it has one.
    locked = resolved.lockfile is not None
    versions = "the checkout's Cargo.lock pins" if locked else "cargo resolves now"
    try:  # the 1-minute load average: runnable work that competes with the build
        load: float | None = os.getloadavg()[0]
    except (AttributeError, OSError):
        load = None
    statement = build_statement(to_build, resolved.member.name, versions, load=load)
    say(statement)
    if confirm is not None and not confirm(statement):
        raise FeatcheckError("nothing was built: the probe's build was not confirmed")
