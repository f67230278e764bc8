"""Which feature of a declared dependency would turn a missing backend feature on.

Follows the real feature tables from `cargo metadata` (`f`, `dep:d`, `d/f`, `d?/f`, and the
features and defaults each dependency declaration switches on), never a table of burn versions:
burn 0.22 passes `rayon` through to burn-flex, burn 0.21 does not, and only the tables can say.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator

from featcheck.cargo import semver
from featcheck.cargo.metadata import DependencyDeclaration, PackageInfo, WorkspaceMetadata
from featcheck.graph import shortest_path

_State = tuple[str, str]  # (package id, feature)


class FeatureSearch:
    """Reachability over the feature tables of every package in the resolve."""

    def __init__(self, metadata: WorkspaceMetadata) -> None:
        self.metadata = metadata
        self._by_name: dict[str, list[PackageInfo]] = {}
        for package in metadata.packages.values():
            self._by_name.setdefault(package.name, []).append(package)

    def resolve(self, declaration: DependencyDeclaration) -> PackageInfo | None:
        """The package a declaration resolves to (the newest matching version in the resolve)."""
        candidates = [
            p
            for p in self._by_name.get(declaration.name, [])
            if semver.matches(declaration.req, p.version)
        ]
        return max(
            candidates, key=lambda p: semver.parse_version(p.version) or (0, 0, 0, 0), default=None
        )

    def _declarations(self, package: PackageInfo, key: str) -> list[DependencyDeclaration]:
        return [d for d in package.dependencies if d.kind == "normal" and d.key == key]

    def _activate(self, package: PackageInfo, key: str) -> Iterator[_State]:
        """States switched on when `package` turns on its dependency `key`."""
        for declaration in self._declarations(package, key):
            dependency = self.resolve(declaration)
            if dependency is None:
                continue
            if declaration.uses_default_features:
                yield dependency.id, "default"
            for feature in declaration.features:
                yield dependency.id, feature

    def _expand(self, state: _State) -> Iterator[_State]:
        package = self.metadata.packages[state[0]]
        for item in package.features.get(state[1], ()):
            if item.startswith("dep:"):
                yield from self._activate(package, item[4:])
            elif "/" in item:
                key, feature = item.split("/", 1)
                weak = key.endswith("?")
                key = key.rstrip("?")
                if not weak:
                    yield from self._activate(package, key)
                for declaration in self._declarations(package, key):
                    dependency = self.resolve(declaration)
                    if dependency is not None:
                        yield dependency.id, feature
            else:
                yield package.id, item

    def chain(self, start: _State, goal: _State) -> list[_State] | None:
        """The shortest chain of features from `start` to `goal`, both included, or None.

        Weak `dep?/feature` entries are followed as if the dependency were on: the chain says
        how the feature *would* arrive, which is what a user needs to see.
        """
        packages = self.metadata.packages
        return shortest_path(
            start, goal, lambda state: [s for s in self._expand(state) if s[0] in packages]
        )

    def reaches(self, start: _State, goal: _State) -> bool:
        """True when switching on `start` switches on `goal`."""
        return self.chain(start, goal) is not None

    def describe(self, chain: list[_State]) -> str:
        """`burn default → burn-core/default → … → burn-flex/rayon`, naming each package once."""
        packages = self.metadata.packages
        first_package, first_feature = chain[0]
        parts = [f"{packages[first_package].name} {first_feature}"]
        for (previous, _), (package_id, feature) in itertools.pairwise(chain):
            # A feature of the same package needs no package name again.
            name = "" if package_id == previous else f"{packages[package_id].name}/"
            parts.append(name + feature)
        return " → ".join(parts)

    def enabling_features(
        self, declared: PackageInfo, goal_package: PackageInfo, goal_feature: str
    ) -> list[str]:
        """Features of `declared` that switch on `goal_feature` of `goal_package`, best first.

        A feature named like the goal comes first, `default` last. Features that only get
        there by switching on `default` themselves (burn's `doc`) are left out: they are the
        defaults under another name, and advice to turn on `doc` would mislead.
        """
        goal = (goal_package.id, goal_feature)
        defaults = (declared.id, "default")
        found = [
            f
            for f in declared.features
            if self.reaches((declared.id, f), goal)
            and (f == "default" or not self.reaches((declared.id, f), defaults))
        ]
        return sorted(found, key=lambda f: (f != goal_feature, f == "default", len(f), f))
