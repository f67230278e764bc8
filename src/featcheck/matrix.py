"""Which build configurations an audit resolves for each member, and how their findings merge.

The user asks for configurations as cargo's flags (`--features`, `--no-default-features`,
`--all-features`, from the command line or the `configurations` setting) and `--each-feature`.
Each one applies to every selected member as `cargo build -p A -p B --features ...` applies it
(resolver 2 and 3: a member gets the features it defines; see `featureset.member_selection`),
so two configurations can come down to the same flags for a member and are then resolved once.
A configuration cargo would refuse is reported and skipped; the others are still audited.

Many configurations build the same dependencies: `--each-feature` over a chain of features
(`a = ["b"]`, `b = ["c"]`, …) asks for n builds whose closures hold n, n-1, … features, and
resolving each one alone costs the square of n. What a build asks of the packages below the
member is only the set of values outside the member's own table that its selection reaches
(`dep:x`, `x/f`, `x?/f`); two selections that reach the same set build the same dependencies.
So each such class is resolved once (`ConfigurationPlan.same_as`), and that set is computed
once per feature over the table's strongly connected components, sharing sets along chains:
linear in the number of features for a fixed set of dependency values. Members a rule looks at
themselves (their own features decide a finding) are resolved configuration by configuration.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TypeVar

from featcheck.deadline import NO_DEADLINE, Deadline
from featcheck.featureset import (
    DEFAULT,
    FeatureSelection,
    each_feature,
    member_selection,
    unmatched,
)
from featcheck.report import Edit, Finding, FindingIdentity
from featcheck.workspace.model import FEATURE, FeatureValue, Package, parse_feature_value

_Build = TypeVar("_Build")


@dataclass
class ConfigurationPlan:
    selections: dict[str, list[FeatureSelection]] = field(default_factory=dict)
    """By member package id, in audit order; the first one is the member's base build."""
    errors: list[str] = field(default_factory=list)
    """One line per configuration cargo would refuse, naming it."""
    same_as: dict[tuple[str, FeatureSelection], FeatureSelection] = field(default_factory=dict)
    """(member id, selection) -> the selection resolved for it, one that builds the very same
    dependencies; absent when it is resolved itself."""

    def distinct_jobs(self) -> list[tuple[str, FeatureSelection]]:
        return [
            (member, s)
            for member, found in self.selections.items()
            for s in found
            if (member, s) not in self.same_as
        ]

    def share(self, builds: dict[tuple[str, str, FeatureSelection], _Build]) -> None:
        """Give every selection resolved as another that one's build, on each target."""
        resolved_as: dict[tuple[str, FeatureSelection], list[FeatureSelection]] = {}
        for (member, selection), same in self.same_as.items():
            resolved_as.setdefault((member, same), []).append(selection)
        for (member, target, selection), build in list(builds.items()):
            for same in resolved_as.get((member, selection), ()):
                builds[(member, target, same)] = build

    def refuse(self, member: str, selection: FeatureSelection, error: str) -> None:
        """Drop one pair that did not resolve, and those resolved as it, and say why."""
        dropped = {selection} | {
            s for (m, s), same in self.same_as.items() if m == member and same == selection
        }
        self.selections[member] = [s for s in self.selections[member] if s not in dropped]
        self.errors.extend(f"configuration `{s.label}`: {error}" for s in sorted(dropped))


def plan_configurations(
    members: Sequence[Package],
    requested: Sequence[FeatureSelection],
    *,
    each: bool = False,
    legacy_root: str | None = None,
    self_audited: frozenset[str] = frozenset(),
    deadline: Deadline = NO_DEADLINE,
) -> ConfigurationPlan:
    """`legacy_root` is the id of the root package of a resolver 1 workspace, where cargo
    applies the flags to that package only: other members are audited with their defaults
    there, and a configuration for them is reported as refused. Members in `self_audited`
    (ids) are never resolved as another configuration (see the module docstring)."""
    plan = ConfigurationPlan()
    valid: list[FeatureSelection] = []
    for selection in requested or [DEFAULT]:
        error = unmatched(selection, members)
        if error is not None:
            plan.errors.append(f"configuration `{selection.label}`: {error}")
        else:
            valid.append(selection)
    for member in members:
        deadline.check("planning the build configurations")
        found: list[FeatureSelection] = []
        for selection in valid:
            applied = member_selection(selection, member)[0]
            found += each_feature(applied, member.features) if each else [applied]
        if legacy_root is not None and member.id != legacy_root:
            if any(not s.is_default for s in found):
                plan.errors.append(
                    f"member {member.name}: resolver 1 applies feature flags only to the "
                    'root package; audited with its default features (set `resolver = "2"`)'
                )
            found = [DEFAULT]
        plan.selections[member.id] = list(dict.fromkeys(found))
        if member.id in self_audited:
            continue
        # Each selection that builds what an earlier one does (the same dependency values
        # reached, the same flags) is resolved as that one.
        effects = FeatureEffects(member.features)
        first: dict[tuple[bool, frozenset[FeatureValue]], FeatureSelection] = {}
        for selection in plan.selections[member.id]:
            if selection.all_features:
                continue
            deadline.check("planning the build configurations")
            default = () if selection.no_default_features else ("default",)
            key = (selection.no_default_features, effects.of((*selection.features, *default)))
            if key in first:
                plan.same_as[(member.id, selection)] = first[key]
            else:
                first[key] = selection
    return plan


class FeatureEffects:
    """For a package's `[features]` table: the values outside the table (`dep:x`, `x/f`,
    `x?/f`, and names it does not define) that turning features on reaches."""

    def __init__(self, table: Mapping[str, tuple[FeatureValue, ...]]) -> None:
        self._table = table
        self._reached: dict[str, frozenset[FeatureValue]] = {}

    def of(self, seeds: Sequence[str]) -> frozenset[FeatureValue]:
        """The values reached from `seeds` (a name the table lacks is reached as it is)."""
        found: set[FeatureValue] = set()
        for seed in seeds:
            if seed in self._table:
                found |= self._of_feature(seed)
            elif seed != "default":  # no default feature: nothing to reach
                found.add(parse_feature_value(seed))
        return frozenset(found)

    def _children(self, name: str) -> tuple[list[str], set[FeatureValue]]:
        """A feature's own features, and the values outside the table it names."""
        own: list[str] = []
        outside: set[FeatureValue] = set()
        for value in self._table.get(name, ()):
            if value.kind == FEATURE and value.name in self._table:
                own.append(value.name)
            else:
                outside.add(value)
        return own, outside

    def _of_feature(self, start: str) -> frozenset[FeatureValue]:
        """Tarjan's components from `start`, iteratively (a chain of thousands of features must
        not hit the recursion limit); each component's set is made once, from its members'
        outside values and the sets of the components below it."""
        if start in self._reached:
            return self._reached[start]
        index: dict[str, int] = {}
        low: dict[str, int] = {}
        stack: list[str] = []
        depth: dict[str, int] = {}  # where on `stack` each name was pushed
        work: list[tuple[str, int]] = [(start, 0)]
        children: dict[str, list[str]] = {}
        while work:
            name, position = work.pop()
            if position == 0:
                index[name] = low[name] = len(index)
                depth[name] = len(stack)
                stack.append(name)
                children[name] = self._children(name)[0]
            own = children[name]
            if position < len(own):
                work.append((name, position + 1))
                child = own[position]
                if child not in index and child not in self._reached:
                    work.append((child, 0))
                elif child in low and child not in self._reached:
                    low[name] = min(low[name], index[child])
                continue
            for child in own:
                if child in low and child not in self._reached:
                    low[name] = min(low[name], low[child])
            if low[name] == index[name]:
                component = stack[depth[name] :]
                del stack[depth[name] :]
                self._close(component, children)
        return self._reached[start]

    def _close(self, component: list[str], children: Mapping[str, list[str]]) -> None:
        """One component's set: shared with the component below when it adds nothing."""
        members = set(component)
        outside: set[FeatureValue] = set()
        below: list[frozenset[FeatureValue]] = []
        for name in component:
            outside |= self._children(name)[1]
            below += [self._reached[c] for c in children[name] if c not in members]
        largest = max(below, key=len, default=frozenset())
        if outside <= largest and all(s is largest or s <= largest for s in below):
            reached = largest
        else:
            reached = frozenset(outside.union(*below))
        for name in component:
            self._reached[name] = reached


def merge_configurations(findings: Sequence[Finding]) -> list[Finding]:
    """One finding per identity and fix, in first-seen order, listing every configuration it
    occurs in (first = the one reported: the member's base build when it is there). Builds
    whose fixes differ stay apart: a library's `wgpu` and `vulkan` builds each take the fix
    behind their own feature, and one finding would name one of them for both."""
    merged: dict[tuple[FindingIdentity, tuple[Edit, ...] | None], Finding] = {}
    for finding in findings:
        # `--no-exec` confirms none: its first unconfirmed fix is the one its words name.
        fix = finding.fix or next(iter(finding.alternatives), None)
        key = (finding.identity, None if fix is None else fix.edits)
        seen = merged.setdefault(key, finding)
        if seen is not finding:
            known = set(seen.configurations)  # a set: a finding may be in thousands of builds
            extra = [c for c in finding.configurations if c not in known]
            merged[key] = replace(seen, configurations=(*seen.configurations, *extra))
    return list(merged.values())
