"""Parse the text of `cargo tree -f '{p} [{f}]'` into a dependency graph with features.

The same parser serves both ways featcheck reads cargo: the output of its own `cargo tree` calls
(always `--prefix depth`, unambiguous) and text a user saved from a terminal or a CI log (any
`--prefix`, box or ascii characters, inverted or not, with `[dev-dependencies]` headers).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from featcheck.graph import DependencyGraph, Node, PackageRef

# A GitHub Actions log line starts with an ISO timestamp; saved logs keep it.
_LOG_TIMESTAMP = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z ")
# Characters that `--prefix indent` draws, in `--charset utf8` and `--charset ascii`.
_INDENT_CHARS = frozenset("│├└─|`- \u00a0")
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
    """The text is not `cargo tree -f '{p} [{f}]'` output; the message says what was found."""

    def __init__(self, message: str, line: int | None = None) -> None:
        super().__init__(message)
        self.line = line


@dataclass
class ParsedTree:
    """A graph read from tree text plus what the text revealed about how it was printed."""

    graph: DependencyGraph
    inverted: bool
    """True when the text came from `cargo tree -i` (children are dependents)."""
    has_structure: bool
    """False for `--prefix none`, where no edges can be recovered."""
    saw_dev_or_build_sections: bool
    """True when `[dev-dependencies]`/`[build-dependencies]` headers appeared (default edges)."""
    roots: list[Node] = field(default_factory=list)
    """The top-level nodes in printed order (several for a workspace printed without -p)."""


@dataclass
class _Line:
    number: int
    depth: int
    node: Node
    repeated: bool
    section_kind: str | None


def _split_suffixes(text: str) -> list[str]:
    """Split ` (proc-macro) (/some/path (x))` into its top-level parenthesized groups."""
    groups: list[str] = []
    depth = 0
    start = 0
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
    match = _NODE.match(text)
    if match is None:
        return None
    source: str | None = None
    proc_macro = False
    for group in _split_suffixes(match["suffixes"]):
        if group == "proc-macro":
            proc_macro = True
        else:
            source = group
    features = frozenset(f for f in match["features"].split(",") if f)
    package = PackageRef(match["name"], match["version"], source)
    return Node(package, features, proc_macro), match["repeated"] is not None


def _strip_prefix(raw: str) -> tuple[int | None, int, str]:
    """Return (depth digits if `--prefix depth`, indent width, the rest of the line)."""
    digits = len(raw) - len(raw.lstrip("0123456789"))
    if digits:
        # No graph is a billion levels deep; a longer run is not a depth (nor worth converting).
        return (int(raw[:digits]) if digits < 10 else -1), 0, raw[digits:]
    width = 0
    while width < len(raw) and raw[width] in _INDENT_CHARS:
        width += 1
    # `--charset ascii` draws "|-- " and "`-- ": a crate name never starts with '-' or '`',
    # so everything up to the first name character is drawing.
    return None, width, raw[width:]


def _read_lines(text: str) -> tuple[list[_Line | None], bool, str]:
    """Classify each line; None entries mark blank lines that separate several roots."""
    lines: list[_Line | None] = []
    saw_sections = False
    prefix_style = "none"
    # depth -> kind of a `[dev-dependencies]`/`[build-dependencies]` section whose siblings at
    # that depth are being listed; a shallower line ends it.
    sections: dict[int, str] = {}
    for number, raw_line in enumerate(text.splitlines(), start=1):
        raw = _LOG_TIMESTAMP.sub("", raw_line).rstrip()
        if not raw.strip():
            lines.append(None)
            sections.clear()
            continue
        depth_digits, width, rest = _strip_prefix(raw)
        header = _SECTION_HEADER.match(rest.strip())
        if header:
            saw_sections = True
            sections[width // 4 + 1] = header[1]
            continue
        parsed = parse_node(rest)
        if parsed is None:
            if _FEATURELESS_NODE.match(rest):
                raise TreeTextError(
                    "this tree has no feature lists: save it with cargo tree -f '{p} [{f}]'",
                    number,
                )
            continue  # cargo's status lines, warnings, log noise
        node, repeated = parsed
        if depth_digits is not None:
            if depth_digits < 0:
                raise TreeTextError("a `--prefix depth` number of ten digits or more", number)
            depth = depth_digits
            prefix_style = "depth"
        else:
            # Without drawing a line is a root, or any line of `--prefix none`; which one is
            # settled once all lines are read.
            depth = width // 4
            if width:
                prefix_style = "indent"
        sections = {d: k for d, k in sections.items() if d <= depth}
        kind = sections.get(depth)
        lines.append(_Line(number, depth, node, repeated, kind))
    return lines, saw_sections, prefix_style


def parse_tree_text(text: str) -> ParsedTree:
    """Parse `cargo tree -f '{p} [{f}]'` output in any prefix style; raises TreeTextError."""
    lines, saw_sections, prefix_style = _read_lines(text)
    node_lines = [line for line in lines if line is not None]
    if not node_lines:
        raise TreeTextError(
            "no dependency lines found: expected output of cargo tree -f '{p} [{f}]'"
        )
    graph = DependencyGraph()
    roots: list[Node] = []
    if prefix_style == "none":
        for line in node_lines:
            graph.add_node(line.node)
        roots = [node_lines[0].node]
        inverted = not node_lines[0].node.package.is_local
        return ParsedTree(graph, inverted, False, saw_sections, roots)

    # Edges as printed: parent above, child below, one level deeper.
    printed_edges: list[tuple[Node, Node]] = []
    stack: list[Node] = []
    skipped_below: int | None = None  # depth of a dev/build subtree being skipped
    for line in node_lines:
        if skipped_below is not None and line.depth > skipped_below:
            continue
        skipped_below = None
        if line.section_kind is not None:
            # Dev- and build-dependency edges are not part of what `cargo build` links.
            skipped_below = line.depth
            continue
        del stack[line.depth :]
        if line.depth > len(stack):
            raise TreeTextError("the tree's indentation skips a level", line.number)
        graph.add_node(line.node)
        if stack:
            printed_edges.append((stack[-1], line.node))
        else:
            roots.append(line.node)
        stack.append(line.node)

    inverted = not roots[0].package.is_local
    for parent, child in printed_edges:
        if inverted:
            graph.add_edge(child, parent)
        else:
            graph.add_edge(parent, child)
    return ParsedTree(graph, inverted, True, saw_sections, roots)


def local_leaves(graph: DependencyGraph, nodes: Iterable[Node]) -> list[Node]:
    """The workspace packages among `nodes` that nothing else in the graph depends on."""
    dependents = graph.dependents_map()
    return [n for n in nodes if n.package.is_local and not dependents.get(n)]
