"""What a rule sees (`BuildView`: one member's resolved build on one target), what it reports
(`Detection`), and the one detector that evaluates any rule spec over such a build.

A finding is a node of one of the rule's crates (at a matching version), compiled for the
target, lacking the rule's feature (with `kind = "present"`: having it), that the build uses as
the rule's `used-when` says.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING

from featcheck.rules.spec import Kind, not_applicable
from featcheck.semantics import semver
from featcheck.workspace.model import PackageRef, crate_key, same_crate

if TYPE_CHECKING:
    from featcheck.graph import DependencyGraph, Node
    from featcheck.rules.spec import HandledBy, Rule, UsedWhen
    from featcheck.semantics.cfg import TargetCfg
    from featcheck.severity import Severity


@dataclass(frozen=True)
class BuildView:
    """One member's resolved build on one target, as a rule sees it."""

    graph: DependencyGraph
    roots: tuple[Node, ...]
    """The member (or, for saved tree text, the top-level packages)."""
    structured: bool = True
    """False when the edges are unknown (`--prefix none`, `--depth 0`): only features are."""
    target: str | None = None
    """The target triple; None for saved tree text."""
    cfg: TargetCfg | None = None
    """The target's cfg values, where known (what it provides: std, threads)."""
    no_std: bool = False
    """The member is `no_std` in this build (manifest/crate_root.py): it is meant for targets
    without `std`, whatever this one provides."""

    @cached_property
    def target_nodes(self) -> frozenset[Node]:
        """Nodes compiled for the target: proc-macros and what only they use run on the host.
        Kept: every rule asks, and a workspace has hundreds of builds."""
        if not self.structured:
            return frozenset(self.graph.nodes())
        return self.graph.target_side(self.roots)


@dataclass(frozen=True)
class Detection:
    """A rule's raw verdict on one node, before it is placed in a manifest."""

    node: Node
    feature: str
    message: str
    evidence: str = ""
    """Why the rule considers the crate in use (e.g. which feature selects the backend)."""
    notes: tuple[str, ...] = field(default_factory=tuple)
    severity: Severity | None = None
    """The rule's severity for this case, where it differs from the default (a crate that only
    third-party crates bring in); None: the rule's default."""
    deferred_to: tuple[str, ...] = ()
    """The rule's `requires` features the crate lacks (see `Rule.requires`)."""


UNKNOWN_SELECTION = (
    "the saved tree shows no dependents of this crate, so featcheck cannot tell whether it is "
    "the selected backend; save the full tree (without --depth, with a --prefix) to know"
)


NO_STD_MEMBER = "the member's crate roots say `no_std`: it is meant for targets without `std`"
"""Why rules that need `std` or threads do not apply to a no_std member's build."""


def skipped_for_target(rule: Rule, view: BuildView) -> str | None:
    reason = not_applicable(rule.targets, view.target, view.cfg)
    if reason is None and view.no_std and rule.targets.needs:
        return NO_STD_MEMBER
    return reason


def detect(rule: Rule, view: BuildView, *, deferring: bool = False) -> list[Detection]:
    """Every node of this build that `rule` flags, whatever the target (see
    `skipped_for_target`: the caller decides what a skipped target's findings become).

    A node lacking one of the rule's `requires` features is left out, or with `deferring`
    flagged with those features as `deferred_to` (see `Rule.requires`, `covering_rules`)."""
    present = rule.kind is Kind.PRESENT
    lacking = {
        node: feature
        for name in {crate_key(crate.name) for crate in rule.crates}
        for node in view.graph.named(name)
        if (feature := flagged_feature(rule, node)) is not None
    }
    if not lacking:
        return []  # asked for every candidate fix: most builds have the feature by now
    found: list[Detection] = []
    for node in sorted(n for n in lacking if n in view.target_nodes and not _own(rule, view, n)):
        feature = lacking[node]
        deferred = tuple(f for f in rule.requires if f not in node.features)
        if deferred and not deferring:
            continue  # another rule reports this node (FC003 leaves rayon-less Flex to FC001)
        evidence = used_evidence(rule.used_when, view, node)
        if evidence is None or excused(rule.used_when, view, node):
            continue
        notes = () if view.structured else (UNKNOWN_SELECTION,)
        severity = None
        third_party = rule.used_when.third_party
        if third_party is not None and view.structured:
            own, evidence = ownership(view, node, rule.used_when.avoiding, third_party.own)
            severity = None if own else third_party.severity
        state = (
            f"built {'with' if present else 'without'} `{feature}`" if feature else "in the build"
        )
        message = f"{node.name} {node.version} is {state}"
        if rule.consequence:
            message += f": {rule.consequence}"
        found.append(Detection(node, feature, message, evidence, notes, severity, deferred))
    return found


def _own(rule: Rule, view: BuildView, node: Node) -> bool:
    """A member missing a feature of its own: its features are the build the user asked for
    (gemm's workspace built `--no-default-features` is gemm without `rayon` by choice, with no
    cut to fix), never a finding."""
    return rule.kind is Kind.MISSING and view.structured and node in view.roots


def flags(
    rule: Rule, view: BuildView, package: PackageRef, excused_features: frozenset[str]
) -> bool:
    """Whether `detect` would flag a node of `package` for a feature not in `excused_features`:
    its verdict alone, without the evidence, ownership and message it words. Asked for every
    candidate fix of every finding (149 members: 4,300 times, a third of the audit in words)."""
    used = rule.used_when
    for node in view.graph.named(package.name):
        feature = flagged_feature(rule, node)
        if node.package != package or feature is None or feature in excused_features:
            continue
        if node not in view.target_nodes or _own(rule, view, node):
            continue
        if any(f not in node.features for f in rule.requires):
            continue
        # A node the build holds is reached from a root: `reachable` needs no path's words.
        reached = used.reachable and not used.avoiding and view.structured
        used_here = reached or used_evidence(used, view, node) is not None
        if used_here and not excused(used, view, node):
            return True
    return False


def covering_rules(rules: Iterable[Rule], deferred: Detection) -> list[Rule]:
    """The rules of `rules` that speak first for `deferred`'s node: they flag it for a feature
    it was deferred to, and their fix adds the deferred finding's feature too (FC001, whose
    `also-add` is `simd`, for FC003's rayon-less burn-flex)."""
    return [
        rule
        for rule in rules
        if rule.kind is Kind.MISSING
        and deferred.feature in rule.companions
        and missing_feature(rule, deferred.node) in deferred.deferred_to
    ]


def excused(used: UsedWhen, view: BuildView, node: Node) -> bool:
    """Whether one of `used`'s exceptions holds for `node`: `handled_by` (its dependents do the
    work elsewhere), `unless_dependency_has` or `unless_dependent`. Without edges (saved tree
    text), `handled_by` never holds, and any crate of the other two in the build counts."""
    graph, structured = view.graph, view.structured
    if any(f in node.features for f in used.unless_built_with):
        return True
    if used.handled_by and structured:
        avoiding = _keys(used.avoiding)
        dependents = [
            d
            for d in graph.dependents_map().get(node, set())
            if crate_key(d.name) not in avoiding and d in view.target_nodes
        ]
        if dependents and all(_has(d, used.handled_by) for d in dependents):
            return True
    if used.unless_dependency_has:
        below = (
            graph.dependencies(node)
            if structured
            else {n for d in used.unless_dependency_has for n in graph.named(crate_key(d.crate))}
        )
        # Several entries: all of them (regex's `std` only forwards to three crates).
        if all(any(_has(d, (h,)) for d in below) for h in used.unless_dependency_has):
            return True
    if not used.unless_dependent:
        return False
    above = _keys(used.unless_dependent)
    users = (
        graph.dependents_map().get(node, set())
        if structured
        else {n for name in above for n in graph.named(name)}
    )
    return any(crate_key(d.name) in above for d in users)


def _has(node: Node, entries: tuple[HandledBy, ...]) -> bool:
    """Whether `node` is one of the entries' crates, with all of that entry's features."""
    return any(
        crate_key(node.name) == crate_key(h.crate) and set(h.features) <= node.features
        for h in entries
    )


def ownership(
    view: BuildView, node: Node, avoiding: tuple[str, ...], own: tuple[str, ...]
) -> tuple[bool, str]:
    """Whether the member's own crates use `node` (depend on it, or on one of the `own` crates
    above it, directly), and the evidence either way.

    A crate that only third-party crates bring in is configured by them first (tract-onnx's
    ndarray, imageproc's nalgebra), and the member may not spend its time there; where a
    declaration of the user's cut the feature on the way, the finding's chain says so.
    """
    above = view.graph.ancestors(node)
    own_keys = _keys(own)
    users = {node} | {n for n in above if crate_key(n.name) in own_keys}
    for local in sorted(n for n in above if n.package.is_local):
        for used in sorted(users & view.graph.dependencies(local)):
            if used == node:
                return True, f"{node.name} is a direct dependency of {local.name}"
            return True, f"{local.name} depends on {used.name} directly, which uses {node.name}"
    found = _path_avoiding(view, node, avoiding)
    # A crate the rule does not follow may bring it too (diffsol's examples use nalgebra).
    aside = sorted({n.name for n in above if crate_key(n.name) in _keys(avoiding)})
    apart = f"apart from {', '.join(aside)}, which this rule does not follow, " if aside else ""
    if found is None:
        return False, f"{apart}{node.name} comes only through crates this workspace does not own"
    # Every crate a package of the workspace depends on that leads there (not the first path's
    # alone: delta-rs's half comes through buoyant_kernel and through arrow-array).
    leads = {node, *above}
    skipped = _keys(avoiding)
    entries = sorted(
        {
            dependency.name
            for local in above | set(view.roots)
            if local.package.is_local
            for dependency in view.graph.dependencies(local)
            if dependency in leads
            and not dependency.package.is_local
            and crate_key(dependency.name) not in skipped
        }
    )
    via = entries or [next((n for n in found[1] if not n.package.is_local), node).name]
    owner = f"{via[0]}, a crate" if len(via) == 1 else f"{', '.join(via)}, crates"
    return False, f"{apart}{node.name} comes only through {owner} this workspace does not own"


def _keys(names: tuple[str, ...]) -> frozenset[str]:
    """Names a rule writes, as crates.io compares them."""
    return frozenset(crate_key(name) for name in names)


def flagged_feature(rule: Rule, node: Node) -> str | None:
    """The feature `rule` flags `node` for: missing, or (kind present) on; "" for a rule whose
    finding is the crate itself; None where the node is as the rule wants it."""
    feature = missing_feature(rule, node)
    present = rule.kind is Kind.PRESENT
    return (
        feature
        if feature is not None and (feature in node.features or not feature) is present
        else None
    )


def missing_feature(rule: Rule, node: Node) -> str | None:
    """The feature this node must have: that of the first crate entry matching its name and
    version; None when no entry matches (a version the rule does not cover)."""
    for crate in rule.crates:
        if not same_crate(crate.name, node.name):
            continue
        if crate.versions is None or semver.matches(crate.versions, node.version):
            return crate.feature or rule.feature
    return None


def used_evidence(used: UsedWhen, view: BuildView, node: Node) -> str | None:
    """Why the build uses `node` (the finding's evidence), or None if it does not."""
    if used.built or (not view.structured and (used.selected_by or used.direct)):
        # Without edges (saved tree text) selection and direct use cannot be told: built counts.
        return f"{node.name} is in the build"
    selected_by = used.selected_by
    if selected_by is not None:
        selecting, feature = _keys(selected_by.crates), selected_by.feature
        for ancestor in sorted(view.graph.ancestors(node)):
            if crate_key(ancestor.name) in selecting and feature in ancestor.features:
                means = selected_by.means or f"selects {node.name}"
                return f"the `{feature}` feature of {ancestor.name} {ancestor.version} {means}"
    for ancestor in sorted(view.graph.ancestors(node)) if used.direct else ():
        if ancestor.package.is_local and node in view.graph.dependencies(ancestor):
            return f"{node.name} is a direct dependency of {ancestor.name}"
    # Reachable: a path package reaches `node` without going through `avoiding` crates.
    avoiding = used.avoiding
    found = _path_avoiding(view, node, avoiding) if used.reachable and view.structured else None
    if found is None:
        return None
    root, path = found
    via = path[-2].name if len(path) > 1 else root.name
    if not avoiding:
        return f"{node.name} is a dependency of {via}"
    return f"{node.name} is used by {via}, not only through {', '.join(avoiding)}"


def _path_avoiding(
    view: BuildView, node: Node, avoiding: tuple[str, ...]
) -> tuple[Node, list[Node]] | None:
    """The first root with a path to `node` through none of the `avoiding` crates, and the path."""
    keys = _keys(avoiding)
    blocked = frozenset(n for n in view.graph.nodes() if crate_key(n.name) in keys)
    paths = ((root, view.graph.path(root, node, avoiding=blocked)) for root in view.roots)
    return next(((root, path) for root, path in paths if path is not None), None)
