"""Candidate fixes for one finding: every declaration between the member and the crate whose
change could deliver the missing feature, and a new dependency on the crate itself.

On each declaration on the way (the member's manifest, `[workspace.dependencies]`, the manifests
of path dependencies): add the feature that passes the missing one through, add the feature
where the crate itself is declared, drop `default-features = false`; and only then depend on the
crate directly. Whether a candidate works is for `search.py` to find out.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from featcheck.featureset import FeatureSelection, without_std
from featcheck.fixes.direct import Candidate, DirectDependencies, Elsewhere, Goal, across_builds
from featcheck.graph import Node, distances_to
from featcheck.manifest.declarations import Cut, DeclarationSite
from featcheck.report import Action, Edit
from featcheck.resolution.features import BUILT
from featcheck.workspace.model import (
    ModelEdit,
    MoreFeatures,
    MoreFeatureValues,
    Package,
    PackageRef,
    crate_key,
)

if TYPE_CHECKING:  # the finder is handed these; it only names their types
    from featcheck.graph import DependencyGraph
    from featcheck.resolution.record import FeatureSearch
    from featcheck.semantics.cfg import TargetCfg


@dataclass
class CandidateFinder(DirectDependencies):
    """Enumerates the candidate fixes of one audit's findings (edits made once, shared), the
    direct-dependency ones as its base class makes them."""

    search: FeatureSearch
    _models: dict[
        tuple[object, ...], tuple[frozenset[ModelEdit], frozenset[PackageRef], tuple[Edit, ...]]
    ] = field(default_factory=dict, init=False)

    def candidates(
        self,
        member: Package,
        cfg: TargetCfg,
        builds: Sequence[tuple[DependencyGraph, FeatureSelection]],
        backend: Node,
        wanted: tuple[str, ...],
        avoiding: tuple[str, ...] = (),
    ) -> list[Candidate]:
        """Every distinct candidate (the first of each set of edits), nearest first, for the
        finding in the member's `builds` (each a graph and its configuration, the one the
        finding was made in first); `avoiding`: the crates whose paths to the crate the rule
        does not count (`Goal`)."""
        if (package := self.metadata.package_of(backend.package)) is None:
            return []
        found: dict[tuple[Edit, ...], Candidate] = {}
        within = builds[0][0].packages()
        goal = Goal(backend, package, wanted, frozenset(map(crate_key, avoiding)), within)
        # No build of the finding leaves the member's own `std` feature off.
        member_std = not any(without_std(member, selection) for _, selection in builds)
        for candidate in self._candidates(member, cfg, builds[0][0], goal, member_std):
            found.setdefault(candidate.edits, candidate)
        if builds[1:] and (position := self.what_if.index.by_id.get(member.id)) is not None:
            elsewhere = [self._member_selects(build, member, goal, cfg) for build in builds[1:]]
            written = self.written_features(member)
            candidates = across_builds(list(found.values()), member, position, elsewhere, written)
            for candidate in candidates:
                found.setdefault(candidate.edits, candidate)
        return sorted(found.values(), key=lambda c: c.proximity)

    def _candidates(
        self,
        member: Package,
        cfg: TargetCfg,
        graph: DependencyGraph,
        goal: Goal,
        member_std: bool,
    ) -> Iterator[Candidate]:
        root = next(graph.nodes())
        distance = distances_to(graph, goal.node)
        owners = self.local_owners(graph, root, distance)
        # A package built without std too (its own `std` feature) asks for what needs the
        # crate's std through that feature, where it is on here: a line would force std on
        # every build of it. Where its `std` is off here, nothing of it may ask.
        with_std: dict[str, bool | None] = {
            owner.id: (member_std if depth == 0 else "std" in owner_node.features)
            if "std" in self.written_features(owner)
            else None
            for owner_node, depth, owner in owners
        }
        selecting = self._selecting(owners, distance, goal, cfg)
        for owner_node, depth, owner in owners:
            for declared in sorted(graph.dependencies(owner_node)):
                if declared not in distance:
                    continue
                proximity = (0, depth, distance[declared])
                yield from self._declaration_candidates(
                    owner, (with_std[owner.id], selecting[owner.id]), declared, proximity, goal, cfg
                )
        if (anchor := self.anchor(member, cfg, graph, goal, distance)) is None:
            return
        # Behind a feature that selects the crate before the same line without one: a library
        # keeps its backend optional (and of equal rank, the first one found wins).
        needs_std = any("std" in goal.package.implied(f) for f in goal.wanted)
        for owner_node, depth, owner in owners:
            if needs_std and with_std[owner.id] is not None:
                continue  # behind its `std` (below): another feature may be on without it
            # Behind a workspace library's feature the line points where that library cuts, as
            # when the finding is its own (boltr's: not its users' path line, left as it is).
            there = None
            if depth and selecting[owner.id] and owner.id in self.metadata.member_ids:
                there = self.anchor(owner, cfg, graph, goal, distance, root=owner_node)
            for feature in selecting[owner.id]:
                yield from self.candidate(owner, feature, goal, there or anchor, depth)
        if not needs_std or with_std.get(member.id) is not False:
            yield from self.candidate(member, _std_if(with_std, member, needs_std), goal, anchor)
        # A workspace library on the way owns the cut: the same line there clears the finding
        # for every member built on it (`search.py` prefers it when it is as safe and small).
        for owner_node, depth, owner in owners:
            if depth == 0 or owner.id not in self.metadata.member_ids:
                continue
            if needs_std and with_std[owner.id] is False:
                continue
            owned = self.anchor(owner, cfg, graph, goal, distance, root=owner_node)
            if owned is not None:
                behind = _std_if(with_std, owner, needs_std)
                yield from self.candidate(owner, behind, goal, owned, depth)

    def _selecting(
        self,
        owners: list[tuple[Node, int, Package]],
        distance: dict[Node, int],
        goal: Goal,
        cfg: TargetCfg,
    ) -> dict[str, list[str]]:
        """By owner id, its features that select the crate (a library's `gpu = ["burn/wgpu"]`):
        they may ask for what it lacks, and a new line may go behind them, leaving the builds
        without them as they are."""
        # Index positions of the packages on the way to the crate, the crate included.
        packages = (self.metadata.package_of(n.package) for n in distance)
        by_id = self.what_if.index.by_id
        on_the_way = frozenset(by_id[p.id] for p in packages if p is not None and p.id in by_id)
        return {
            owner.id: self.selecting_features(owner, owner_node, on_the_way, goal, cfg.triple)
            for owner_node, _, owner in owners
        }

    def _member_selects(
        self,
        build: tuple[DependencyGraph, FeatureSelection],
        member: Package,
        goal: Goal,
        cfg: TargetCfg,
    ) -> Elsewhere:
        """The member's features on in its `build` (a graph, shared by configurations that
        build the same packages, and its configuration), and those that select the crate."""
        graph, selection = build
        asked = [*selection.features, *([] if selection.no_default_features else ["default"])]
        on = frozenset(f for a in asked if "/" not in a for f in member.implied(a))
        root = next(graph.nodes())
        root = Node(root.package, on, root.proc_macro, root.host)
        distance = distances_to(graph, goal.node)
        return on, self._selecting([(root, 0, member)], distance, goal, cfg)[member.id]

    def anchor(
        self,
        member: Package,
        cfg: TargetCfg,
        graph: DependencyGraph,
        goal: Goal,
        distance: dict[Node, int],
        root: Node | None = None,
    ) -> Cut | None:
        """The member's own declaration nearest to the crate: where a finding points when the
        fix is a new dependency, or when no fix is found. On its `default-features = false`
        (the workspace entry's, where that one cuts) only where the declared package's defaults
        would turn a wanted feature on: elsewhere the line is no cut. `root`: the member's node,
        where the graph is another member's build (a library on the way); its first node by
        default."""
        root = root if root is not None else next(graph.nodes())
        on_the_way = [n for n in graph.dependencies(root) if n in distance]
        # First the lines on a path the rule counts (not kornia's through nalgebra alone, for
        # FC009); of lines as near, first those that turn the crate on (app's `zzz`, whose
        # `cpu` picks burn-ndarray, not its `aaa`, which only shares burn with it).
        counted = distances_to(graph, goal.node, goal.avoiding) if goal.avoiding else distance
        for declared in sorted(
            on_the_way,
            key=lambda n: (n not in counted, distance[n], not self._brings(n, goal, cfg), n),
        ):
            carries = self._defaults_carry(declared, goal, cfg)
            for site in self._sites(member, declared, goal, cfg):
                where, inherited = site, site.inherited
                if carries and inherited is not None and inherited.disables_defaults():
                    where = inherited  # the workspace entry whose `default-features = false` cuts
                cut = Cut.at(where, site, declared, carries)
                if cut is not None:
                    return cut
        return None

    def _sites(
        self, owner: Package, declared: Node, goal: Goal, cfg: TargetCfg
    ) -> list[DeclarationSite]:
        """The owner's lines declaring `declared`: `[target.X]` lines before the plain one (an
        edit there leaves other platforms' builds as they are: ndarray's `std` line, not the
        one wasm32 builds too), then those whose own features turn the crate on (the line
        asking for `flex`)."""
        sites = self.locator.declared_sites(owner, declared, cfg)
        if len(sites) < 2:
            return sites
        return sorted(
            sites, key=lambda s: (s.platform is None, not self._brings(declared, goal, cfg, s))
        )

    def _brings(
        self, declared: Node, goal: Goal, cfg: TargetCfg, site: DeclarationSite | None = None
    ) -> bool:
        """Whether the package at `declared`, with the features it has in this build (those
        the line at `site` asks for, where given), turns the goal's crate on, through the
        feature tables."""
        package = self.metadata.package_of(declared.package)
        crate = (goal.package.id, BUILT)
        starts = (BUILT, *(sorted(declared.features) if site is None else site.asked_features()))
        return package is not None and any(
            self.search.chain((package.id, f), crate, cfg) is not None for f in starts
        )

    def _defaults_carry(self, declared: Node, goal: Goal, cfg: TargetCfg) -> bool:
        """Whether the defaults of the package at `declared` turn on a wanted feature of the
        goal through the goal's build, or the goal is the crate itself."""
        package = self.metadata.package_of(declared.package)
        if package is None or not any(goal.wanted):
            return True
        crate = goal.package.id
        return any(
            self.search.chain((package.id, "default"), (crate, f), cfg, goal.within) is not None
            for f in goal.wanted
        )

    def _declaration_candidates(
        self,
        owner: Package,
        features_on: tuple[bool | None, list[str]],
        declared: Node,
        proximity: tuple[int, int, int],
        goal: Goal,
        cfg: TargetCfg,
    ) -> Iterator[Candidate]:
        """Edits of the owner's declarations of `declared`, and of the owner's features that
        ask for the dependency's; `features_on`: whether the owner's own `std` is on in this
        build (None: it has none), and its features that select the crate."""
        if (declared_info := self.metadata.package_of(declared.package)) is None:
            return
        with_std, selecting = features_on
        sites = self._sites(owner, declared, goal, cfg)
        bound = self.locator.bound_declarations(owner, declared)
        defaults_off = not any(d.uses_default_features for d in bound)
        optional = all(d.optional for d in bound)
        feature_sets = self._feature_sets(declared, declared_info, goal, cfg)
        carries = self._defaults_carry(declared, goal, cfg)
        for site in sites:
            editable = [s for s in (site.inherited, site) if s is not None]
            for features in feature_sets:
                if with_std is not None and self._needs_std(declared_info, features, goal, cfg):
                    if with_std:
                        yield self._asked_by_feature(
                            owner, declared, site, features, optional, carries, proximity
                        )
                    continue
                for where in editable:
                    yield self._candidate(
                        owner, declared, where, site, "add-features", features, proximity, carries
                    )
                for feature in selecting:
                    yield self._asked_by_feature(
                        owner, declared, site, features, optional, carries, proximity, feature
                    )
            if (
                not (with_std is not None and "std" in declared_info.implied("default"))
                and defaults_off
                and editable[0].disables_defaults()
                and "default" in declared_info.features
                # Defaults that turn no wanted feature on cannot deliver it: rerun's 93 members
                # each resolved sixteen such lines again (a third of its fix search), none clearing.
                and carries
            ):
                yield self._candidate(
                    owner, declared, editable[0], site, "remove-default-features", (), proximity
                )

    def _needs_std(
        self, declared: Package, features: tuple[str, ...], goal: Goal, cfg: TargetCfg
    ) -> bool:
        """Whether adding `features` to a declaration of `declared` turns on the crate's `std`."""
        std = (goal.package.id, "std")
        return any(self.search.chain((declared.id, f), std, cfg) is not None for f in features)

    def _asked_by_feature(
        self,
        owner: Package,
        declared: Node,
        site: DeclarationSite,
        features: tuple[str, ...],
        optional: bool,
        carries: bool,
        proximity: tuple[int, int, int],
        behind: str = "std",
    ) -> Candidate:
        """`features` of the dependency at `site` asked for by the owner's feature `behind`
        (`std = [..., "ndarray?/matrixmultiply-threading"]`, weak where the line is optional;
        `gpu = ["burn/wgpu", "burn/fusion"]`)."""
        values = tuple(f"{site.key}{'?' if optional else ''}/{f}" for f in features)
        index = self.what_if.index
        position = index.by_id[owner.id]
        edit = self.feature_edit(owner, behind, values)
        model = frozenset({MoreFeatureValues(position, behind, values)})
        cut = Cut.at(site, site, declared, carries)
        assert cut is not None  # every site found in a manifest has its key's span
        touches = frozenset({index.packages[position].ref})
        return Candidate((edit,), model, proximity, False, len(features), cut, touches)

    def _feature_sets(
        self, declared: Node, declared_info: Package, goal: Goal, cfg: TargetCfg
    ) -> list[tuple[str, ...]]:
        """Features to add to a declaration of `declared`: all wanted ones, then the first."""
        if declared.package == goal.node.package:
            return [goal.wanted]
        chosen: list[str] = []
        for feature in goal.wanted:
            options = [
                f
                for f in self.search.enabling_features(declared_info, goal.package, feature, cfg)
                if f != "default" and f not in declared.features
            ]
            if not options:
                if feature == goal.wanted[0]:
                    return []
                continue
            chosen.append(options[0])
        everything = tuple(dict.fromkeys(chosen))
        return [everything] if len(everything) < 2 else [everything, everything[:1]]

    def _candidate(
        self,
        owner: Package,
        declared: Node,
        where: DeclarationSite,
        site: DeclarationSite,
        action: Action,
        features: tuple[str, ...],
        proximity: tuple[int, int, int],
        carries: bool = True,
    ) -> Candidate:
        """The candidate editing `where` (the line at `site`, or the workspace entry it
        inherits), made once for every finding that meets it; its cut is the line's
        `default-features = false` only where the defaults `carries` a wanted feature."""
        removing = action == "remove-default-features"
        in_workspace_entry = where is not site
        owner_id = None if in_workspace_entry else owner.id
        key = (where.manifest.path, where.path, in_workspace_entry, owner_id, action, features)
        known = self._models.get(key)
        if known is None:
            in_model: list[ModelEdit] = []
            touched: set[PackageRef] = set()
            written = [Edit(where.manifest.path, where.path, action, features)]
            # One line, or every line that inherits the workspace entry. The model's features
            # in one order: two findings asking for the same ones in their own order (FC004's
            # fusion and autotune, FC005's autotune and fusion) share every build it resolves.
            lines = self.locator.inheriting_sites(where) if in_workspace_entry else [(owner, where)]
            asked = tuple(sorted(features))
            for package, line in lines:
                position = self.what_if.index.by_id[package.id]
                in_model.append(
                    MoreFeatures(position, line.key, line.kind, line.platform, asked, removing)
                )
                touched.add(self.what_if.index.packages[position].ref)
                if removing and line is not where and line.disables_defaults():
                    # A `workspace = true` line repeating `default-features = false` may not
                    # override the entry's defaults (an error since edition 2024): it goes too.
                    written.append(Edit(line.manifest.path, line.path, action))
            known = self._models[key] = (frozenset(in_model), frozenset(touched), tuple(written))
        model, touches, edits = known
        cut = Cut.at(where, site, declared, carries)
        assert cut is not None  # every site found in a manifest has its key's span
        size = 1000 if removing else len(features)  # every default: more than any list
        written_at_cut = cut.disables_defaults or in_workspace_entry
        return Candidate(edits, model, proximity, written_at_cut, size, cut, touches)


def _std_if(with_std: dict[str, bool | None], owner: Package, needs_std: bool) -> str | None:
    """`std`, where a new line of the owner goes behind its own `std` feature; else None."""
    return "std" if needs_std and with_std.get(owner.id) else None
