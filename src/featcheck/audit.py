"""The audit: manifest -> resolution -> rules -> findings, for a project or for saved tree text."""

from __future__ import annotations

import os
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from contextlib import nullcontext
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from featcheck.cargo.argv_gate import GateError, target_triple
from featcheck.cargo.cfg import TargetCfg
from featcheck.cargo.failures import FailureKind, classify
from featcheck.cargo.metadata import PackageInfo, WorkspaceMetadata
from featcheck.cargo.runner import CargoRunner
from featcheck.cargo.tree_text import ParsedTree, TreeTextError, local_leaves, parse_tree_text
from featcheck.config import load_config
from featcheck.errors import FeatcheckError
from featcheck.explain import Explainer
from featcheck.featureset import DEFAULT, FeatureSelection
from featcheck.fixes.counterfactual import WhatIf
from featcheck.fixes.overlay import OverlayCheck
from featcheck.fixes.search import FixSearch
from featcheck.graph import DependencyGraph, Node, PackageRef
from featcheck.locate import Locator, ManifestCache
from featcheck.lockfile import LockfileGuard
from featcheck.matrix import ConfigurationPlan, merge_configurations, plan_configurations
from featcheck.noexec.gaps import INCOMPLETE, Completeness, gap_notes
from featcheck.placement import FindingPlacer, Flagged, finding_of
from featcheck.report import AuditResult, Finding, Location, TargetSkip
from featcheck.resolution import (
    FeatureSelectionError,
    PackageIndex,
    build_index,
    resolve_configurations,
    resolver_version,
    target_cfgs,
)
from featcheck.rules import (
    BuildView,
    Rule,
    detect,
    select_rules,
    skipped_for_target,
)
from featcheck.rules.load import BUILTIN_CODE
from featcheck.suggest import FeatureSearch
from featcheck.suppress import apply_suppressions, declaration_spans


@dataclass(frozen=True)
class AuditOptions:
    """What to audit and how to call cargo."""

    packages: tuple[str, ...] = ()
    """Members to audit (`-p`); empty means every member the path selects."""
    targets: tuple[str, ...] = ()
    """Target triples; empty means the host."""
    offline: bool = False
    locked: bool = False
    timeout: float = 300.0
    select: tuple[str, ...] = ()
    """Rules to run besides the defaults (codes or names), e.g. the opt-in hints."""
    ignore: tuple[str, ...] = ()
    """Rules not to run."""
    check_new_packages: bool = False
    """Before calling safe a fix that turns on dependencies Cargo.lock holds no version of,
    let cargo resolve all such fixes once over a temporary copy (`--fix`, `--diff`)."""
    confirm_fixes: bool = True
    """Call a fix safe once featcheck's resolver, with the edits made in memory, builds the
    missing feature and leaves no finding of the crate behind (False: fixes are listed only)."""
    on_command: Callable[[list[str]], None] | None = None
    """Called with each cargo/rustc command line before it runs (the CLI's --verbose)."""
    trust_checkout: bool = False
    """Let cargo obey the checkout's rust-toolchain.toml and .cargo/config.toml (runs its code)."""
    update_lockfile: bool = False
    """Keep what cargo writes to Cargo.lock (after --fix), instead of restoring the user's."""
    resolver: str = "featcheck"
    """`featcheck`: resolve features in-process from the one `cargo metadata` call (proven equal
    to cargo's answer); `cargo`: ask `cargo tree -e normal` once per member and target."""
    no_exec: bool = False
    """Start no process: read the manifests, Cargo.lock and the dependency manifests in the
    local cargo registry or vendor/, with built-in target cfgs; no fix is confirmed safe."""
    configurations: tuple[FeatureSelection, ...] = ()
    """Feature selections to audit (`--features`, `--no-default-features`, `--all-features`);
    empty means the configuration's `configurations`, else the default features."""
    each_feature: bool = False
    """Also audit each feature of each member on its own (`--each-feature`)."""


def _rules(options: AuditOptions) -> tuple[Rule, ...]:
    try:
        return select_rules(options.select, options.ignore)
    except ValueError as error:
        raise FeatcheckError(str(error)) from None


def _check_builtin_codes(options: AuditOptions) -> None:
    """An unknown FC code fails before cargo runs; other names may be the project's own rules,
    known once its configuration is read."""
    fc = tuple(
        c for c in (*options.select, *options.ignore) if BUILTIN_CODE.fullmatch(c.strip().upper())
    )
    try:
        select_rules(fc)
    except ValueError as error:
        raise FeatcheckError(str(error)) from None


def find_manifest(path: Path) -> Path:
    """The Cargo.toml that PATH names (a directory or the manifest itself), made absolute."""
    path = path.absolute()
    if path.is_dir():
        manifest = path / "Cargo.toml"
        if not manifest.is_file():
            raise FeatcheckError("not a Cargo project: no Cargo.toml here", path=path)
        return manifest
    if not path.exists():
        raise FeatcheckError("no such file or directory", path=path)
    if path.suffix != ".toml":
        raise FeatcheckError("expected a directory or a Cargo.toml", path=path)
    return path


def _select_members(
    metadata: WorkspaceMetadata, manifest: Path, packages: tuple[str, ...]
) -> list[PackageInfo]:
    members = list(metadata.members)
    if manifest.resolve() != (metadata.root / "Cargo.toml").resolve():
        # A package inside a workspace: audit that member, with the workspace's lockfile.
        members = [m for m in members if m.manifest_path.resolve() == manifest.resolve()]
    if packages:
        names = {m.name for m in metadata.members}
        unknown = [p for p in packages if p not in names]
        if unknown:
            raise FeatcheckError(
                f"no workspace member named {', '.join(unknown)}"
                f" (members: {', '.join(sorted(names))})"
            )
        members = [m for m in metadata.members if m.name in packages]
    if not members:
        raise FeatcheckError("no workspace member to audit here", path=manifest)
    return members


def audit_project(path: Path, options: AuditOptions) -> AuditResult:
    """Audit every selected member on every target, as cargo resolves it."""
    _check_builtin_codes(options)
    for target in options.targets:  # each reaches rustc's and cargo's command lines
        try:
            target_triple(target)
        except GateError as error:
            raise FeatcheckError(f"--target: {error}") from None
    manifest = find_manifest(path)
    manifests = ManifestCache()
    manifests.get(manifest)  # a broken manifest gets featcheck's one-line error, not cargo's
    runner = (_file_runner() if options.no_exec else CargoRunner)(
        manifest.parent,
        offline=options.offline,
        locked=options.locked,
        timeout=options.timeout,
        on_command=options.on_command,
        trust_checkout=options.trust_checkout,
    )
    with (
        nullcontext() if options.update_lockfile else LockfileGuard.around(manifest),
        ThreadPoolExecutor(max_workers=1) as rustc,
    ):
        # rustc's answers (host triple, target cfgs) do not depend on the metadata: asking while
        # cargo works takes them off the path the user waits on.
        rustc.submit(_warm_target_cfgs, runner, options.targets)
        all_features = _beyond_defaults(options.configurations, options.each_feature)
        metadata = runner.metadata(manifest, all_features=all_features)
        config = load_config(
            metadata.root,
            {m.name: m.manifest_path for m in metadata.members},
            read_document=manifests.get,
        )
        members = _select_members(metadata, manifest, options.packages)
        # A lone member's own [package.metadata.featcheck] counts as the project's settings.
        settings = config.for_member(members[0].name) if len(members) == 1 else config
        requested = options.configurations or settings.configurations
        each_feature = options.each_feature or settings.each_feature
        targets = list(options.targets or settings.targets) or [runner.host_triple()]
        resolver = _resolver_of(manifests, metadata)
        raw = {p["id"]: p for p in metadata.raw["packages"]}
        root_id = (metadata.raw.get("resolve") or {}).get("root")
        plan = plan_configurations(
            [raw[m.id] for m in members],
            requested,
            each=each_feature,
            legacy_root=root_id if resolver == 1 else None,
        )
        extra = plan.dependency_features()
        if extra or (not all_features and _beyond_defaults(requested, each_feature)):
            # Plain `cargo metadata` leaves out the optional dependencies nothing enables by
            # default, and `--all-features` those that only a `dependency/feature` value enables:
            # ask again with both (the values were matched against the members already).
            metadata = runner.metadata(manifest, all_features=True, features=extra)
            members = _select_members(metadata, manifest, options.packages)
        model = _ResolverModel.of(runner, metadata, targets, resolver)
        builds = (
            _resolve_builds(runner, manifest, members, targets, plan)
            if options.resolver == "cargo"
            else _resolve_in_process(model, plan)
        )
    root = manifest.parent
    result = AuditResult(
        root,
        members=[m.name for m in members],
        targets=targets,
        fail_on=settings.fail_on,
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
    rules_of = {
        m.id: config.for_member(m.name).rules(options.select, options.ignore) for m in members
    }
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
            if any(c.name == package.name for c in rule.crates)
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
    placer = FindingPlacer(
        locator,
        Explainer(metadata, search, locator, base_builds),
        FixSearch(
            metadata,
            locator,
            search,
            model.what_if(),
            graphs,
            still_flagged,
            cargo_checks_new_packages=options.check_new_packages and not options.no_exec,
        ),
        None
        if options.no_exec or not options.check_new_packages
        else OverlayCheck(
            metadata.root, metadata_of, model.cfgs, model.host, model.resolver, still_flagged
        ),
        confirm=options.confirm_fixes and not options.no_exec,
    )
    result.findings = [
        replace(
            finding,
            confidence=INCOMPLETE if position in uncertain else finding.confidence,
            configurations=(*finding.configurations, *also_in.get(position, ())),
        )
        for position, finding in enumerate(placer.place_all(flagged))
    ]
    suppression = apply_suppressions(
        merge_configurations(result.findings),
        config,
        root,
        [metadata.root / "Cargo.toml", *(m.manifest_path for m in members)],
        members=result.members,
        targets=targets,
        rules={rule.code for rules in rules_of.values() for rule in rules},
        read=manifests.get,
        spans=_suppression_places,
    )
    result.findings = sorted(suppression.findings, key=_finding_order)
    result.suppressed = suppression.suppressed_counts()
    unread_note = completeness.unread_note()
    if unread_note is not None and not result.incomplete:
        result.notes.append(unread_note)
    if result.incomplete:
        result.notes.extend(gap_notes(result.incomplete))
        # A suppression may look unused only because the build was not seen whole.
        result.findings = [
            replace(f, confidence=INCOMPLETE) if f.code == "FC900" else f for f in result.findings
        ]
    return result


def _file_runner() -> type[CargoRunner]:
    """`--no-exec`'s runner, loaded only for it (it brings the registry and archive readers)."""
    from featcheck.noexec.runner import FileRunner

    return FileRunner


def _warm_target_cfgs(runner: CargoRunner, targets: tuple[str, ...]) -> None:
    """Fill the runner's caches of rustc answers; an error is left for the real call to raise."""
    try:
        for target in targets or (runner.host_triple(),):
            runner.target_cfg(target)
    except FeatcheckError:
        pass


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

    def what_if(self) -> WhatIf:
        """Counterfactual resolution over this model."""
        return WhatIf(self.index, self.cfgs, self.host, self.resolver, self.current)


BuildKey = tuple[str, str, FeatureSelection]
"""(member package id, target triple, feature selection)."""


def _beyond_defaults(configurations: tuple[FeatureSelection, ...], each_feature: bool) -> bool:
    return each_feature or any(not c.is_default for c in configurations)


def _resolve_in_process(
    model: _ResolverModel, plan: ConfigurationPlan
) -> dict[BuildKey, ParsedTree]:
    """What cargo builds for each (member, target, configuration), by featcheck's own resolver
    over the one metadata; a configuration that does not resolve is dropped from `plan`."""
    errors: dict[tuple[str, FeatureSelection], FeatureSelectionError] = {}
    graphs = resolve_configurations(
        model.metadata.raw,
        plan.jobs(),
        list(model.cfgs.values()),
        model.resolver,
        host=model.host,
        errors=errors,
        index=model.index,
    )
    for (member, selection), error in errors.items():
        plan.refuse(member, selection, str(error))
    builds: dict[BuildKey, ParsedTree] = {}
    for key, graph in graphs.items():
        member_node = next(graph.nodes())  # the member comes first, as in cargo tree's output
        builds[key] = ParsedTree(graph, False, True, False, [member_node])
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
    jobs = [(by_id[m], t, s) for m, s in plan.jobs() for t in targets]

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
    return builds


def _finding_order(finding: Finding) -> tuple[Any, ...]:
    return (
        finding.member or "",
        finding.configuration or DEFAULT,  # the default build first
        finding.target or "",
        finding.code,
        finding.crate,
        finding.crate_version,
    )


def audit_tree_text(
    text: str, source_name: str, options: AuditOptions | None = None
) -> AuditResult:
    """Audit text saved from `cargo tree -f '{p} [{f}]'` (no manifests, no cargo)."""
    rules = _rules(options or AuditOptions())
    try:
        parsed = parse_tree_text(text)
    except TreeTextError as error:
        if error.line is None:
            # No tree at all: the saved text may be cargo's answer instead of a tree.
            return _cargo_answer_instead_of_tree(text, source_name)
        raise FeatcheckError(str(error), path=source_name, line=error.line) from None
    roots = _tree_members(parsed)
    view = BuildView(parsed.graph, tuple(roots), parsed.has_structure)
    result = AuditResult(Path("."), members=[r.name for r in roots])
    if parsed.saw_dev_or_build_sections:
        result.notes.append(
            "this tree was printed with dev- and build-dependency edges: the features shown may "
            "include ones only tests or build scripts get; print it with `cargo tree -e normal`"
        )
    if not parsed.inverted and len(parsed.roots) > 1:
        result.notes.append(
            "this tree was printed for the whole workspace, so cargo unified the features of "
            "all members; `cargo build -p MEMBER` may get fewer: print it with -p MEMBER"
        )
    for rule in rules:
        if skipped_for_target(rule, view) is not None:
            continue  # the hints for one target; saved tree text does not say which it was
        for detection in detect(rule, view):
            owners = _owners(parsed.graph, roots, detection.node, view.structured)
            notes = list(detection.notes)
            member_name: str | None = None
            if len(owners) == 1:
                member_name = owners[0].name
            else:
                names = ", ".join(sorted({o.name for o in owners}))
                notes.append(
                    "the saved tree cannot tell which member this build belongs to"
                    + (f" (it is reached from {names})" if names else "")
                )
            finding = finding_of(
                rule,
                replace(detection, notes=tuple(notes)),
                None,
                None,
                None,
                f"enable the `{detection.feature}` feature of {detection.node.name} "
                f"{detection.node.version}; run featcheck on the project itself to get the "
                "manifest line to change",
            )
            result.findings.append(replace(finding, member=member_name))
    result.findings.sort(key=_finding_order)
    return result


def _cargo_answer_instead_of_tree(text: str, source_name: str) -> AuditResult:
    """Saved `cargo tree -i CRATE` output can be cargo's message rather than a tree."""
    failure = classify(text)
    result = AuditResult(Path("."))
    if failure.kind is FailureKind.NOTHING_TO_PRINT:
        result.notes.append(
            "cargo printed nothing: the crate is in the lockfile but not built with these "
            "edges and this target, so nothing here can be single-threaded"
        )
        return result
    if failure.kind is FailureKind.NO_MATCH:
        result.notes.append(
            f"cargo says the crate is not in the dependency graph: {failure.summary}"
        )
        return result
    if failure.kind is FailureKind.AMBIGUOUS:
        versions = ", ".join(failure.candidates) or "several versions"
        raise FeatcheckError(
            f"cargo found several versions ({versions}): save one tree per version, "
            "e.g. cargo tree -e normal -f '{p} [{f}]' -i "
            + (failure.candidates or ("CRATE@VERSION",))[0],
            path=source_name,
        )
    raise FeatcheckError(
        "no dependency lines found: expected output of cargo tree -f '{p} [{f}]'", path=source_name
    )


def _tree_members(parsed: ParsedTree) -> list[Node]:
    """The packages the saved tree was built for."""
    if not parsed.inverted:
        return list(parsed.roots)
    return local_leaves(parsed.graph, parsed.graph.nodes())


def _owners(graph: DependencyGraph, roots: list[Node], node: Node, structured: bool) -> list[Node]:
    if not structured:
        return list(roots) if len(roots) == 1 else []
    ancestors = graph.ancestors(node)
    return [r for r in roots if r in ancestors or r == node]
