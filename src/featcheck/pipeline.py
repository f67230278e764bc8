"""The audit's stages after cargo answered: configuration, resolution, rules, placement,
suppressions (manifest -> resolution -> rules -> findings)."""

from __future__ import annotations

import os
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from featcheck.allow_names import KnownNames
from featcheck.cargo.cfg import TargetCfg
from featcheck.cargo.metadata import PackageInfo, WorkspaceMetadata
from featcheck.cargo.runner import CargoRunner
from featcheck.cargo.tree_text import ParsedTree, TreeTextError, parse_tree_text
from featcheck.config import load_config, members_with_settings
from featcheck.deadline import Deadline
from featcheck.errors import FeatcheckError
from featcheck.explain import Explainer
from featcheck.featureset import DEFAULT, FeatureSelection
from featcheck.fixes.counterfactual import WhatIf
from featcheck.fixes.lockcheck import LockView
from featcheck.fixes.overlay import OverlayCheck
from featcheck.fixes.search import FixSearch, backends_of
from featcheck.graph import DependencyGraph, PackageRef
from featcheck.locate import Locator, ManifestCache
from featcheck.matrix import (
    ConfigurationPlan,
    audits_itself,
    merge_configurations,
    plan_configurations,
)
from featcheck.names import same_crate
from featcheck.noexec.gaps import Completeness, gap_notes
from featcheck.options import AuditOptions, Resolver, beyond_defaults, report_root
from featcheck.placement import FindingPlacer, Flagged
from featcheck.report import AuditResult, Finding, Location, TargetSkip
from featcheck.resolution import (
    FeatureSelectionError,
    PackageIndex,
    build_index,
    resolve_configurations,
    resolver_version,
    target_cfgs,
)
from featcheck.rules import BuildView, Rule, detect, skipped_for_target
from featcheck.severity import Confidence, FailOn
from featcheck.suggest import FeatureSearch
from featcheck.suppress import apply_suppressions, declaration_spans


def audit_workspace(
    manifest: Path,
    options: AuditOptions,
    runner: CargoRunner,
    metadata: WorkspaceMetadata,
    manifests: ManifestCache,
    *,
    all_features: bool,
) -> AuditResult:
    """The audit of the members `manifest` selects, from cargo's metadata (asked with
    `all_features` or not); `runner` answers the questions that come up on the way. The work
    after cargo's answer is bounded by `options.timeout` as a whole (deadline.py)."""
    deadline = Deadline(options.timeout)
    config = load_config(
        metadata.root,
        members_with_settings(metadata),
        read_document=manifests.get,
        checkout=manifests.checkout,
    )
    members = _select_members(metadata, manifest, options.packages)
    # A lone member's own [package.metadata.featcheck] counts as the project's settings.
    settings = config.for_member(members[0].name) if len(members) == 1 else config
    requested = options.configurations or settings.configurations
    each_feature = options.each_feature or settings.each_feature
    targets = list(options.targets or settings.targets) or [runner.host_triple()]
    resolver = _resolver_of(manifests, metadata)
    root_id = (metadata.raw.get("resolve") or {}).get("root")
    rules_of = {
        m.id: config.for_member(m.name).rules(options.select, options.ignore) for m in members
    }
    plan = plan_configurations(
        [metadata.packages.document(m.id) for m in members],
        requested,
        each=each_feature,
        legacy_root=root_id if resolver == 1 else None,
        self_audited=frozenset(m.id for m in members if audits_itself(m.name, rules_of[m.id])),
        deadline=deadline,
    )
    extra = plan.dependency_features()
    if extra or (not all_features and beyond_defaults(requested, each_feature)):
        # Plain `cargo metadata` leaves out the optional dependencies nothing enables by
        # default, and `--all-features` those that only a `dependency/feature` value enables:
        # ask again with both (the values were matched against the members already).
        metadata = runner.metadata(manifest, all_features=True, features=extra)
        members = _select_members(metadata, manifest, options.packages)
    model = _ResolverModel.of(runner, metadata, targets, resolver)
    builds = (
        _resolve_builds(runner, manifest, members, targets, plan)
        if options.resolver is Resolver.CARGO
        else _resolve_in_process(model, plan, deadline)
    )
    root = report_root(manifest.parent, options.root)
    result = AuditResult(
        root,
        audited=manifest.parent,
        workspace_root=metadata.root,
        local_manifests=tuple(p.manifest_path for p in metadata.unpublished()),
        members=[m.name for m in members],
        targets=targets,
        fail_on=None if settings.fail_on is None else FailOn(settings.fail_on),
        user_rules=config.catalogue.user_rules,
        configuration_errors=plan.errors,
        configurations={m.name: list(plan.selections[m.id]) for m in members},
    )
    # The chain compares members' builds: each member's base configuration stands for it.
    base_builds = {
        (m.id, t): builds[(m.id, t, plan.selections[m.id][0])].graph
        for m in members
        for t in targets
        if plan.selections[m.id]
    }
    result.no_verdict = _nothing_audited(plan, rules_of)
    # What packages --no-exec could not read may change, build by build (nothing otherwise).
    completeness = Completeness(metadata, resolver)
    skips = _SkipLog()
    flagged: list[Flagged] = []
    uncertain: set[int] = set()
    # A detection another configuration of the member already flagged is placed once; the
    # finding lists every configuration it occurs in.
    first: dict[tuple[Any, ...], int] = {}
    also_in: dict[int, list[FeatureSelection]] = {}
    for member in members:
        member_rules = rules_of[member.id]
        for selection in plan.selections[member.id]:
            deadline.check("running the rules over each build")
            for target in targets:
                parsed = builds[(member.id, target, selection)]
                cfg = runner.target_cfg(target)
                view = BuildView(parsed.graph, (parsed.roots[0],), target=target, cfg=cfg)
                reach = completeness.reach(parsed.graph, member, target, member_rules)
                if reach.gap is not None and reach.gap not in result.incomplete:
                    result.incomplete.append(reach.gap)
                for rule in member_rules:
                    detections = detect(rule, view)
                    reason = skipped_for_target(rule, view)
                    if reason is not None:
                        skips.add(rule, target, reason, member.name, len(detections))
                        continue
                    for detection in detections:
                        if reach.hides(detection.node):
                            continue  # its manifest was not read: nothing is known of it
                        key = (member.id, target, rule.code, detection.node, detection.feature)
                        if key in first:
                            also_in.setdefault(first[key], []).append(selection)
                            continue
                        first[key] = len(flagged)
                        if reach.is_uncertain(detection.node):
                            uncertain.add(len(flagged))
                        flagged.append(Flagged(rule, detection, member, view, cfg, selection))
    result.skipped = skips.entries()
    locator = Locator(metadata, root, manifests)
    search = FeatureSearch(model.index)

    def still_flagged(
        member: PackageInfo, target: str, graph: DependencyGraph, package: PackageRef
    ) -> bool:
        """Whether the member's rules for `package`'s crate still flag it in a build with a
        fix made."""
        view = BuildView(graph, (next(graph.nodes()),), target=target, cfg=model.cfgs[target])
        return any(
            d.node.package == package
            for rule in rules_of[member.id]
            if any(same_crate(c.name, package.name) for c in rule.crates)
            and skipped_for_target(rule, view) is None
            for d in detect(rule, view)
        )

    def metadata_of(copy_manifest: Path) -> WorkspaceMetadata:
        # The copy's lockfile must change: that is what the check is for.
        copy_runner = CargoRunner(
            copy_manifest.parent,
            offline=options.offline,
            timeout=options.timeout,
            on_command=options.on_command,
            trust_checkout=options.trust_checkout,
        )
        return copy_runner.metadata(copy_manifest, all_features=True, features=extra)

    graphs = {key: build.graph for key, build in builds.items()}
    overlay = (
        None
        if options.no_exec or not options.check_new_packages
        else OverlayCheck(
            metadata.root, metadata_of, model.cfgs, model.host, model.resolver, still_flagged
        )
    )
    placer = FindingPlacer(
        locator,
        Explainer(metadata, search, locator, base_builds, sides_unify=model.resolver == 1),
        FixSearch(
            metadata,
            locator,
            search,
            model.what_if(deadline),
            graphs,
            still_flagged,
            cargo_checks_new_packages=options.check_new_packages and not options.no_exec,
            backends=backends_of(r for rules in rules_of.values() for r in rules),
        ),
        overlay,
        confirm=options.confirm_fixes and not options.no_exec,
    )
    try:
        placed = placer.place_all(flagged)
    finally:
        if overlay is not None:
            overlay.close()
    result.findings = [
        replace(
            finding,
            confidence=Confidence.INCOMPLETE if position in uncertain else finding.confidence,
            configurations=(*finding.configurations, *also_in.get(position, ())),
        )
        for position, finding in enumerate(placed)
    ]
    # Nothing audited (every configuration refused): no suppression could have matched.
    ran = set() if result.no_verdict else {r.code for rules in rules_of.values() for r in rules}
    suppression = apply_suppressions(
        merge_configurations(result.findings),
        config,
        root,
        [metadata.root / "Cargo.toml", *(m.manifest_path for m in members)],
        members=result.members,
        targets=targets,
        rules=ran,
        read=manifests.get,
        read_text=manifests.text,
        spans=_suppression_places,
        misnamed=KnownNames(
            metadata, targets, None if options.no_exec else runner.target_cfg
        ).misnamed,
    )
    result.findings = sorted(suppression.findings, key=finding_order)
    result.suppressed = suppression.suppressed_counts()
    unread_note = completeness.unread_note()
    if unread_note is not None and not result.incomplete:
        result.notes.append(unread_note)
    if result.incomplete:
        result.notes.extend(gap_notes(result.incomplete))
        # A suppression may look unused only because the build was not seen whole.
        result.findings = [
            replace(f, confidence=Confidence.INCOMPLETE) if f.code == "FC900" else f
            for f in result.findings
        ]
    return result


def _nothing_audited(plan: ConfigurationPlan, rules_of: dict[str, tuple[Rule, ...]]) -> list[str]:
    """Why nothing was audited, if so: "no findings" must not stand for a run that looked at
    no build (every configuration refused, e.g. `-F nope`) or ran no rule."""
    if not any(plan.selections.values()):
        return ["no build configuration could be audited"]
    if not any(rules_of.values()):
        return ["no rule was run"]
    return []


def _select_members(
    metadata: WorkspaceMetadata, manifest: Path, packages: tuple[str, ...]
) -> list[PackageInfo]:
    members = list(metadata.members)
    if manifest.resolve() != (metadata.root / "Cargo.toml").resolve():
        # A package inside a workspace: audit that member, with the workspace's lockfile.
        members = [m for m in members if m.manifest_path.resolve() == manifest.resolve()]
    if packages:
        chosen = [_member_named(metadata.members, p) for p in packages]
        unknown = [p for p, m in zip(packages, chosen, strict=True) if m is None]
        if unknown:
            names = sorted(m.name for m in metadata.members)
            raise FeatcheckError(
                f"no workspace member named {', '.join(unknown)} (members: {', '.join(names)})"
            )
        members = [m for m in metadata.members if m in chosen]
    if not members:
        raise FeatcheckError("no workspace member to audit here", path=manifest)
    return members


def _member_named(members: Sequence[PackageInfo], name: str) -> PackageInfo | None:
    """The member `-p name` means: the one cargo calls `name`, else the one crates.io would
    (`-p my_app` for `my-app`, which plain cargo refuses with a hint)."""
    exact = next((m for m in members if m.name == name), None)
    return exact or next((m for m in members if same_crate(name, m.name)), None)


def _resolver_of(manifests: ManifestCache, metadata: WorkspaceMetadata) -> int:
    return resolver_version(manifests.get(metadata.root / "Cargo.toml").data)


class _SkipLog:
    """Findings a rule would have made on targets it does not apply to, once per rule and
    target (several members share one line)."""

    def __init__(self) -> None:
        self._seen: dict[tuple[str, str], TargetSkip] = {}

    def add(self, rule: Rule, target: str, reason: str, member: str, findings: int) -> None:
        if findings == 0:
            return
        key = (rule.code, target)
        known = self._seen.get(key)
        members = (*known.members, member) if known else (member,)
        count = (known.findings if known else 0) + findings
        self._seen[key] = TargetSkip(rule.code, rule.name, target, reason, members, count)

    def entries(self) -> list[TargetSkip]:
        return [self._seen[key] for key in sorted(self._seen)]


def _suppression_places(finding: Finding) -> tuple[Location, ...]:
    """Lines where an inline `# featcheck: allow` counts for `finding`: the edited declaration,
    the `workspace = true` line inheriting it, and the member's own declarations on the way."""
    inherited = (finding.inherited_by,) if finding.inherited_by is not None else ()
    return (*declaration_spans(finding), *inherited, *finding.member_declarations)


@dataclass(frozen=True)
class _ResolverModel:
    """What featcheck's resolver works on: the indexed metadata and each target's cfg."""

    metadata: WorkspaceMetadata
    index: PackageIndex
    cfgs: dict[str, TargetCfg]
    host: TargetCfg
    resolver: int

    @classmethod
    def of(
        cls, runner: CargoRunner, metadata: WorkspaceMetadata, targets: list[str], resolver: int
    ) -> _ResolverModel:
        cfgs, host = target_cfgs(runner, targets)
        index = metadata.index or build_index(metadata.raw)
        return cls(metadata, index, {cfg.triple: cfg for cfg in cfgs}, host, resolver)

    @property
    def current(self) -> int | None:
        """The package cargo runs for (metadata's `resolve.root`), as `resolve_builds` takes it."""
        root = (self.metadata.raw.get("resolve") or {}).get("root")
        return self.index.by_id.get(root) if root is not None else None

    def what_if(self, deadline: Deadline) -> WhatIf:
        """Counterfactual resolution over this model, within `deadline`, binding what an edit
        turns on to the versions Cargo.lock holds."""
        lock = LockView(self.metadata, self.index)
        return WhatIf(self.index, self.cfgs, self.host, self.resolver, self.current, lock, deadline)


BuildKey = tuple[str, str, FeatureSelection]
"""(member package id, target triple, feature selection)."""


def _resolve_in_process(
    model: _ResolverModel, plan: ConfigurationPlan, deadline: Deadline
) -> dict[BuildKey, ParsedTree]:
    """What cargo builds for each (member, target, configuration), by featcheck's own resolver
    over the one metadata; a configuration that does not resolve is dropped from `plan`."""
    errors: dict[tuple[str, FeatureSelection], FeatureSelectionError] = {}
    graphs = resolve_configurations(
        model.metadata.raw,
        plan.distinct_jobs(),
        list(model.cfgs.values()),
        model.resolver,
        host=model.host,
        errors=errors,
        index=model.index,
        deadline=deadline,
    )
    for (member, selection), error in errors.items():
        plan.refuse(member, selection, str(error))
    builds: dict[BuildKey, ParsedTree] = {}
    for key, graph in graphs.items():
        member_node = next(graph.nodes())  # the member comes first, as in cargo tree's output
        builds[key] = ParsedTree(graph, False, True, False, [member_node])
    plan.share(builds)
    return builds


def _resolve_builds(
    runner: CargoRunner,
    manifest: Path,
    members: list[PackageInfo],
    targets: list[str],
    plan: ConfigurationPlan,
) -> dict[BuildKey, ParsedTree]:
    """What cargo builds for each (member, target, configuration), asked of cargo itself
    (`--resolver cargo`): one `cargo tree` each, run in parallel. A configuration cargo
    refuses is dropped from `plan`; with the default features, a refusal stops the audit."""
    by_id = {m.id: m for m in members}
    jobs = [(by_id[m], t, s) for m, s in plan.distinct_jobs() for t in targets]

    def tree(job: tuple[PackageInfo, str, FeatureSelection]) -> str | FeatcheckError:
        member, target, selection = job
        try:
            return runner.tree(manifest, member.id, target, features=selection)
        except FeatcheckError as error:
            if selection.is_default:
                raise
            return error

    workers = max(1, min(len(jobs), os.cpu_count() or 1))
    with ThreadPoolExecutor(max_workers=workers) as pool:
        trees = list(pool.map(tree, jobs))
    builds: dict[BuildKey, ParsedTree] = {}
    for (member, target, selection), text in zip(jobs, trees, strict=True):
        if isinstance(text, FeatcheckError):
            if selection in plan.selections[member.id]:
                plan.refuse(member.id, selection, text.message)
            continue
        try:
            builds[(member.id, target, selection)] = parse_tree_text(text)
        except TreeTextError as error:
            raise FeatcheckError(
                f"could not read cargo tree output for {member.name}: {error}"
            ) from None
    plan.share(builds)
    return builds


def finding_order(finding: Finding) -> tuple[Any, ...]:
    return (
        finding.member or "",
        finding.configuration or DEFAULT,  # the default build first
        finding.target or "",
        finding.code,
        finding.crate,
        finding.crate_version,
    )
