"""What a finding says besides its verdict: the change to make, and the "why" chain.

The chain shows the path by which the missing feature would have arrived (from the real feature
tables), the declaration that cut it, and where else it *is* enabled — for tests only through
`[dev-dependencies]`, or in the workspace build by another member — because those are the reasons
a user's own `cargo tree` may have shown the feature and made them believe all was well.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from featcheck.featureset import FeatureSelection
from featcheck.fixes.direct import new_requirement
from featcheck.fixes.reach import UNCHECKED
from featcheck.graph import DependencyGraph, Node
from featcheck.locate import Locator
from featcheck.manifest.declarations import Cut
from featcheck.report import Edit, Fix, add_features, edit_words, fix_words, remove_defaults
from featcheck.resolution.record import FeatureSearch, Record
from featcheck.rules import BuildView, Detection
from featcheck.semantics.cfg import TargetCfg
from featcheck.workspace.model import BUILD, DEV, NORMAL, DependencyKind, Package, PackageRef
from featcheck.workspace.workspace import Workspace

_EMPTY = DependencyGraph()


@dataclass
class Explainer:
    """Computes suggestions and chains for the findings of one audit."""

    metadata: Workspace
    search: FeatureSearch
    locator: Locator
    builds: Mapping[tuple[str, str], DependencyGraph]
    """Each member's base build on each target, to say which other member enables a feature."""
    configured: dict[tuple[str, str, FeatureSelection], DependencyGraph]
    """Every audited (member id, target, configuration) build: what a finding's build has on."""
    record: Callable[[str, TargetCfg, FeatureSelection, bool], Record]
    """A build (or with True, its test build) resolved again with why each step was taken: a
    present feature's chain is read."""
    sides_unify: bool = False
    """Resolver 1 gives host units (proc-macros and what they use) and target units the same
    features, so another member's host units count too; with 2 and 3 only target units do."""
    _enabling: dict[tuple[PackageRef, str, str], list[tuple[str, str]]] = field(
        default_factory=dict, init=False, repr=False
    )

    def suggestion(self, detection: Detection, cut: Cut | None, cfg: TargetCfg) -> str:
        """The change to make, in words, computed from the feature tables."""
        node, feature = detection.node, detection.feature
        # The declaration `--fix` would write for this dependency (a caret, unless pinned).
        version = new_requirement(node, self.metadata.pinned_families)
        new = Edit(Path(), ("dependencies", node.name), "add-dependency", (feature,), version)
        direct = f"depend on {node.name} directly: {node.name} = {new.declared_value()}"
        declared = None if cut is None else self.metadata.package_of(cut.dependency.package)
        goal = self.metadata.package_of(node.package)
        if cut is None or declared is None or goal is None:
            return f"enable the `{feature}` feature of {node.name} {node.version}, or {direct}"
        if declared.id == goal.id:
            return add_features([feature], cut.site.key)
        options = [
            f
            for f in self.search.enabling_features(declared, goal, feature, cfg)
            if f not in cut.dependency.features
        ]
        named = [f for f in options if f != "default"]
        if named:
            return (
                f"{add_features(named[:1], cut.site.key)} "
                f"({declared.name} {declared.version} passes it on to {node.name})"
            )
        if "default" in options and cut.disables_defaults:
            return (
                f"{declared.name} {declared.version} turns on {node.name}/{feature} only through "
                f"its defaults: remove `default-features = false`, or {direct}"
            )
        return f"{declared.name} {declared.version} does not pass `{feature}` on: {direct}"

    def describe_fix(
        self, detection: Detection, cut: Cut, fix: Fix, alternatives: tuple[Fix, ...]
    ) -> str:
        """The fix in words, with why it works, and the first other kind of change."""
        node, feature = detection.node, detection.feature
        edit = fix.edits[0]
        declared = self.metadata.package_of(cut.dependency.package)
        key = str(edit.declaration[-1])
        where = " in [workspace.dependencies]" if edit.declaration[0] == "workspace" else ""
        if edit.adds_declaration and len(fix.edits) > 1:
            behind = str(fix.edits[1].declaration[-1])
            why = "builds without it stay no_std" if behind == "std" else "which selects it"
            text = f"depend on {node.name} behind `{behind}`, {why}: {fix_words(fix)}"
        elif edit.adds_declaration:
            text = f"depend on {node.name} directly: {edit_words(edit)}"
        elif edit.action == "remove-default-features":
            text = remove_defaults(key) + where
            if len(fix.edits) > 1:
                text += " and from the `workspace = true` lines that repeat it"
            if declared is not None and declared.name != node.name:
                text += (
                    f" ({declared.name} {declared.version} turns on {node.name}/{feature} "
                    "through its defaults)"
                )
        else:
            # Features of the dependency, on its line or asked for by a feature (`std`).
            text = edit_words(edit) + where
            if declared is not None and declared.name != node.name:
                them = "them" if len(edit.features) > 1 else "it"
                text += f" ({declared.name} {declared.version} passes {them} on to {node.name})"
        files = {e.manifest for e in fix.edits}
        if len(files) == 1 and cut.site.manifest.path not in files and edit.file:
            text += f" ({edit.file})"  # not where the finding points: a library's manifest
        # Another kind of change only where nothing speaks against it (safe, unjudged as with
        # --no-exec, or only not asked of cargo): CI's annotation shows these words alone.
        kinds = (a for a in alternatives if a.edits[0].action != edit.action)
        spoken = (a for a in kinds if a.safe or not a.note or a.note.startswith(UNCHECKED))
        other = next(spoken, None)
        if other is not None:
            text += f", or {fix_words(other)}"
        return text

    def chain(
        self,
        detection: Detection,
        cut: Cut | None,
        member: Package,
        build: tuple[str, TargetCfg, FeatureSelection],
    ) -> tuple[str, ...]:
        """The why chain, one line per link, of the finding in the member's `build`: its
        target, that target's cfg and its configuration."""
        lines: list[str] = []
        target, cfg, selection = build
        goal = self.metadata.package_of(detection.node.package)
        declared = None if cut is None else self.metadata.package_of(cut.dependency.package)
        graph = self.configured.get((member.id, target, selection), _EMPTY)
        if cut is not None and declared is not None and goal is not None:
            # A weak `burn-cpu?/default` on the way leads on only to a package of this build.
            within = graph.packages()
            lines.extend(self._feature_path(cut, declared, goal, detection.feature, cfg, within))
        if goal is not None:
            for kind in (DEV, BUILD):
                found = self._other_kind(kind, member, goal, detection.feature, cfg, graph)
                # A weak `x?/f` on the way counts as if x were on: the test build says.
                if found and kind is DEV and not self._tests_get(member, goal, detection, build):
                    found = []
                lines.extend(found)
        lines.extend(self._other_members(detection.node, detection.feature, member, target))
        return tuple(lines)

    def turned_on(
        self, detection: Detection, member: Package, switching: dict[str, list[tuple[str, str]]]
    ) -> list[str]:
        """For a feature whose presence is the finding: which of the member's own declarations
        switch it on, and how (`switching`: what `Explainer.switching` found for this build);
        else that crates the workspace does not own do."""
        if not detection.feature:
            return []  # the crate itself: the finding's note says how the build reaches it
        lines = [
            f"switched on by {member.name}'s dependency {key}: {self.search.describe(path)}"
            for key, path in switching.items()
        ]
        if not lines:
            lines.append(
                f"switched on by crates this workspace does not own (cargo unifies "
                f"{detection.node.name}'s features over the build)"
            )
        return lines

    def switching(
        self, detection: Detection, member: Package, cfg: TargetCfg, selection: FeatureSelection
    ) -> dict[str, list[tuple[str, str]]]:
        """The member's own normal dependencies (by key) that switch the detection's feature
        on, each with the shortest chain by which it does, read off the record of the build's
        resolution (made again with recording on, for this build only)."""
        goal = self.metadata.package_of(detection.node.package)
        if goal is None or not detection.feature:
            return {}
        record = self.record(member.id, cfg, selection, False)
        position = self.metadata.by_id[goal.id]
        unit = (position * 2 + detection.node.host) & record.context.feature_mask
        found: dict[str, list[tuple[str, str]]] = {}
        for declaration in member.declarations:
            if declaration.kind is not NORMAL or not cfg.applies(declaration.target):
                continue
            path = record.through_declaration(declaration.key, (unit, detection.feature))
            if path is not None:
                found.setdefault(declaration.key, path)
        return found

    def placement(
        self,
        member: Package,
        view: BuildView,
        detection: Detection,
        cut: Cut,
        fixes: tuple[Fix, ...],
    ) -> str:
        """Why a new dependency goes into the member's own manifest, not where the cut lies
        (`fixes`: the fix, then the alternatives). Empty for a fix editing a declaration: that
        edits a cut on the member's way the workspace owns."""
        fix, alternatives = fixes[0], fixes[1:]
        own = all(edit.manifest == member.manifest_path for edit in fix.edits)
        if not own or not fix.edits[0].adds_declaration:
            return ""
        # The workspace's own packages between the member and the crate.
        graph, root, packages = view.graph, view.roots[0], self.metadata
        found = (
            (n, packages.package_of(n.package))
            for n in sorted(graph.ancestors(detection.node))
            if n.package.is_local and n != root
        )
        libraries = [(node, package) for node, package in found if package is not None]
        if libraries:
            return self._kept_from(member, libraries, detection, alternatives)
        declared, crate = cut.dependency, detection.node
        if not cut.disables_defaults and declared != crate:
            return (
                f"in {member.name}'s own manifest: the cut lies beyond {declared.name} "
                f"{declared.version}, in a crate the workspace does not own"
            )
        return ""

    def _kept_from(
        self,
        member: Package,
        libraries: list[tuple[Node, Package]],
        detection: Detection,
        alternatives: tuple[Fix, ...],
    ) -> str:
        """Why the new line is not in the workspace's `libraries` on the way."""
        names = ", ".join(library.name for _, library in libraries)
        manifests = {library.manifest_path for _, library in libraries}
        there = [a for a in alternatives if all(e.manifest in manifests for e in a.edits)]
        # A reason only where every change there has one: else one of them simply lost to
        # the member's own line (rerun: `web_viewer`'s note was given for the flate2 line). An
        # alternative cargo was not asked about has none (burn_automata's, which lost before).
        if there and all(a.note and not a.note.startswith(UNCHECKED) for a in there):
            return f"in {member.name}'s own manifest rather than {names}'s: there {there[0].note}"
        if there:
            return f"in {member.name}'s own manifest, to keep {names} lean"
        # A library built without its `std` here offers no change that needs it (bimm's).
        goal, wanted = self.metadata.package_of(detection.node.package), detection.feature
        no_std = [p.name for n, p in libraries if "std" in p.features and "std" not in n.features]
        if no_std and goal is not None and "std" in goal.implied(wanted):
            without = f"{', '.join(no_std)} {'are' if len(no_std) > 1 else 'is'} built without"
            needs = f"{goal.name}'s `{wanted}` needs"
            return f"in {member.name}'s own manifest: {without} `std` here, which {needs}"
        return f"in {member.name}'s own manifest: no change in {names} clears it"

    def _feature_path(
        self,
        cut: Cut,
        declared: Package,
        goal: Package,
        feature: str,
        cfg: TargetCfg,
        within: frozenset[PackageRef],
    ) -> list[str]:
        target_state = (goal.id, feature)
        where = self.locator.location(cut)
        place = f"{where.file}:{where.line}"
        if cut.disables_defaults:
            path = self.search.chain((declared.id, "default"), target_state, cfg, within)
            if path is not None:
                return [
                    f"would arrive through {self.search.describe(path)}",
                    f"cut at {place}: `default-features = false` on {cut.site.key}",
                ]
        for start in self.search.enabling_features(declared, goal, feature, cfg):
            if start in cut.dependency.features:
                continue  # on, and the feature is not: a weak `x?/f` on the way waits for x
            path = self.search.chain((declared.id, start), target_state, cfg, within)
            if path is not None:
                return [
                    f"would arrive through {self.search.describe(path)}, not enabled at {place}"
                ]
        nothing = f"no feature of {declared.name} {declared.version} turns it on"
        unfollowed = self.search.unfollowed(declared, cfg)
        if not unfollowed:
            return [f"{nothing} ({place})"]
        more = f" and {len(unfollowed) - 3} more" if len(unfollowed) > 3 else ""
        shown = ", ".join(unfollowed[:3]) + more
        return [
            f"{nothing} through the packages resolved here ({place}); not followed: {shown}, "
            "which no audited build includes"
        ]

    def _other_kind(
        self,
        kind: DependencyKind,
        member: Package,
        goal: Package,
        feature: str,
        cfg: TargetCfg,
        build: DependencyGraph,
    ) -> list[str]:
        """Dev- or build-dependencies of the member that turn the feature on where the build
        of the member itself does not get it (resolver 2 and 3 keep them apart). Only by what
        they ask beyond that `build`: what it has on already leaves the feature off (a weak
        `x?/f` on the way waits for an x that stays off)."""
        lines = []
        written = self.metadata.written[member.id]
        for declaration in member.declarations:
            if declaration.kind is not kind or not cfg.applies(declaration.target):
                continue
            starts = list(declaration.features)
            if declaration.uses_default_features:
                starts.append("default")
            # The packages this declaration resolved to (a line per `[target.X]` table).
            key, packages = declaration.key, self.metadata.packages
            resolved = {e.dep for e in member.edges if e.kind is kind and e.name_in_toml == key}
            if not any(
                self.search.chain((packages[dep].id, s), (goal.id, feature), cfg) is not None
                for dep in resolved
                for s in set(starts) - _features_of(build, packages[dep])
            ):
                continue
            sites = [site for site in written.of[declaration] if site.applies(cfg)]
            entry = sites[0].manifest.spans.get(sites[0].path) if sites else None
            line = f" (line {entry.key.line})" if entry is not None else ""
            who = "tests and benches" if kind is DEV else "the build script"
            lines.append(
                f"enabled only for {who}, through [{kind.value}-dependencies] {declaration.key}"
                f"{line}: the build itself does not get it"
            )
        return lines

    def _tests_get(
        self,
        member: Package,
        goal: Package,
        detection: Detection,
        build: tuple[str, TargetCfg, FeatureSelection],
    ) -> bool:
        """Whether the member's test build has the feature on the crate's unit."""
        _, cfg, selection = build
        tests = self.record(member.id, cfg, selection, True)
        context = tests.context
        unit = (context.index.by_id[goal.id] * 2 + detection.node.host) & context.feature_mask
        return detection.feature in tests.state.features.get(unit, ())

    def _other_members(self, node: Node, feature: str, member: Package, target: str) -> list[str]:
        """Members whose own build has the feature: unified in a workspace-wide build only.
        Asked for every finding of a crate, so found once per crate."""
        key = (node.package, feature, target)
        known = self._enabling.get(key)
        if known is None:
            known = self._enabling[key] = sorted(  # by name, which no two members share
                (other.name, other.id)
                for other in self.metadata.members
                if any(
                    n.package == node.package
                    and feature in n.features
                    and (self.sides_unify or not n.host)
                    for n in self.builds.get((other.id, target), _EMPTY).named(node.name)
                )
            )
        enabling = [name for name, member_id in known if member_id != member.id]
        if not enabling:
            return []
        return [
            f"enabled in the workspace-wide build by member {', '.join(enabling)}, not when "
            f"{member.name} is built alone (cargo build -p {member.name}, cargo install)"
        ]


def _features_of(build: DependencyGraph, package: Package) -> set[str]:
    """The features the build's target units of the package have on."""
    return {
        feature
        for node in build.named(package.name)
        if node.package.id == package.id and not node.host
        for feature in node.features
    }
