"""When a build actually uses a crate, rather than merely linking it.

burn-flex can be linked without being the backend (burn's 0.22 development branch links it into
every build, burn-train pulls it in); gemm and matrixmultiply come in under burn's own backends.
A rule must fire only where the crate does the work, so each rule asks one of these questions.
"""

from __future__ import annotations

from featcheck.graph import Node
from featcheck.rules.base import BuildView

# Packages whose `flex` feature selects the Flex backend (burn >= 0.21).
_FLEX_SELECTORS = ("burn", "burn-core", "burn-tensor", "burn-dispatch")


def flex_selection(view: BuildView, node: Node) -> str | None:
    """Why Flex counts as selected for this burn-flex node, or None if it is not."""
    if not view.structured:
        return "burn-flex is in the build"
    ancestors = view.graph.ancestors(node)
    for ancestor in sorted(ancestors):
        if ancestor.name in _FLEX_SELECTORS and "flex" in ancestor.features:
            return f"the `flex` feature of {ancestor.name} {ancestor.version} selects Flex"
    return direct_dependency(view, node)


def direct_dependency(view: BuildView, node: Node) -> str | None:
    """Evidence when a package the user owns (a path package) depends on `node` directly."""
    if not view.structured:
        return f"{node.name} is in the build"
    for ancestor in sorted(view.graph.ancestors(node)):
        if ancestor.package.is_local and node in view.graph.dependencies(ancestor):
            return f"{node.name} is a direct dependency of {ancestor.name}"
    return None


def present(view: BuildView, node: Node) -> str:
    """For crates that are optional wherever they are used: being built means being selected."""
    return f"{node.name} is in the build"


def used_outside(view: BuildView, node: Node, covered_by: tuple[str, ...]) -> str | None:
    """Evidence when a path package reaches `node` without going through `covered_by` crates.

    gemm under burn-flex and matrixmultiply under burn-ndarray are the backends' own business
    (their rules report them); the same crates reached another way are the user's own use.
    """
    if not view.structured:
        return None
    blocked = frozenset(n for n in view.graph.nodes() if n.name in covered_by)
    for root in view.roots:
        path = view.graph.path(root, node, avoiding=blocked)
        if path is not None:
            via = path[-2].name if len(path) > 1 else root.name
            if not covered_by:
                return f"{node.name} is a dependency of {via}"
            return f"{node.name} is used by {via}, not only through {', '.join(covered_by)}"
    return None
