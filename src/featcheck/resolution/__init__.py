"""featcheck's own feature resolution: cargo's feature resolver over the workspace model.

Entry points: `resolve_builds` (graphs of every member on every target, equal to what
`cargo tree -e normal -p MEMBER --target T` prints, from one `cargo metadata` call),
`resolver_version` (which resolver the workspace root selects). `resolve_configurations`
resolves members under cargo's feature selection flags (`featureset.FeatureSelection`).
"""

from featcheck.resolution.features import FeatureSelectionError
from featcheck.resolution.resolver import resolve_builds, resolve_configurations
from featcheck.resolution.version import resolver_version

__all__ = [
    "FeatureSelectionError",
    "resolve_builds",
    "resolve_configurations",
    "resolver_version",
]
