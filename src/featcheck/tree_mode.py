"""Tree mode: the audit of text saved from `cargo tree` (no manifests, no cargo)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from featcheck.builder import FindingBuilder
from featcheck.cargo.failures import FailureKind, classify
from featcheck.cargo.tree_text import TreeTextError, local_leaves, parse_tree_text
from featcheck.errors import FeatcheckError
from featcheck.featureset import AuditOptions
from featcheck.graph import DependencyGraph, Node
from featcheck.report import AuditResult, Finding, TargetSkip
from featcheck.rules import BuildView, Catalogue, Detection, Rule, detect, skipped_for_target
from featcheck.rules.detect import covering_rules
from featcheck.severity import plural
from featcheck.stages.finish import finding_order


def _standing(rule: Rule, rules: tuple[Rule, ...], view: BuildView) -> list[Detection]:
    """What `rule` reports here: a detection deferred to another rule's feature only where no
    rule run flags the node for it (FC003 speaks of `simd` where FC001 is ignored, see
    stages/finish.py; saved text has no suppressions)."""
    found = []
    for detection in detect(rule, view, deferring=True):
        if not detection.deferred_to:
            found.append(detection)
            continue
        covering = covering_rules(Catalogue.builtin().rules, detection)
        if not covering or any(skipped_for_target(c, view) is not None for c in covering):
            continue
        run = [c for c in covering if c in rules]
        if any(d.node == detection.node for c in run for d in detect(c, view)):
            continue
        found.append(replace(detection, deferred_to=()))  # it stands: no deferral is reported
    return found


def audit_tree_text(
    text: str, source_name: str, options: AuditOptions | None = None
) -> AuditResult:
    options = options or AuditOptions()
    try:
        rules = Catalogue.builtin().select(options.select, options.ignore)
    except ValueError as error:
        raise FeatcheckError(str(error)) from None
    try:
        parsed = parse_tree_text(text)
    except TreeTextError as error:
        if error.line is None:
            # No tree at all: the saved text may be cargo's answer instead of a tree.
            return _cargo_answer_instead_of_tree(text, source_name)
        raise FeatcheckError(str(error), path=source_name, line=error.line) from None
    # An inverted tree (`-i CRATE`) ends in the packages it was built for.
    roots = local_leaves(parsed.graph, parsed.graph.nodes()) if parsed.inverted else parsed.roots
    # The text does not say which target cargo printed it for: the user's --target does.
    target = options.targets[0] if options.targets else None
    view = BuildView(parsed.graph, tuple(roots), parsed.has_structure, target)
    result = AuditResult(
        Path("."), members=[r.name for r in roots], targets=[target] if target else []
    )
    if parsed.saw_dev_or_build_sections:
        result.notes.append(
            "this tree was printed with dev- and build-dependency edges: the features shown may "
            "include ones only tests or build scripts get; print it with `cargo tree -e normal`"
        )
    if parsed.sides_merged:
        result.notes.append(
            "this tree was printed without --target, so cargo merged crates that proc-macros "
            "use with the same crates linked into the build: their findings may concern only "
            "the proc-macro; print it with --target TRIPLE"
        )
    if len(roots) > 1:
        _unified_members(result, roots)
    if not rules:
        result.no_verdict.append("no rule was run")
    for rule in rules:
        standing = _standing(rule, rules, view)
        reason = skipped_for_target(rule, view)
        if reason is not None:
            _skipped(result, rule, target, reason, roots, len(standing))
            continue
        for detection in standing:
            owners = _owners(parsed.graph, roots, detection.node, view.structured)
            result.findings.append(_finding(rule, detection, target, owners))
    result.findings.sort(key=finding_order)
    if target is None and result.skipped:
        # Never silently clean: memchr without `std` is slow on x86_64 and right elsewhere.
        codes = ", ".join(skip.code for skip in result.skipped)
        count = sum(skip.findings for skip in result.skipped)
        result.notes.append(
            f"{plural(count, 'finding')} of rules for particular targets ({codes}) not "
            f"reported: {result.skipped[0].reason}; pass --target TRIPLE (the one given to "
            "cargo tree, else the host's)"
        )
    return result


def _skipped(
    result: AuditResult, rule: Rule, target: str | None, reason: str, roots: list[Node], count: int
) -> None:
    """A rule the target does not take (or that the text cannot say it takes) would have made
    `count` findings: said in `skipped`, never silently clean."""
    if count:
        if target is None:
            reason = "saved tree text does not say which target cargo printed it for"
        members = tuple(sorted({r.name for r in roots}))
        result.skipped.append(
            TargetSkip(rule.code, rule.name, target or "(unknown)", reason, members, count)
        )


def _finding(rule: Rule, detection: Detection, target: str | None, owners: list[Node]) -> Finding:
    finding = FindingBuilder(rule, detection, None, target).at(None)
    if len(owners) == 1:
        finding.member_name = owners[0].name
    else:
        names = ", ".join(sorted({o.name for o in owners}))
        finding.notes = (
            "the saved tree cannot tell which member this build belongs to"
            + (f" (it is reached from {names})" if names else ""),
        )
    return finding.build(
        f"enable the `{detection.feature}` feature of {detection.node.name} "
        f"{detection.node.version}; run featcheck on the project itself to get the manifest "
        "line to change"
    )


def _unified_members(result: AuditResult, roots: list[Node]) -> None:
    """A tree of several members (cargo printed it for the whole workspace, inverted or not)
    shows the union of their features: each member built alone (`cargo build -p MEMBER`,
    `cargo install`) may lack some. A missing feature is missing for every one of them too,
    but "no findings" would speak for builds the tree does not show."""
    names = ", ".join(sorted({r.name for r in roots}))
    result.notes.append(
        f"this tree was printed for several members ({names}), so cargo unified their "
        "features; `cargo build -p MEMBER` may get fewer: print one tree per member with "
        "-p MEMBER"
    )
    result.no_verdict.append(
        f"cargo unified {len(roots)} members in this tree; a member built alone may lack "
        "features it shows"
    )


def _cargo_answer_instead_of_tree(text: str, source_name: str) -> AuditResult:
    """Saved `cargo tree -i CRATE` output can be cargo's message rather than a tree."""
    failure = classify(text)
    notes = {
        FailureKind.NOTHING_TO_PRINT: "cargo printed nothing: the crate is in the lockfile but "
        "not built with these edges and this target, so nothing here can be single-threaded",
        FailureKind.NO_MATCH: "cargo says the crate is not in the dependency graph: "
        + failure.summary,
    }
    if failure.kind in notes:
        return AuditResult(Path("."), notes=[notes[failure.kind]])
    if failure.kind is FailureKind.AMBIGUOUS:
        versions = ", ".join(failure.candidates) or "several versions"
        raise FeatcheckError(
            f"cargo found several versions ({versions}): save one tree per version, "
            "e.g. cargo tree -e normal -f '{p} [{f}]' -i "
            + (failure.candidates or ("CRATE@VERSION",))[0],
            path=source_name,
        )
    raise FeatcheckError(
        "no dependency lines found: expected output of cargo tree -f '{p} [{f}]'", path=source_name
    )


def _owners(graph: DependencyGraph, roots: list[Node], node: Node, structured: bool) -> list[Node]:
    if not structured:
        return list(roots) if len(roots) == 1 else []
    ancestors = graph.ancestors(node)
    return [r for r in roots if r in ancestors or r == node]
