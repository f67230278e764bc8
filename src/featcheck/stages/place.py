"""The fifth stage: each detection located in the manifests, with its fix (confirmed in
memory, and by cargo where it adds packages) and its why chain (placement.py).

A deferred detection (`rules.detect`: FC003's `simd` waits for FC001's `rayon`) that another
detection of the same build covers is placed without a fix search: the last stage drops it
unless that other finding is suppressed, and only then is it placed again with its fix
(`Placed.unsearched`, pipeline.py). It was half of the searches of a workspace whose members
lack `rayon`, for findings no report shows.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from featcheck.cargo.runner import CargoRunner
from featcheck.explain import Explainer
from featcheck.featureset import FeatureSelection
from featcheck.fixes.reach import BuildCrate, backends_of
from featcheck.fixes.search import FixSearch, StillFlagged
from featcheck.graph import DependencyGraph, closure
from featcheck.locate import Locator
from featcheck.matrix import ConfigurationPlan
from featcheck.placement import Cover, FindingPlacer, Flagged, cover_keys
from featcheck.report import Finding
from featcheck.resolution.record import FeatureSearch
from featcheck.rules import BuildView, Rule, skipped_for_target
from featcheck.rules.detect import flagged_feature, flags
from featcheck.rules.spec import Kind
from featcheck.stages.members import Resolved, Run, Scope, metadata_asked
from featcheck.workspace.cargo_metadata import merged_metadata
from featcheck.workspace.model import Package, PackageRef, same_crate
from featcheck.workspace.workspace import Workspace

if TYPE_CHECKING:
    from featcheck.cargo.pending_metadata import MetadataSource
    from featcheck.featureset import AuditOptions
    from featcheck.fixes.counterfactual import WhatIf
    from featcheck.fixes.overlay import OverlayCheck
    from featcheck.graph import Node
    from featcheck.semantics.cfg import TargetCfg


class Placed(NamedTuple):
    findings: list[Finding]
    unsearched: list[Finding]
    """The deferred findings among them placed without a fix search (see the module's text)."""


def place(
    run: Run,
    scope: Scope,
    plan: ConfigurationPlan,
    resolved: Resolved,
    flagged: list[Flagged],
    root: Path,
    *,
    lazy: bool = True,
) -> Placed:
    """A finding for each detection, in the same order, but those a library leaves to its
    users on purpose (`offered_by_library`); locations relative to `root`. `lazy`: covered
    deferred detections get no fix search."""
    options, (what_if, _) = run.options, resolved
    locator = Locator(scope.metadata, root, run.manifests)
    search = FeatureSearch(what_if.index, what_if.resolver != 1, what_if.host, what_if.locked)
    flagged, left_to_users = _left_apart(scope, search, what_if, flagged)
    still_flagged = _still_flagged(scope, what_if, search)
    overlay = _overlay(run, scope, what_if, still_flagged)
    explainer = _explainer(scope, plan, resolved, search, locator)
    audited = frozenset(m.id for m in scope.members)
    placer = FindingPlacer(
        locator,
        explainer,
        FixSearch(
            scope.metadata,
            locator,
            what_if,
            search,
            explainer.configured,
            still_flagged,
            cargo_checks_new_packages=options.check_new_packages and not options.no_exec,
            backends=backends_of(r for rules in scope.rules_of.values() for r in rules),
            with_alternatives=options.search_alternatives,
            audited=audited if len(audited) < len(scope.metadata.members) else frozenset(),
            left_to_users=left_to_users,
            no_std=lambda m, t, s: scope.built_no_std(m, s, what_if.cfgs[t]),
        ),
        overlay,
        confirm=options.confirm_fixes and not options.no_exec,
        search_fixes=options.search_fixes,
        notes=tuple(filter(None, [scope.unification.finding_note])),
        configured_severity=lambda member, code: scope.config.for_member(member).severity.get(code),
        deadline=run.deadline,
        covers=_covers(flagged) if lazy else frozenset(),
    )
    findings = placer.place_all(flagged)
    unsearched = [
        finding
        for item, finding in zip(flagged, findings, strict=True)
        if cover_keys(item) & placer.skipped
    ]
    return Placed(findings, unsearched)


def _explainer(
    scope: Scope,
    plan: ConfigurationPlan,
    resolved: Resolved,
    search: FeatureSearch,
    locator: Locator,
) -> Explainer:
    what_if, builds = resolved
    # The chain compares members' builds: each member's base configuration stands for it.
    base_builds = {
        (m.id, t): builds[(m.id, t, plan.selections[m.id][0])].graph
        for m in scope.members
        for t in scope.targets
        if plan.selections[m.id]
    }
    every_build = {key: build.graph for key, build in builds.items()}
    record = functools.cache(what_if.record)  # made once per build asked (few)
    return Explainer(
        scope.metadata, search, locator, base_builds, every_build, record, what_if.resolver == 1
    )


def copy_source(
    source: MetadataSource, copy: Path, options: AuditOptions, tree: Path | None = None
) -> MetadataSource:
    """cargo for a copy of the audited tree (a fix it confirms): the run's trust context
    derived for the copy (`tree`, which holds it and the path packages beside it), never one
    computed from its path, and the audit's own cargo, toolchain and configuration where cargo
    answered the audit. Not `--locked`: the copy's lockfile must change, which is what cargo
    is asked about."""
    return CargoRunner(
        copy,
        trust=source.trust.derive(tree or copy),
        offline=options.offline,
        timeout=options.timeout,
        on_command=options.on_command,
        setup=source.prepared_setup() if isinstance(source, CargoRunner) else None,
    )


def _overlay(
    run: Run, scope: Scope, what_if: WhatIf, still_flagged: StillFlagged
) -> Callable[[], OverlayCheck] | None:
    """cargo's check of the fixes that add packages, where cargo may run and is asked to: on
    cargo's metadata of a temporary copy of the workspace, with the audit's features (made,
    its module loaded, once a fix waits for it)."""
    options = run.options
    if options.no_exec or not options.check_new_packages:
        return None

    def metadata_of(copy_manifest: Path, tree: Path) -> Workspace:
        copy_runner = copy_source(run.source, copy_manifest.parent, options, tree)
        answers = [metadata_asked(copy_runner, copy_manifest, asked) for asked in scope.asked]
        return merged_metadata(answers)

    def check() -> OverlayCheck:
        from featcheck.fixes.overlay import OverlayCheck

        # With the path dependencies they declare: cargo reads an optional one the audited
        # builds leave out (so their metadata lacks it) as it loads the workspace.
        packages = scope.metadata.path_packages()
        declared = (Path(d.path) for p in packages for d in p.declarations if d.path)
        local = tuple({*(p.manifest_path.parent for p in packages), *declared})
        checkout = run.source.trust.checkout
        return OverlayCheck(
            scope.metadata.root, metadata_of, what_if, still_flagged, local, checkout
        )

    return check


def _covers(flagged: Sequence[Flagged]) -> frozenset[Cover]:
    """What each detection that is not deferred covers: its feature of its package in its build."""
    return frozenset(
        (item.member.id, item.target, item.selection, item.detection.node.package, feature)
        for item in flagged
        if item.rule.kind is Kind.MISSING and not item.detection.deferred_to
        for feature in (item.detection.feature,)
        if feature
    )


def offered_by_library(scope: Scope, search: FeatureSearch, what_if: WhatIf, item: Flagged) -> bool:
    """Whether the member is a library that offers the missing feature through a feature of
    its own that is off and only passes features on (`std = ["memchr/std"]`): it leaves the
    choice to its users on purpose (no_std ones), and a user that builds it is audited as a
    member of its own, where the chain names that feature. A feature that brings packages the
    build lacks is no such offer: rerun's re_server has a `lance` feature, whose database
    stack happens to turn matrixmultiply's threading on, and its build stays single-threaded."""
    detection = item.detection
    if item.rule.kind is not Kind.MISSING or not detection.feature:
        return False
    goal = scope.metadata.package_of(detection.node.package)
    if goal is None or not item.library:
        return False
    offered = _left_off(search, item.member, item.view.roots[0], goal, detection.feature, item.cfg)
    return any(_passes_on(what_if, item, f) for f in offered)


def _left_off(
    search: FeatureSearch, library: Package, root: Node, goal: Package, feature: str, cfg: TargetCfg
) -> list[str]:
    """The library's own features that would turn `feature` of `goal` on and that its build
    (at `root`) leaves off. Only such a feature is an offer: `default` is on (or the user
    turned it off), and one that is on reaches the feature only through a dependency that
    is not."""
    on = root.features | {"default"}
    return [f for f in search.enabling_features(library, goal, feature, cfg) if f not in on]


def _offers(
    scope: Scope,
    search: FeatureSearch,
    root: Node,
    package: PackageRef,
    lacking: set[str | None],
    cfg: TargetCfg,
) -> bool:
    """Whether the library at `root` offers one of the `lacking` features of `package`
    (`offered_by_library`, asked of a member a `-p` run does not audit, whose build it does
    not resolve with that feature)."""
    library = scope.metadata.package_of(root.package)
    goal = scope.metadata.package_of(package)
    if library is None or goal is None or not library.is_library_only(root.features):
        return False
    return any(_left_off(search, library, root, goal, f, cfg) for f in lacking if f)


def _left_apart(
    scope: Scope, search: FeatureSearch, what_if: WhatIf, flagged: list[Flagged]
) -> tuple[list[Flagged], dict[BuildCrate, frozenset[str]]]:
    """The detections but those a library leaves to its users (`offered_by_library`), and their
    features by build and crate: a fix for another finding of the crate need not deliver them
    (burn leaves burn-cpu's `autotune` to its users, and FC004's `fusion` alone was no fix)."""
    kept: list[Flagged] = []
    left: dict[BuildCrate, frozenset[str]] = {}
    for item in flagged:
        if not offered_by_library(scope, search, what_if, item):
            kept.append(item)
            continue
        key = (item.member.id, item.target, item.selection, item.detection.node.package)
        left[key] = left.get(key, frozenset()) | {item.detection.feature}
    return kept, left


def _passes_on(what_if: WhatIf, item: Flagged, feature: str) -> bool:
    """Whether the member's build with `feature` turned on too builds nothing but the crate's
    own dependencies (matrixmultiply's `threading` brings its thread pool). Whether the audit's
    metadata holds those (`--all-features`) or not (they are needs then), the verdict is one."""
    selection = item.selection
    with_it = FeatureSelection.of(
        (*selection.features, feature), no_default=selection.no_default_features
    )
    position = what_if.index.by_id[item.member.id]
    graph = what_if.graph(frozenset(), position, item.target, with_it)
    crate = item.detection.node.package
    nodes = closure([n for n in graph.named(crate.name) if n.package == crate], graph.dependencies)
    below = {node.package for node in nodes}
    packages = what_if.index.packages
    return graph.packages() <= item.view.graph.packages() | below and all(
        packages[need.package].ref in below for need in what_if.needs(graph)
    )


def _still_flagged(scope: Scope, model: WhatIf, search: FeatureSearch) -> StillFlagged:
    @functools.cache
    def rules_of(member: str, crate: str) -> list[Rule]:
        """The member's rules for a missing feature of the crate: asked for every candidate of
        every finding. Not those for a crate or feature that costs when on (FC024's "burn-ndarray
        is in the build"): a fix only adds features, and one stays as it was."""
        found = scope.rules_of[member]
        return [
            rule
            for rule in found
            if rule.kind is Kind.MISSING and any(same_crate(c.name, crate) for c in rule.crates)
        ]

    def still_flagged(
        member: Package,
        target: str,
        graph: DependencyGraph,
        package: PackageRef,
        excused: frozenset[str],
    ) -> bool:
        """Whether the member's rules for `package`'s crate still flag it in a build with a
        fix made, for a feature other than the `excused` ones."""
        rules = rules_of(member.id, package.name)
        # Most candidates clear the finding: a look at the package's own nodes says so without
        # the rules. By name: a candidate's graph shares its index of names with the graph below
        # its member, which every candidate drawn on it looks up (`DependencyGraph.rooted`).
        nodes = [n for n in graph.named(package.name) if n.package == package]
        lacking = {flagged_feature(rule, node) for rule in rules for node in nodes} - {None}
        if lacking <= excused:
            return False
        root, cfg = next(graph.nodes()), model.cfgs[target]
        if root.package != member.ref and _offers(scope, search, root, package, lacking, cfg):
            return False  # another member's build (`-p`): a library leaving it to its users
        view = BuildView(graph, (root,), target=target, cfg=cfg)
        return any(
            flags(rule, view, package, excused)
            for rule in rules
            if skipped_for_target(rule, view) is None
        )

    return still_flagged
