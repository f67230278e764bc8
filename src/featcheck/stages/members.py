"""The first three stages: the members an audit looks at, with their settings, rules and targets;
then the build configurations of each member (matrix.py), and cargo's metadata asked again when
they need more than it gave; then what cargo builds for each (below)."""

from __future__ import annotations

import os
from contextlib import suppress
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import NamedTuple

from featcheck.cargo.failures import FeaturesRefused
from featcheck.cargo.pending_metadata import PER_MEMBER, MetadataSource, Unification
from featcheck.cargo.tree_text import ParsedTree
from featcheck.deadline import Deadline
from featcheck.errors import FeatcheckError
from featcheck.featureset import (
    AuditOptions,
    FeatureSelection,
    beyond_defaults,
    selected_features,
)
from featcheck.fixes.counterfactual import WhatIf
from featcheck.fixes.lockcheck import LockView
from featcheck.fixes.reach import BuildKey
from featcheck.locate import ManifestCache, bind_declarations
from featcheck.manifest.crate_root import NoStd, built_no_std
from featcheck.matrix import ConfigurationPlan, plan_configurations
from featcheck.policy.load import load_config, members_with_settings
from featcheck.policy.settings import Config
from featcheck.resolution import FeatureSelectionError, resolve_configurations, resolver_version
from featcheck.rules import Rule
from featcheck.semantics.cfg import TargetCfg
from featcheck.workspace.cargo_metadata import merged_metadata, parse_metadata
from featcheck.workspace.model import CrateRoot, Package, same_crate
from featcheck.workspace.workspace import Workspace


@dataclass(frozen=True)
class Run:
    """What every stage of one audit may consult: the request, cargo, the manifests read."""

    manifest: Path
    options: AuditOptions
    source: MetadataSource
    """cargo, or the files (`--no-exec`)."""
    manifests: ManifestCache
    deadline: Deadline
    """Bounds the work after cargo's answer as a whole (deadline.py)."""


@dataclass(frozen=True)
class Scope:
    """What one audit looks at, from cargo's metadata and the project's configuration."""

    metadata: Workspace
    config: Config
    settings: Config
    """What applies to the run as a whole: a lone member's own settings count as the project's."""
    members: list[Package]
    targets: list[str]
    resolver: int
    """The workspace's feature resolver (1, 2 or 3)."""
    rules_of: dict[str, tuple[Rule, ...]]
    """The rules run for each member, by package id."""
    requested: tuple[FeatureSelection, ...]
    each_feature: bool
    asked: tuple[FeatureSelection, ...] = (FeatureSelection(),)
    """The features of each `cargo metadata` call `metadata` merges (`with_every_feature`): a
    fix is checked on a copy asked as the audit asked (diffsol's features exclude each other,
    and no one call has them all on)."""
    unification: Unification = PER_MEMBER
    """Over which builds cargo unifies features here (cargo/pending_metadata.py)."""
    no_std: dict[str, tuple[tuple[CrateRoot, NoStd], ...]] = field(default_factory=dict)
    """Each member's crate roots, by package id, with when each is `no_std`
    (manifest/crate_root.py): read here, before resolution, as the manifests are."""

    def ran(self) -> set[str]:
        return {r.code for rules in self.rules_of.values() for r in rules}

    def built_no_std(self, member: str, selection: FeatureSelection, cfg: TargetCfg) -> bool:
        """Whether the build of the member (by id) with `selection` on `cfg`'s target is no_std.
        Its features are read off the selection: configurations that resolve alike share one
        graph, and its member's node shows the first one's."""
        roots = self.no_std.get(member, ())
        if not any(no_std.when for _, no_std in roots):
            return False
        features = selected_features(self.metadata[member], selection)
        return built_no_std(roots, features, cfg)


def scope_of(run: Run, metadata: Workspace) -> Scope:
    """The members `run.manifest` and `-p` select, with what the configuration and the
    options say for them."""
    options = run.options
    config = load_config(
        metadata.root,
        members_with_settings(metadata),
        read_document=run.manifests.get,
        checkout=run.manifests.checkout,
        deadline=run.deadline,
    )
    members = select_members(metadata, run.manifest, options.packages)
    settings = config.for_member(members[0].name) if len(members) == 1 else config
    root = metadata.root

    def shown(file: Path) -> str:
        """How notes name a configuration file: from the workspace root when it lies inside."""
        return file.relative_to(root).as_posix() if file.is_relative_to(root) else str(file)

    return Scope(
        bind_declarations(metadata, run.manifests),
        config,
        settings,
        members,
        targets=list(options.targets or settings.targets) or run.source.default_targets(),
        resolver=resolver_version(run.manifests.get(metadata.root / "Cargo.toml").data),
        rules_of={
            m.id: config.for_member(m.name).rules(options.select, options.ignore) for m in members
        },
        requested=options.configurations or settings.configurations,
        each_feature=options.each_feature or settings.each_feature,
        unification=run.source.unification(shown),
        # Every member's: a fix for one must not give the others' no_std builds what they lack.
        no_std={
            m.id: tuple((root, run.manifests.no_std(root.path)) for root in m.crate_roots)
            for m in metadata.members
        },
    )


def select_members(metadata: Workspace, manifest: Path, packages: tuple[str, ...]) -> list[Package]:
    members = list(metadata.members)
    if manifest.resolve() != (metadata.root / "Cargo.toml").resolve():
        # A package inside a workspace: audit that member, with the workspace's lockfile.
        members = [m for m in members if m.manifest_path.resolve() == manifest.resolve()]
    if packages:
        chosen = [metadata.member_named(p) for p in packages]
        unknown = [p for p, m in zip(packages, chosen, strict=True) if m is None]
        if unknown:
            names = sorted(m.name for m in metadata.members)
            raise FeatcheckError(
                f"no workspace member named {', '.join(unknown)} (members: {', '.join(names)})"
            )
        members = [m for m in metadata.members if m in chosen]
    if not members:
        raise FeatcheckError("no workspace member to audit here", path=manifest)
    return sorted(members, key=lambda m: member_order(metadata.root, m))


def member_order(root: Path, member: Package) -> tuple[tuple[str, ...], str]:
    """Where a member comes in every report: by its directory relative to the workspace root,
    compared part by part (the root package first, `crates/a` before `crates/b` before
    `tools`), then by name. cargo lists members in the order `workspace.members` names them, the
    root package last, and a glob's in its own order: one order for cargo and `--no-exec`
    alike must come from the paths themselves."""
    directory = os.path.relpath(member.manifest_path.parent, root)
    parts = () if directory == os.curdir else Path(directory).parts
    return parts, member.name


def plan_builds(run: Run, scope: Scope) -> ConfigurationPlan:
    """The feature selections to resolve for each member, and those cargo would refuse."""
    # Members a rule looks at themselves: their own features then decide.
    itself = frozenset(
        m.id
        for m in scope.members
        if any(same_crate(c.name, m.name) for r in scope.rules_of[m.id] for c in r.crates)
    )
    return plan_configurations(
        scope.members,
        scope.requested,
        each=scope.each_feature,
        legacy_root=scope.metadata.resolve_root if scope.resolver == 1 else None,
        self_audited=itself,
        deadline=run.deadline,
    )


def with_every_feature(
    run: Run, scope: Scope, plan: ConfigurationPlan, *, asked: FeatureSelection | None
) -> Scope:
    """The scope over metadata that covers every package the plan's builds may use. `asked`:
    the features the scope's metadata was asked with; None where cargo refused
    `--all-features`, and it holds the default builds only."""
    # Every `dependency/feature` value of the plan, which `--all-features` does not cover (it
    # may turn on optional dependencies of dependencies).
    values = {v for found in plan.selections.values() for s in found for v in s.features}
    every = FeatureSelection.of(sorted(v for v in values if "/" in v), all_features=True)
    needed = bool(every.features) or beyond_defaults(scope.requested, scope.each_feature)
    if asked is not None and (asked == every or not needed):
        return replace(scope, asked=(asked,))
    # Plain `cargo metadata` leaves out the optional dependencies nothing enables by default,
    # and `--all-features` those that only a `dependency/feature` value enables: ask with both
    # (the values were matched against the members already), else each build's own apart.
    answers: list[tuple[FeatureSelection, Workspace]] | None = None
    if asked is not None:
        with suppress(FeaturesRefused):
            answers = [(every, metadata_asked(run.source, run.manifest, every))]
    if answers is None:
        answers = _asked_apart(run, _feature_groups(scope.metadata, plan), plan)
    if not answers:  # the default builds alone were left to audit
        return replace(scope, asked=(FeatureSelection(),))
    metadata = bind_declarations(merged_metadata([a for _, a in answers]), run.manifests)
    members = select_members(metadata, run.manifest, run.options.packages)
    asked_all = tuple(question for question, _ in answers)
    return replace(scope, metadata=metadata, members=members, asked=asked_all)


def metadata_asked(source: MetadataSource, manifest: Path, asked: FeatureSelection) -> Workspace:
    pending = source.start_metadata(
        manifest, all_features=asked.all_features, features=asked.features
    )
    return pending.result(parse_metadata)


_Jobs = list[tuple[str, FeatureSelection]]
"""(member id, selection) pairs of a plan."""


def _feature_groups(metadata: Workspace, plan: ConfigurationPlan) -> dict[frozenset[str], _Jobs]:
    """The plan's builds by the values that ask cargo for their packages: a member's own
    features named `member/feature`, `dependency/feature` as written (the defaults need none)."""
    groups: dict[frozenset[str], _Jobs] = {}
    for member_id, selection in plan.distinct_jobs():
        member = metadata[member_id]
        own = member.features if selection.all_features else selection.features
        named = {f"{member.name}/{f}" for f in own if "/" not in f}
        values = frozenset(named | {f for f in selection.features if "/" in f})
        if values:
            groups.setdefault(values, []).append((member_id, selection))
    return groups


def _asked_apart(
    run: Run, groups: dict[frozenset[str], _Jobs], plan: ConfigurationPlan
) -> list[tuple[FeatureSelection, Workspace]]:
    """cargo's metadata for all the groups' values at once where it resolves them; else for
    the groups of each set of feature names (diffsol's `llvm17` of every member) apart, and
    those cargo refuses member by member. A build refused alone is dropped from the plan, with
    cargo's words."""
    by_name: dict[frozenset[str], list[frozenset[str]]] = {}
    for values in sorted(groups, key=sorted):
        by_name.setdefault(frozenset(v.partition("/")[2] for v in values), []).append(values)
    answers: list[tuple[FeatureSelection, Workspace]] = []
    pending = [list(groups)] if groups else []
    while pending:
        together = pending.pop(0)
        asked = FeatureSelection.of(sorted(set().union(*together)))
        try:
            answers.append((asked, metadata_asked(run.source, run.manifest, asked)))
        except FeaturesRefused as error:
            if len(together) == 1:
                for member_id, selection in groups[together[0]]:
                    plan.refuse(member_id, selection, str(error))
            elif len(together) == len(groups) and len(by_name) > 1:
                pending += by_name.values()
            else:
                pending += [[values] for values in together]
    return answers


# The third stage: what cargo builds for each (member, target, configuration), by featcheck's
# own resolver over the one metadata (the differential tests put cargo tree in its place:
# tests/cargo_tree_oracle.py).

Builds = dict[BuildKey, ParsedTree]


def resolver_model(source: MetadataSource, scope: Scope, deadline: Deadline) -> WhatIf:
    """What featcheck's resolver works on, for the audit's builds (`resolve` keeps its resolution
    of each target in `audited`) and those an edit would give."""
    # One `rustc --print cfg` each (cached), asked here: resolution never runs cargo.
    cfgs = {cfg.triple: cfg for cfg in [source.target_cfg(t) for t in scope.targets]}
    metadata, root = scope.metadata, scope.metadata.resolve_root
    current = metadata.by_id.get(root) if root is not None else None
    lock, unify = LockView(metadata), scope.unification.workspace
    return WhatIf(metadata, cfgs, source.host_cfg(), scope.resolver, current, lock, deadline, unify)


class Resolved(NamedTuple):
    model: WhatIf
    builds: Builds


def resolve(run: Run, scope: Scope, plan: ConfigurationPlan) -> Resolved:
    """The model and every build of the plan; a configuration that does not resolve is
    dropped from `plan`."""
    model = resolver_model(run.source, scope, run.deadline)
    errors: dict[tuple[str, FeatureSelection], FeatureSelectionError] = {}
    graphs = resolve_configurations(
        model.index,
        plan.distinct_jobs(),
        list(model.cfgs.values()),
        model.resolver,
        host=model.host,
        errors=errors,
        deadline=run.deadline,
        unify_workspace=model.unify_workspace,
        sessions=model.audited,
    )
    for (member, selection), error in errors.items():
        plan.refuse(member, selection, str(error))
    # The member comes first, as in cargo tree's output.
    builds = {
        key: ParsedTree(graph, False, True, False, [next(graph.nodes())])
        for key, graph in graphs.items()
    }
    plan.share(builds)
    return Resolved(model, builds)
