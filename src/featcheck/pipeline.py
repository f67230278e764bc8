"""A project's audit: cargo started (audit.py), then, with its answer, the pipeline of stages
(featcheck.stages): members -> configurations -> resolve -> detect -> place -> finish
(suppressions, notes, order)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from contextlib import AbstractContextManager, nullcontext, suppress
from dataclasses import dataclass, field, replace
from operator import attrgetter
from pathlib import Path

from featcheck import audit
from featcheck.audit import SourceFactory, Started, cargo_source, started_audit
from featcheck.boundary import TrustContext
from featcheck.cargo.failures import FeaturesRefused
from featcheck.cargo.pending_metadata import PendingMetadata
from featcheck.deadline import READING, READING_HINT, Deadline
from featcheck.errors import FeatcheckError
from featcheck.featureset import AuditOptions, FeatureSelection, without_std
from featcheck.graph import Node
from featcheck.locate import ManifestCache
from featcheck.manifest.document import ManifestDocument
from featcheck.matrix import ConfigurationPlan
from featcheck.noexec.gaps import Completeness
from featcheck.noexec.workspace import discover_workspace
from featcheck.placement import Flagged
from featcheck.refusal import located
from featcheck.report import AuditResult, BuildGap, Finding, TargetSkip
from featcheck.rules import (
    BuildView,
    Detection,
    Rule,
    builtin_rules,
    check_builtin_codes,
    detect,
    skipped_for_target,
)
from featcheck.rules.detect import covering_rules
from featcheck.rules.spec import Kind
from featcheck.severity import Confidence
from featcheck.stages.finish import finish, new_result, out_of_date, report_root, uncovered
from featcheck.stages.members import (
    Builds,
    Run,
    Scope,
    metadata_asked,
    plan_builds,
    resolve,
    scope_of,
    with_every_feature,
)
from featcheck.stages.place import Placed, place
from featcheck.workspace.cargo_metadata import parse_metadata
from featcheck.workspace.model import Package, PackageRef
from featcheck.workspace.workspace import Workspace


def audit_project(
    path: Path,
    options: AuditOptions,
    trust: TrustContext,
    *,
    meanwhile: Callable[[], object] | None = None,
) -> AuditResult:
    """`trust`: `TrustContext.of` the path the user named, or derived for a tree made from it.
    `meanwhile` runs while cargo works. (The command line starts cargo before it loads this:
    cli/lazy.py.)"""
    if options.select or options.ignore:
        check_builtin_codes(options.select, options.ignore)
    source_of: SourceFactory = cargo_source
    if options.no_exec:  # only --no-exec loads the registry and archive readers
        from featcheck.noexec.source import FileSource

        source_of = FileSource
    with started_audit(path, options, trust, source_of) as started:
        return audit_started(started, meanwhile)


def audit_started(started: Started, meanwhile: Callable[[], object] | None = None) -> AuditResult:
    """The audit once cargo is working on its metadata: what does not need the answer is done
    while it works (the manifest read, a broken one getting featcheck's one-line error, not
    cargo's; rustc asked for the targets' cfg; the members' manifests), then the rest.

    A `--no-exec` audit is all featcheck's own work, reading the checkout included: its
    budget runs from its start, and holds inside any one long call too (deadline.py)."""
    manifest, options, source, pending, all_features, lockfile = started
    deadline: Deadline | None = None
    bounding: AbstractContextManager[None] = nullcontext()
    if options.no_exec:
        from featcheck.noexec.source import FileSource  # loaded: the audit's source is one

        assert isinstance(source, FileSource)
        deadline = source.deadline
        bounding = deadline.bounding(READING, READING_HINT)
    with bounding:
        try:
            builtin_rules()  # the rule specs, read once per process
            manifests = ManifestCache(source.checkout)
            manifests.get(manifest)
            if meanwhile is not None:
                meanwhile()
            # Fill the source's caches of rustc answers; the real call raises any error.
            with suppress(FeatcheckError):
                for target in options.targets or source.default_targets():
                    source.target_cfg(target)
            if not options.no_exec:
                _read_members(manifest, manifests, pending)
            asked: FeatureSelection | None = FeatureSelection.of(all_features=all_features)
            try:
                metadata = pending.result(parse_metadata)
            except FeaturesRefused:
                # No build has every feature on (diffsol's exclude each other): the default
                # builds' metadata, and each build's asked for apart (`with_every_feature`).
                metadata, asked = metadata_asked(source, manifest, FeatureSelection()), None
            except FeatcheckError as error:
                raise located(error, manifest, manifests) from None
        finally:
            pending.cancel()
        if audit.KEPT_UNTIL_EXIT is not None:
            audit.KEPT_UNTIL_EXIT.append(metadata)
        try:
            result = audit_workspace(started, metadata, asked, manifests, deadline)
        finally:
            pending.settle()
        # Resolution in memory keeps Cargo.lock's versions; cargo rewrote a stale one first.
        return out_of_date(result) if lockfile is not None and lockfile.out_of_date() else result


def _read_members(manifest: Path, manifests: ManifestCache, pending: PendingMetadata) -> None:
    """While cargo works: the members' manifests read and indexed into the cache the audit
    reads once cargo answers; whatever cannot be read is left for that read, and cargo, to
    say. See docs/speed.md."""
    if pending.has_answered():  # cargo's kept answer: nothing to wait for
        return
    read: list[ManifestDocument] = []
    with suppress(FeatcheckError, OSError, ValueError):
        for member in discover_workspace(manifest, manifests.checkout).members:
            if pending.has_answered():
                return
            with suppress(FeatcheckError, OSError, ValueError):
                read.append(manifests.get(member / "Cargo.toml"))
    for document in read:
        if pending.has_answered():
            return
        with suppress(FeatcheckError, ValueError):
            _ = document.spans  # indexed now, while cargo works, not at the first `entry`
    for document in read:  # the crate roots where cargo finds them unless told otherwise
        for root in ("src/lib.rs", "src/main.rs"):
            if pending.has_answered():
                return
            manifests.no_std(document.path.parent / root)


def audit_workspace(
    started: Started,
    metadata: Workspace,
    asked: FeatureSelection | None,
    manifests: ManifestCache,
    deadline: Deadline | None,
) -> AuditResult:
    """Bounded by the options' timeout as a whole (deadline.py), or by `deadline` where it
    started earlier (`--no-exec`)."""
    options = started.options
    run = Run(
        started.manifest, options, started.source, manifests, deadline or Deadline(options.timeout)
    )
    scope = scope_of(run, metadata)
    plan = plan_builds(run, scope)
    scope = with_every_feature(run, scope, plan, asked=asked)
    resolved = resolve(run, scope, plan)
    root = report_root(run.manifest.parent, run.options.root)
    found = detect_all(run, scope, plan, resolved.builds)

    def finished_with(placed: Placed) -> AuditResult:
        result = new_result(run, scope, plan, root)
        result.skipped, result.incomplete = found.skipped, found.incomplete
        return finish(run, scope, result, placed.findings, found.unread_note)

    placed = place(run, scope, plan, resolved, found.flagged, root)
    finished = finished_with(placed)
    if uncovered(placed.unsearched, _reported(finished, placed)):
        # A finding that covered a deferred one is suppressed: that one stands, with its fix.
        finished = finished_with(place(run, scope, plan, resolved, found.flagged, root, lazy=False))
    if scope.unification.result_note is not None:
        # The unification the checkout asks for and cargo ignores, said once (each finding
        # already says the one the audit assumed: cargo/pending_metadata.py).
        finished.notes.append(scope.unification.result_note)
    return finished


def _reported(result: AuditResult, placed: Placed) -> list[Finding]:
    """The reported findings that were placed as findings not deferred (a deferred one that
    stood is reported too, and covers nothing)."""
    key = attrgetter("member", "target", "crate", "crate_version", "code", "feature")
    searched = {key(f) for f in placed.findings if not f.deferred_to}
    return [f for f in result.findings if key(f) in searched]


# The fourth stage: each member's rules over each of its builds, each detection kept once
# per member and target (the first configuration that shows it; the others are listed).


@dataclass
class Detections:
    flagged: list[Flagged] = field(default_factory=list)
    skipped: list[TargetSkip] = field(default_factory=list)
    incomplete: list[BuildGap] = field(default_factory=list)  # as `AuditResult.incomplete`
    unread_note: str | None = None


def detect_all(run: Run, scope: Scope, plan: ConfigurationPlan, builds: Builds) -> Detections:
    # What packages --no-exec could not read may change, build by build (nothing otherwise).
    completeness = Completeness(scope.metadata, scope.resolver)
    found = Detections()
    skips: dict[tuple[str, str, str], TargetSkip] = {}
    first: dict[tuple[str, str, str, Node, str, tuple[str, ...]], list[_Hops]] = {}
    # Whether a rule applies depends on the target and on whether the build is no_std alone:
    # asked once per rule, target and that, not for each of hundreds of members ("": not asked).
    skipped_on: dict[tuple[int, str, bool], str | None] = {}
    for member in scope.members:
        for selection in plan.selections[member.id]:
            for target in scope.targets:
                run.deadline.check("running the rules over each build")
                parsed, cfg = builds[(member.id, target, selection)], run.source.target_cfg(target)
                no_std = scope.built_no_std(member.id, selection, cfg)
                roots = (parsed.roots[0],)
                view = BuildView(parsed.graph, roots, target=target, cfg=cfg, no_std=no_std)
                reach = completeness.reach(parsed.graph, member, target, scope.rules_of[member.id])
                if reach.gap is not None and reach.gap not in found.incomplete:
                    found.incomplete.append(reach.gap)
                for rule in scope.rules_of[member.id]:
                    detections = detect(rule, view, deferring=True)
                    on_target = (id(rule), target, no_std)
                    if (reason := skipped_on.get(on_target, "")) == "":
                        reason = skipped_on[on_target] = skipped_for_target(rule, view)
                    if reason is not None:
                        standing = [d for d in detections if not d.deferred_to]
                        _log_skip(skips, rule, target, reason, member.name, len(standing))
                        continue
                    for detection in detections:
                        if detection.node.package in reach.unread_nodes:
                            continue  # its manifest was not read: nothing is known of it
                        if not _counts(scope, rule, member, selection, detection):
                            continue
                        if detection.deferred_to and _covered_here(scope, view, detection):
                            continue
                        # A detection another configuration already flagged is placed once.
                        node, feature = detection.node, detection.feature
                        key = (member.id, target, rule.code, node, feature, detection.deferred_to)
                        hops = _first_hops(view, node)
                        if (earlier := _sharing(first.get(key, ()), hops)) is not None:
                            earlier.also_in.append(selection)
                            continue
                        uncertain = node.package in reach.uncertain
                        confidence = Confidence.INCOMPLETE if uncertain else Confidence.RESOLVED
                        item = Flagged(
                            rule, detection, member, view, cfg, selection, confidence=confidence
                        )
                        first.setdefault(key, []).append((hops, item))
                        found.flagged.append(item)
    found.skipped = [skips[key] for key in sorted(skips)]
    found.unread_note = completeness.unread_note()
    return found


_Hops = tuple[set[PackageRef], Flagged]
"""The member's dependencies through which a flagged detection's builds reach its crate."""


def _first_hops(view: BuildView, node: Node) -> set[PackageRef]:
    graph, root = view.graph, view.roots[0]
    above = graph.ancestors(node)
    return {d.package for d in graph.dependencies(root) if d == node or d in above}


def _sharing(earlier: Iterable[_Hops], hops: set[PackageRef]) -> Flagged | None:
    """The earlier detection whose builds reach the crate through every dependency these builds
    reach it through, and maybe more: one placement serves both. Not one that reaches it through
    a dependency these builds lack: ockam_core's build with only `tracing-subscriber` has no
    optional `regex` line to edit, where its default build's finding is placed. (Builds placed
    apart that come out the same are one finding again: `matrix.merge_configurations`.)"""
    for through, flagged in earlier:
        if through <= hops:
            return flagged
    return None


def _counts(
    scope: Scope, rule: Rule, member: Package, selection: FeatureSelection, detection: Detection
) -> bool:
    """Whether a detection is a finding: not for a feature its crate's version lacks, nor for one
    needing std in a build without the member's std."""
    if not _defined(scope.metadata, detection):
        return False
    if rule.kind is not Kind.MISSING or not without_std(member, selection):
        return True
    return not _needs_std(scope, detection)


def _defined(metadata: Workspace, detection: Detection) -> bool:
    """Whether the crate's version has the feature its detection says is missing: regex 1.2
    has no `perf` (its lazy DFA needs no feature), memchr 2.0 calls `std` `use_std`; a version
    without the feature is no finding, and no fix could name it. A package featcheck could not
    read (`--no-exec`) counts as having it."""
    package = metadata.package_of(detection.node.package)
    if not detection.feature or package is None or package.id in metadata.unread:
        return True
    return detection.feature in package.features


def _needs_std(scope: Scope, detection: Detection) -> bool:
    """Whether the missing feature needs its crate's `std` (matrixmultiply's `threading`): no
    build without std can have it, and a fix giving it would force std on no_std users."""
    package = scope.metadata.package_of(detection.node.package)
    return package is not None and "std" in package.implied(detection.feature)


def _covered_here(scope: Scope, view: BuildView, deferred: Detection) -> bool:
    """Whether a deferred detection stays unreported as it always was: no rule speaks first
    for it (its `requires` only limit where the rule applies), or one that would does not
    apply to this target (FC001 on a target without threads: FC003 says nothing of `simd` on
    wasm either). Any rule of the catalogue counts, run or not, so that ignoring FC001 does not
    make FC003 speak where FC001 never would."""
    covering = covering_rules(scope.config.catalogue.rules, deferred)
    return not covering or any(skipped_for_target(rule, view) is not None for rule in covering)


def _log_skip(
    skips: dict[tuple[str, str, str], TargetSkip],
    rule: Rule,
    target: str,
    reason: str,
    member: str,
    findings: int,
) -> None:
    """Findings a rule would have made on a target (or a no_std build) it does not apply to,
    once per rule, target and reason (several members, each named once, share one line)."""
    if findings:
        key = (rule.code, target, reason)
        known = skips.get(key) or TargetSkip(rule.code, rule.name, target, reason, (), 0)
        members = known.members if member in known.members else (*known.members, member)
        count = known.findings + findings
        skips[key] = replace(known, members=members, findings=count)
