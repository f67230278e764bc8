"""featcheck's own feature resolution: cargo's feature resolver over `cargo metadata` output.

Entry points: `resolve_builds` (graphs of every member on every target, equal to what
`cargo tree -e normal -p MEMBER --target T` prints, from one `cargo metadata` call),
`resolver_version` (which resolver the workspace root selects), `target_cfgs` (the cfg of each
target and of the host through `CargoRunner`), and `build_index` to index a metadata output once
when resolving it several times. `resolve_configurations` resolves members under cargo's
feature selection flags (`featureset.FeatureSelection`).
"""

from featcheck.resolution.features import FeatureSelectionError
from featcheck.resolution.index import PackageIndex, build_index
from featcheck.resolution.resolver import resolve_builds, resolve_configurations, target_cfgs
from featcheck.resolution.version import resolver_version

__all__ = [
    "FeatureSelectionError",
    "PackageIndex",
    "build_index",
    "resolve_builds",
    "resolve_configurations",
    "resolver_version",
    "target_cfgs",
]
