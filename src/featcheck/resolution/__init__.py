"""featcheck's own feature resolution: cargo's feature resolver over the workspace model.

`cargo tree -e normal -p MEMBER --target T` costs a cargo start per member and target; the same
answer follows from `cargo metadata --format-version 1` (every package's feature table and
declarations, and the resolved edges) plus each target's `rustc --print cfg`. `resolve_builds`
runs cargo's feature resolver over that data for each (member, target) and returns the graph
`cargo tree` would print, so the rest of featcheck can use either path.

Which resolver a workspace uses `cargo metadata` does not say. cargo takes it from the workspace
root manifest only (members' settings are ignored, with a warning): `[workspace] resolver`, else
`[package] resolver`, else the root package's edition (2021 gives "2", 2024 gives "3", older
editions "1"). A virtual workspace without `resolver` gets "1" (cargo warns about it).
"""

from __future__ import annotations

import gc
from collections.abc import Mapping, Sequence
from enum import Enum
from typing import Any

from featcheck.deadline import NO_DEADLINE, Deadline
from featcheck.errors import FeatcheckError
from featcheck.featureset import DEFAULT, FeatureSelection
from featcheck.graph import DependencyGraph
from featcheck.resolution.context import BuildContext
from featcheck.resolution.features import FeatureSelectionError
from featcheck.resolution.session import TargetSession
from featcheck.semantics.cfg import TargetCfg
from featcheck.workspace.workspace import Workspace

__all__ = [
    "FeatureSelectionError",
    "resolve_builds",
    "resolve_configurations",
    "resolver_version",
]


_EDITION_RESOLVER = {"2015": 1, "2018": 1, "2021": 2, "2024": 3}


def _parse_resolver(value: object, where: str) -> int:
    if str(value) in ("1", "2", "3"):
        return int(str(value))
    raise FeatcheckError(f"unknown feature resolver {value!r} in {where} (cargo knows 1, 2, 3)")


def resolver_version(root_manifest_data: Mapping[str, Any], root_edition: str | None = None) -> int:
    """`root_edition` is the root package's edition as `cargo metadata` reports it (`edition` of
    that package: inheritance from `[workspace.package]` already applied); when None it is read
    from the manifest, following `edition.workspace = true`."""
    workspace = root_manifest_data.get("workspace")
    package = root_manifest_data.get("package")
    if isinstance(workspace, Mapping) and "resolver" in workspace:
        return _parse_resolver(workspace["resolver"], "[workspace]")
    if not isinstance(package, Mapping):
        return 1  # virtual workspace without `resolver`
    if "resolver" in package:
        return _parse_resolver(package["resolver"], "[package]")
    if root_edition is None:
        edition = package.get("edition", "2015")
        if isinstance(edition, Mapping) and edition.get("workspace"):
            inherited = workspace.get("package", {}) if isinstance(workspace, Mapping) else {}
            edition = inherited.get("edition", "2015")
        root_edition = str(edition)
    # Future editions keep the newest resolver we know.
    return _EDITION_RESOLVER.get(root_edition, 3 if root_edition > "2024" else 1)


def _member_index(index: Workspace, member: str) -> int:
    """A member by package id, or by name when that names exactly one workspace member."""
    if member in index.by_id:
        return index.by_id[member]
    named = [i for i in index.member_ids if index[i].ref.name == member]
    if len(named) == 1:
        return index.by_id[named[0]]
    raise FeatcheckError(f"{member!r} is not a package of this cargo metadata output")


class _Current(Enum):
    FROM_METADATA = "from metadata"


def resolve_builds(
    index: Workspace,
    members: Sequence[str],
    cfgs: Sequence[TargetCfg],
    resolver: int,
    *,
    host: TargetCfg | None = None,
    current: str | _Current | None = _Current.FROM_METADATA,
    features: FeatureSelection = DEFAULT,
    unify_workspace: bool = False,
) -> dict[tuple[str, str], DependencyGraph]:
    """The graph of `cargo build -p MEMBER --target T` for every member and target, keyed by
    (member package id, target triple).

    `index` is the workspace's package table: from `cargo metadata --format-version 1` without
    `--filter-platform` or feature flags (its resolve must hold every platform's edges), or from
    files (`--no-exec`). `host` is the cfg of the machine cargo runs on, which build scripts,
    proc-macros and their dependencies are built for (their `[target.X]` tables are evaluated
    against it); by default each target's own, exact when auditing the host target.

    `current` is the package id of the manifest cargo would run for, None for a virtual
    manifest (`build_requests`); by default metadata's `resolve.root`, right whenever the builds
    are meant for the manifest metadata ran for. `features` is the feature selection as it
    applies to each member (`featureset.member_selection`); the metadata must then come from
    `cargo metadata --all-features`, whose resolve holds every optional dependency. Raises
    `FeatureSelectionError` when a member does not define a feature it is given.
    `unify_workspace`: see `BuildContext`.
    """
    jobs = [(member, features) for member in members]
    graphs = resolve_configurations(
        index, jobs, cfgs, resolver, host=host, current=current, unify_workspace=unify_workspace
    )
    return {(member, triple): graph for (member, triple, _), graph in graphs.items()}


Job = tuple[str, FeatureSelection]
"""A member (package id or unique name) and the feature selection applied to it."""


def resolve_configurations(
    index: Workspace,
    jobs: Sequence[Job],
    cfgs: Sequence[TargetCfg],
    resolver: int,
    *,
    host: TargetCfg | None = None,
    current: str | _Current | None = _Current.FROM_METADATA,
    errors: dict[Job, FeatureSelectionError] | None = None,
    deadline: Deadline = NO_DEADLINE,
    unify_workspace: bool = False,
    sessions: dict[str, TargetSession] | None = None,
) -> dict[tuple[str, str, FeatureSelection], DependencyGraph]:
    """`resolve_builds` for many (member, feature selection) pairs at once, keyed by (member
    package id, target triple, selection). All pairs on one target share one session, so
    what lies below the members is resolved once per distinct request, whatever the
    configuration. A pair that cannot resolve (`FeatureSelectionError`) is recorded in
    `errors` and left out, or raised when `errors` is None. `deadline` is checked before each
    pair. `sessions`, where given, gets each target's session by triple (what-if builds
    continue from its resolutions)."""
    if current is _Current.FROM_METADATA:
        current = index.resolve_root
    current_position = None if current is None else _member_index(index, current)
    positions = [(_member_index(index, job[0]), job) for job in jobs]
    graphs: dict[tuple[str, str, FeatureSelection], DependencyGraph] = {}
    # Pause the cyclic garbage collector: resolving allocates many small objects and none are
    # cycles, and with a big metadata already in memory each pass would rescan all of it (it
    # nearly doubles the time for hundreds of members).
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        for cfg in cfgs:
            context = BuildContext(index, cfg, host or cfg, resolver, unify_workspace)
            session = TargetSession(context)
            if sessions is not None:
                sessions[context.target.triple] = session
            for position, job in positions:
                selection = job[1]
                if errors is not None and job in errors:
                    continue
                deadline.check("resolving the build configurations")
                key = (index.packages[position].id, context.target.triple, selection)
                try:
                    graphs[key] = session.graph(position, current_position, selection)

                except FeatureSelectionError as error:
                    if errors is None:
                        raise
                    errors[job] = error
    finally:
        if was_enabled:
            gc.enable()
    return graphs
