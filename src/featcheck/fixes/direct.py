"""Candidates that depend on the crate directly: a new `[dependencies]` line naming it, with the
missing features.

- The line goes into the member, or into a path package on the way whose own feature selects
  the crate (a library's `backend_ndarray = ["burn/ndarray"]`): there it is optional and that
  feature turns it on (`dep:KEY`), so a member that leaves the feature off (a GPU application
  depending on the library with `default-features = false`) builds nothing new. A feature
  selects the crate only where the package's build without it has none.
- Where `[workspace.dependencies]` declares the crate and cargo resolves that entry to the same
  package, a member's line inherits it (`KEY = { workspace = true, features = [...] }`): the
  next bump of the entry moves it too. Otherwise the line carries its own requirement, a caret
  on the locked version, `=` where the user pins the crate's family exactly.

Last, one candidate for a finding that several of a member's configurations share, where each
configuration selects the crate through a feature of its own (`across_builds`). A library's
`enc = ["dep:encoding_rs"]` and `enc2 = ["dep:encoding_rs"]` each bring the crate: one finding
covers both builds, and its fix must clear both. A new line behind `enc` leaves `enc2`'s build
as it was, and a plain line gives the crate to builds with neither (lewm-rs's `tract-nnef` and
`tract-onnx`): so what a candidate asks of one selecting feature is asked of the other too.
"""

from __future__ import annotations

import os
from collections import deque
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, NamedTuple

from featcheck.featureset import FeatureSelection
from featcheck.manifest.declarations import Cut, DeclarationSite, workspace_site
from featcheck.report import Action, Edit
from featcheck.semantics import semver
from featcheck.workspace.model import (
    DEP_FEATURE,
    FEATURE,
    NORMAL,
    MoreFeatureValues,
    NewDependency,
    crate_family,
)

if TYPE_CHECKING:  # the finders are handed these; direct.py only names their types
    from featcheck.fixes.counterfactual import WhatIf
    from featcheck.graph import DependencyGraph, Node
    from featcheck.locate import Locator
    from featcheck.workspace.model import ModelEdit, Package, PackageRef
    from featcheck.workspace.workspace import Workspace


@dataclass(frozen=True, eq=False)
class Candidate:
    """One candidate fix, as the candidate finders make it and the search ranks it."""

    edits: tuple[Edit, ...]
    model: frozenset[ModelEdit]
    proximity: tuple[int, int, int]
    """(new dependency, declaring package's distance from the member, declared's from crate)."""
    written_at_cut: bool
    """Edits where `default-features = false` acts, or the entry `workspace = true` inherits."""
    size: int
    cut: Cut
    """The declaration the finding points at when this candidate wins."""
    touches: frozenset[PackageRef]
    """Packages whose declarations change: only builds holding one can change."""


class Goal(NamedTuple):
    """What one finding's candidates deliver: features `wanted` of the crate at `node`, whose
    package is `package`."""

    node: Node
    package: Package
    wanted: tuple[str, ...]
    avoiding: frozenset[str] = frozenset()
    """Crates (as crates.io compares names) whose paths to the crate the rule does not count:
    FC009's nalgebra."""
    within: frozenset[PackageRef] | None = None
    """The packages of the finding's build: a weak `x?/f` of the defaults leads on only to
    them (where a cut lies). None: as if every weak one did (what a fix may turn on)."""


def new_requirement(node: Node, pinned: frozenset[str]) -> str:
    """The version requirement of a new direct dependency on `node`, as `--fix` writes it: a
    caret on the version the lockfile holds, `=` where the user pins that crate family
    exactly (`burn = "=0.21.0"` makes burn-flex `=0.21.0`: a caret would let it move alone)."""
    return f"={node.version}" if crate_family(node.name) in pinned else node.version


@dataclass
class DirectDependencies:
    """Makes the direct-dependency candidates of one audit."""

    metadata: Workspace
    locator: Locator
    what_if: WhatIf
    _entry: dict[str, DeclarationSite | None] = field(default_factory=dict, init=False)
    _selects: dict[tuple[int, str, frozenset[int], Node, str], bool] = field(
        default_factory=dict, init=False
    )

    def selecting_features(
        self,
        owner: Package,
        owner_node: Node,
        on_the_way: frozenset[int],
        goal: Goal,
        target: str,
    ) -> list[str]:
        """The features of `owner`, on in this build, that select the crate (`on_the_way`:
        index positions of the packages between the member and the crate): the owner's build
        without one has no crate. What they ask for is asked only where the crate is built."""
        if (position := self.what_if.index.by_id.get(owner.id)) is None:
            return []
        # An optional dependency's implicit feature too (burn_depth's `burn-import`): a value
        # for it writes its line (`feature_values`).
        selecting = []
        for feature in sorted((owner_node.features - {"default"}) & set(owner.features)):
            key = (position, feature, on_the_way, owner_node, target)
            if key not in self._selects:
                self._selects[key] = self._selects_crate(
                    position, feature, on_the_way
                ) and not self._built_without(owner, owner_node, feature, goal, target)
            if self._selects[key]:
                selecting.append(feature)
        if len(selecting) < 2:
            return selecting
        # First one whose build alone holds the crate: burn_jepa's `autogaze` turns on the
        # optional dependency on the way, and only `autogaze-ndarray`, which turns it on too,
        # has it bring burn-ndarray. Then the nearest: one another of them turns on
        # (argmin-math's `ndarray_v0_16-nolinalg` before `ndarray_latest-nolinalg`, which only
        # names it), as builds may name it alone.
        return sorted(
            selecting,
            key=lambda f: (
                not self._builds(position, [f], goal, target),
                not any(f in owner.implied(g) - {g} for g in selecting),
            ),
        )

    def _builds(self, position: int, features: list[str], goal: Goal, target: str) -> bool:
        """Whether the package at `position`, built with only `features`, holds the crate."""
        selection = FeatureSelection.of(features, no_default=True)
        graph = self.what_if.graph(frozenset(), position, target, selection)
        crate = goal.node.package
        return any(n.package == crate and not n.host for n in graph.named(crate.name))

    def _built_without(
        self, owner: Package, owner_node: Node, feature: str, goal: Goal, target: str
    ) -> bool:
        """Whether a workspace member's own build with the features it has here but `feature`
        (and those that turn it on), without defaults, still has the crate: then the feature
        does not select it, and a line behind the feature would leave the crate as it is in a
        build without it (bevy_burn_human's `native`, while bevy builds flate2 anyway)."""
        if owner.id not in self.metadata.member_ids:
            return False
        # Without the features that turn it on, and those only it turns on (`enc = ["arr"]`
        # turns on arr's implicit feature: keeping that would keep the crate).
        implied = owner.implied(feature)
        kept = [
            f for f in owner_node.features if f not in implied and feature not in owner.implied(f)
        ]
        return self._builds(self.what_if.index.by_id[owner.id], kept, goal, target)

    def _selects_crate(self, position: int, feature: str, on_the_way: frozenset[int]) -> bool:
        """Whether `feature` of the package turns on an optional dependency on the way to the
        crate, through the feature tables (a weak `dep?/f` turns nothing on)."""
        packages = self.what_if.index.packages
        seen = {(position, feature)}
        queue = deque(seen)
        while queue:
            at, name = queue.popleft()
            following: list[tuple[int, str]] = []
            for value in packages[at].features.get(name, ()):
                if value.kind == FEATURE:
                    following.append((at, value.name))
                    continue
                if value.weak:
                    continue
                for edge in packages[at].edges:
                    if edge.kind is not NORMAL or edge.name_in_toml != value.name:
                        continue
                    if edge.optional and edge.dep in on_the_way:
                        return True
                    asked = [r.name for r in edge.requested if r.kind == FEATURE]
                    if value.kind == DEP_FEATURE:
                        asked.append(value.dep_feature)
                    following.extend((edge.dep, f) for f in asked)
            for state in following:
                if state not in seen:
                    seen.add(state)
                    queue.append(state)
        return False

    def candidate(
        self, owner: Package, behind: str | None, goal: Goal, cut: Cut, depth: int = 0
    ) -> Iterator[Candidate]:
        """The package (the member, or a workspace library `depth` edges from it) depends on
        the crate, behind its feature `behind` (None: plainly), unless it already declares it."""
        backend, wanted = goal.node, goal.wanted
        if self._declares(owner, backend.name):
            return
        entry = self._workspace_entry(backend) if owner.id in self.metadata.member_ids else None
        optional = behind is not None
        if entry is None and backend.package.is_local:
            return  # a line with only a version would bring crates.io's package, not this one
        if entry is None:
            pinned = self.metadata.pinned_families
            key, requested, version = backend.name, wanted, new_requirement(backend, pinned)
            action: Action = "add-optional-dependency" if optional else "add-dependency"
        else:
            key = entry.key
            if key != backend.name and self._declares(owner, key):
                return
            value = entry.value if isinstance(entry.value, dict) else {}
            inherited = [f for f in value.get("features", ()) if isinstance(f, str)]
            defaults = (
                ["default"]
                if not entry.disables_defaults() and "default" in goal.package.features
                else []
            )
            requested, version = (*inherited, *wanted, *defaults), ""
            action = "inherit-optional-dependency" if optional else "inherit-dependency"
        manifest = owner.manifest_path
        # Beside the line that brings the crate, in its `[target.X.dependencies]` table where it
        # is one: iroh-dns's uuid came only on non-wasm targets, and a plain line gave it to wasm.
        platform = cut.site.platform if cut.site.manifest.path == manifest else None
        platform = platform or self._arrives_only_on(goal)
        table = ("target", platform, "dependencies") if platform else ("dependencies",)
        edits = [Edit(manifest, (*table, key), action, wanted, version)]
        if behind is not None:
            edits.append(self.feature_edit(owner, behind, (f"dep:{key}",)))
        index = self.what_if.index
        position, dep = index.by_id[owner.id], index.by_id[goal.package.id]
        model = frozenset({NewDependency(position, dep, key, requested, behind, platform)})
        touches = frozenset({index.packages[position].ref})
        yield Candidate(tuple(edits), model, (1, depth, 0), False, len(wanted), cut, touches)

    def local_owners(
        self, graph: DependencyGraph, root: Node, distance: dict[Node, int]
    ) -> list[tuple[Node, int, Package]]:
        """Path packages on the way to the crate with their distance from the member: those
        whose declarations are bound (not one outside the checkout, nor one left unread)."""
        found: list[tuple[Node, int, Package]] = []
        depth = {root: 0}
        queue = deque([root])
        while queue:
            node = queue.popleft()
            package = self.metadata.package_of(node.package) if node.package.is_local else None
            if package is not None and package.id in self.metadata.written:
                found.append((node, depth[node], package))
            for dependency in sorted(graph.dependencies(node)):
                if dependency in distance and dependency not in depth:
                    depth[dependency] = depth[node] + 1
                    queue.append(dependency)
        return found

    def _arrives_only_on(self, goal: Goal) -> str | None:
        """The one `[target.X]` table every declaration of the crate in the build's packages
        sits in (encoding_rs declares simdutf8 for x86 and aarch64 only): a new line goes in
        the same table, or the member would build the crate where nothing did (wasm32)."""
        if goal.within is None:
            return None
        table, crate = self.metadata.packages, goal.package.index
        dependents = (table[at] for at in self.metadata.dependents_at.get(crate, ()))
        platforms = {
            edge.platform
            for package in dependents
            if package.ref in goal.within
            for edge in package.edges
            if edge.dep == crate and edge.kind is NORMAL
        }
        return platforms.pop() if len(platforms) == 1 else None

    def written_features(self, package: Package) -> set[str]:
        """The features the package's manifest writes in [features] (not the implicit ones of
        its optional dependencies, which a fix writes first: `feature_values`)."""
        written = self.locator.manifests.get(package.manifest_path).get("features")
        return set(written) if isinstance(written, dict) else set()

    def feature_edit(self, package: Package, feature: str, values: tuple[str, ...]) -> Edit:
        """`values` added to the package's `feature` (`feature_values`)."""
        written = feature_values(self.written_features(package), feature, values)
        return Edit(package.manifest_path, ("features", feature), "add-feature-values", written)

    def _declares(self, package: Package, key: str) -> bool:
        """Whether the package's `[dependencies]` table already has `key`, or a line naming
        the package `key` itself (`package = ...`, not one it inherits)."""
        return any(
            site.path[0] == "dependencies"
            and (site.key == key or (site.inherited is None and site.package == key))
            for site in self.metadata.written[package.id].sites
        )

    def _workspace_entry(self, backend: Node) -> DeclarationSite | None:
        """The `[workspace.dependencies]` entry cargo resolves to the crate's package: its
        name, and either a requirement the locked version meets, from crates.io (no path, git
        or other registry), or the path of the crate's own package in the workspace."""
        if backend.name in self._entry:
            return self._entry[backend.name]
        found = None
        path = self.metadata.root / "Cargo.toml"
        root = self.locator.manifests.get(path) if path.is_file() else None
        table = root.get("workspace", "dependencies") if root is not None else None
        if root is not None and isinstance(table, dict):
            for key in table:
                site = workspace_site(root, str(key))
                if site is not None and site.package == backend.name and self._same(site, backend):
                    found = site
                    break
        self._entry[backend.name] = found
        return found

    def _same(self, site: DeclarationSite, backend: Node) -> bool:
        """Whether cargo resolves the workspace entry at `site` to the crate's package."""
        value = site.value if isinstance(site.value, dict) else {}
        if backend.package.is_local:
            package = self.metadata.package_of(backend.package)
            written = value.get("path")
            return (
                package is not None
                and isinstance(written, str)
                and os.path.normpath(self.metadata.root / written)
                == os.path.normpath(package.manifest_path.parent)
            )
        if any(k in value for k in ("path", "git", "registry", "registry-index")):
            return False
        return site.version is not None and semver.matches(site.version, backend.version)


Elsewhere = tuple[frozenset[str], list[str]]
"""One other build of the finding: the member's features on in it, and those of them that select
the crate (`DirectDependencies.selecting_features`)."""


def across_builds(
    found: Iterable[Candidate],
    member: Package,
    position: int,
    elsewhere: list[Elsewhere],
    written: set[str],
) -> Iterator[Candidate]:
    """Each candidate asking through one feature of the member (`position` in the index), with
    the same values asked of a feature that selects the crate in each other build without it;
    none where some other build has no such feature. `written`: the features the member's
    manifest writes."""
    for candidate in found:
        asked = [
            edit
            for edit in candidate.edits
            if edit.action == "add-feature-values" and edit.manifest == member.manifest_path
        ]
        if len(asked) != 1 or asked[0].declaration[-1] == "std":  # std's builds are on purpose
            continue
        edit, more = asked[0], dict[str, None]()
        for features, selecting in elsewhere:
            if edit.declaration[-1] in features:
                continue
            if not selecting:
                break
            more.setdefault(selecting[0])
        else:
            if more:
                values, name = edit.features, str(edit.declaration[-1])
                if name not in written:  # after the implicit feature's `dep:NAME`
                    values = values[1:]
                edits = [
                    Edit(
                        edit.manifest,
                        ("features", f),
                        edit.action,
                        feature_values(written, f, values),
                    )
                    for f in more
                ]
                model = [MoreFeatureValues(position, f, values) for f in more]
                yield replace(
                    candidate,
                    edits=(*candidate.edits, *edits),
                    model=candidate.model | frozenset(model),
                )


def feature_values(written: set[str], feature: str, values: tuple[str, ...]) -> tuple[str, ...]:
    """What an `add-feature-values` edit writes to add `values` to the package's `feature`
    (`written`: those its manifest writes). An optional dependency's implicit feature gets its
    line, `dep:NAME` first: that keeps what it turned on (an `x/f` value still turns on the
    feature `x`, and cargo makes no implicit feature beside it)."""
    return values if feature in written else (f"dep:{feature}", *values)
