"""featcheck's own feature resolution: cargo's feature resolver over `cargo metadata` output.

Entry points: `resolve_builds` (graphs of every member on every target, equal to what
`cargo tree -e normal -p MEMBER --target T` prints, from one `cargo metadata` call),
`resolver_version` (which resolver the workspace root selects), `target_cfgs` (the cfg of each
target and of the host through `CargoRunner`), and `build_index` to index a metadata output once
when resolving it several times.
"""

from featcheck.resolution.index import PackageIndex, build_index
from featcheck.resolution.resolver import resolve_builds, target_cfgs
from featcheck.resolution.version import resolver_version

__all__ = ["PackageIndex", "build_index", "resolve_builds", "resolver_version", "target_cfgs"]
