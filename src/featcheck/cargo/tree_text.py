"""Parse the text of `cargo tree -f '{p} [{f}]'` into a dependency graph with features.

The same parser serves both ways featcheck reads cargo: the output of its own `cargo tree` calls
(always `--prefix depth`, unambiguous) and text a user saved from a terminal or a CI log (any
`--prefix`, box or ascii characters, inverted or not, with `[dev-dependencies]` headers).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from featcheck.graph import DependencyGraph, Node
from featcheck.workspace.model import PackageRef

# A GitHub Actions log line starts with an ISO timestamp; saved logs keep it.
_LOG_TIMESTAMP = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z ")
# Characters that `--prefix indent` draws, in `--charset utf8` and `--charset ascii`.
_INDENT_CHARS = "│├└─|`- \u00a0"
_SECTION_HEADER = re.compile(r"^\[(dev|build)-dependencies\]$")
# `name vVERSION<suffixes> [features]` with an optional ` (*)` mark for a repeated node.
_NODE = re.compile(
    r"^(?P<name>[A-Za-z_][A-Za-z0-9_-]*) v(?P<version>[0-9][^\s]*)"
    r"(?P<suffixes>(?: \([^\[]*?\))*)"
    r" \[(?P<features>[^\]]*)\]"
    r"(?P<repeated> \(\*\))?\s*$"
)
_FEATURELESS_NODE = re.compile(r"^(?P<name>[A-Za-z_][A-Za-z0-9_-]*) v(?P<version>[0-9][^\s]*)")


class TreeTextError(ValueError):
    """The text is not `cargo tree -f '{p} [{f}]'` output."""

    def __init__(self, message: str, line: int | None = None) -> None:
        super().__init__(message)
        self.line = line


@dataclass
class ParsedTree:
    graph: DependencyGraph
    inverted: bool
    """True when the text came from `cargo tree -i` (children are dependents)."""
    has_structure: bool
    """False for `--prefix none`, where no edges can be recovered."""
    saw_dev_or_build_sections: bool
    """True when `[dev-dependencies]`/`[build-dependencies]` headers appeared (default edges)."""
    roots: list[Node]
    """The top-level nodes in printed order (several for a workspace printed without -p)."""
    sides_merged: bool = False
    """Printed without `--target`, a unit on both sides: all but proc-macros count as target."""


@dataclass
class _Line:
    number: int
    depth: int
    node: Node
    repeated: bool
    in_section: bool  # under a `[dev-dependencies]`/`[build-dependencies]` header
    parent: int | None = None  # the line printed above it, one level up (None for a root)


def _split_suffixes(text: str) -> list[str]:
    """Split ` (proc-macro) (/some/path (x))` into its top-level parenthesized groups."""
    groups: list[str] = []
    depth = start = 0
    for index, char in enumerate(text):
        if char == "(":
            if depth == 0:
                start = index + 1
            depth += 1
        elif char == ")" and depth:
            depth -= 1
            if depth == 0:
                groups.append(text[start:index])
    return groups


def parse_node(text: str) -> tuple[Node, bool] | None:
    """Read one node (`burn-flex v0.22.1 [std]`) with its repeat mark, or None if not a node."""
    if (match := _NODE.match(text)) is None:
        return None
    groups = _split_suffixes(match["suffixes"])
    source = next((group for group in reversed(groups) if group != "proc-macro"), None)
    features = frozenset(f for f in match["features"].split(",") if f)
    package = PackageRef(match["name"], match["version"], source)
    return Node(package, features, "proc-macro" in groups), match["repeated"] is not None


def _strip_prefix(raw: str) -> tuple[int | None, int, str]:
    """Return (depth digits if `--prefix depth`, indent width, the rest of the line)."""
    digits = len(raw) - len(raw.lstrip("0123456789"))
    if digits:
        # No graph is a billion levels deep; a longer run is not a depth (nor worth converting).
        return (int(raw[:digits]) if digits < 10 else -1), 0, raw[digits:]
    width = len(raw) - len(raw.lstrip(_INDENT_CHARS))
    # `--charset ascii` draws "|-- " and "`-- ": a crate name never starts with '-' or '`',
    # so everything up to the first name character is drawing.
    return None, width, raw[width:]


def _read_lines(text: str) -> tuple[list[_Line], bool, bool]:
    """The lines that print a node, whether `[dev-dependencies]`-style headers appeared, and
    whether a prefix was drawn (not `--prefix none`); a blank line (between roots) ends them."""
    lines: list[_Line] = []
    saw_sections = drawn = False
    # The depths of a `[dev-dependencies]`/`[build-dependencies]` section whose siblings at
    # that depth are being listed; a shallower line ends it.
    sections: set[int] = set()
    for number, raw_line in enumerate(text.splitlines(), start=1):
        raw = _LOG_TIMESTAMP.sub("", raw_line).rstrip()
        if not raw.strip():
            sections.clear()
            continue
        depth_digits, width, rest = _strip_prefix(raw)
        if _SECTION_HEADER.match(rest.strip()):
            saw_sections = True
            sections.add(width // 4 + 1)
            continue
        if (parsed := parse_node(rest)) is None:
            if _FEATURELESS_NODE.match(rest):
                raise TreeTextError(
                    "this tree has no feature lists: save it with cargo tree -f '{p} [{f}]'", number
                )
            continue  # cargo's status lines, warnings, log noise
        node, repeated = parsed
        if depth_digits is not None and depth_digits < 0:
            raise TreeTextError("a `--prefix depth` number of ten digits or more", number)
        # Without drawing a line is a root, or any line of `--prefix none`; which one is
        # settled once all lines are read.
        depth = width // 4 if depth_digits is None else depth_digits
        drawn |= depth_digits is not None or width > 0
        sections = {d for d in sections if d <= depth}
        lines.append(_Line(number, depth, node, repeated, depth in sections))
    return lines, saw_sections, drawn


def parse_tree_text(text: str) -> ParsedTree:
    node_lines, saw_sections, drawn = _read_lines(text)
    if not node_lines:
        raise TreeTextError(
            "no dependency lines found: expected output of cargo tree -f '{p} [{f}]'"
        )
    graph = DependencyGraph()
    if not drawn:
        for line in node_lines:
            graph.add_node(line.node)
        inverted = not node_lines[0].node.package.is_local
        return ParsedTree(graph, inverted, False, saw_sections, [node_lines[0].node])

    # The lines that draw normal edges, each with its parent line.
    printed: list[_Line] = []
    stack: list[int] = []
    skipped_below: int | None = None  # depth of a dev/build subtree being skipped
    for line in node_lines:
        if skipped_below is not None and line.depth > skipped_below:
            continue
        skipped_below = None
        if line.in_section:
            # Dev- and build-dependency edges are not part of what `cargo build` links.
            skipped_below = line.depth
            continue
        del stack[line.depth :]
        if line.depth > len(stack):
            raise TreeTextError("the tree's indentation skips a level", line.number)
        line.parent = stack[-1] if stack else None
        printed.append(line)
        stack.append(len(printed) - 1)
    if not printed:  # every line under a `[dev-dependencies]` or `[build-dependencies]` heading
        what = "no normal dependency lines: every line is a dev- or build-dependency"
        raise TreeTextError(what, node_lines[0].number)
    inverted = not printed[0].node.package.is_local
    sides = _sides_up(printed) if inverted else _sides_down(printed)
    nodes = [_on_side(p.node, sides is not None and sides[i]) for i, p in enumerate(printed)]
    roots: list[Node] = []
    # Edges as printed: parent above (added already), child below, one level deeper.
    for node, entry in zip(nodes, printed, strict=True):
        graph.add_node(node)
        if entry.parent is None:
            roots.append(node)
        elif inverted:
            graph.add_edge(node, nodes[entry.parent])
        else:
            graph.add_edge(nodes[entry.parent], node)
    return ParsedTree(graph, inverted, True, saw_sections, roots, sides is None)


def _on_side(node: Node, host: bool) -> Node:
    return node if node.host == host else Node(node.package, node.features, node.proc_macro, host)


# Which side each printed line is on. With `--target` (as featcheck's own calls print it) cargo
# keeps a host unit (a proc-macro and what it uses) and a target unit apart even with the same
# features: each is printed in full, and `(*)` marks only the same unit again. Without
# `--target` cargo merges the two, and a `(*)` may then refer to a unit printed on the other
# side: such text cannot tell the sides apart, and all but the proc-macros count as target
# units (None), as cargo printed them.


def _sides_down(printed: list[_Line]) -> list[bool] | None:
    """A tree printed from the member down: a line is on the host under a proc-macro."""
    sides: list[bool] = []
    full: dict[Node, set[bool]] = {}
    for line in printed:
        node = line.node
        host = node.proc_macro or (line.parent is not None and sides[line.parent])
        sides.append(host)
        if not line.repeated:
            full.setdefault(node, set()).add(host)
        elif host not in full.get(node, {host}):
            return None
    return sides


def _sides_up(printed: list[_Line]) -> list[bool] | None:
    """A tree printed from the crate up (`-i`), where children are dependents: a unit is on
    the host when it is a proc-macro or a host unit depends on it (host units depend on host
    units only); a dependent that is not drawn further is a member, on the target side, or a
    unit printed before (`(*)`), on the side it had there. Lines are settled children first."""
    children: list[list[int]] = [[] for _ in printed]
    end = list(range(len(printed)))
    for position in range(len(printed) - 1, -1, -1):
        if (parent := printed[position].parent) is not None:
            children[parent].append(position)
            end[parent] = max(end[parent], end[position])
    sides: list[bool] = [False] * len(printed)
    full: dict[Node, set[bool]] = {}
    for position in sorted(range(len(printed)), key=lambda i: (end[i], -printed[i].depth)):
        line = printed[position]
        below = {sides[child] for child in children[position]}
        if line.repeated and not below:
            # Either side it was printed on before; target where both were (rare: a unit
            # shared by both sides, repeated under a proc-macro's dependency).
            below = {min(full.get(line.node, {False}))}
        if len(below) > 1 and not line.node.proc_macro:
            return None  # host and target dependents of one unit: printed without --target
        sides[position] = line.node.proc_macro or True in below
        if not line.repeated:
            full.setdefault(line.node, set()).add(sides[position])
    return sides


def local_leaves(graph: DependencyGraph, nodes: Iterable[Node]) -> list[Node]:
    dependents = graph.dependents_map()
    return [n for n in nodes if n.package.is_local and not dependents.get(n)]
