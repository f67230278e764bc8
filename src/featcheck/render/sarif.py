"""`--format sarif`: SARIF 2.1.0, as GitHub code scanning (`upload-sarif`) accepts it.

The driver lists every rule in featcheck's catalogue, whether or not it fired, so that code
scanning knows the rules; each result points at the manifest span to edit. Artifact URIs are
relative to `GITHUB_WORKSPACE` when it is set, else to the report root (the repository root,
else the audited directory; `--root`), percent-encoded, with `uriBaseId` `%SRCROOT%`. Each
result carries the finding's fingerprint as `partialFingerprints` (comparison/baseline.py:
rule, member, crate, compatible version, feature, target, configuration; no line, no patch
version), so an alert keeps its identity when lines move or the crate takes a patch. A cut
repeated in several builds (render/common.py) is one result: the members' own declarations are
its `relatedLocations`, its properties list the members and targets.

The log is cut for GitHub code scanning (README, "In CI and in hooks"): one run per audited
target and build configuration, since code scanning keeps one analysis per category
(`runs[].automationDetails.id`, whose trailing slash makes the whole id the category), or per
target past its limit of runs (`MAX_RUNS`), and each result has a `baselineState` when findings
were compared.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from itertools import product
from typing import Any
from urllib.parse import quote

from featcheck import __version__
from featcheck.comparison.baseline import configuration_token, fingerprint
from featcheck.featureset import FeatureSelection
from featcheck.render.common import (
    FindingGroup,
    Renderer,
    RenderOptions,
    build_of,
    builds_of_group,
    group_findings,
)
from featcheck.render.github import repository_path
from featcheck.render.safe_text import https_link, json_document, markdown_block
from featcheck.report import AuditResult, Finding, Location
from featcheck.rules import UNUSED_SUPPRESSION, Rule, builtin_rules
from featcheck.severity import Severity

SARIF_VERSION = "2.1.0"
SARIF_SCHEMA = (
    "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
)
INFORMATION_URI = "https://github.com/featcheck/featcheck"
RULES_DOC_URL = "https://github.com/featcheck/featcheck/blob/main/docs/rules.md"
"""The rule reference; a rule's helpUri adds the anchor of its `## FC001 `name`` heading."""
FINGERPRINT_KEY = "featcheck/v2"
"""v2: the fingerprint of comparison/baseline.py, which baselines and JSON carry too."""
SOURCE_ROOT = "%SRCROOT%"

LEVELS: Mapping[Severity, str] = {
    Severity.ERROR: "error",
    Severity.WARNING: "warning",
    Severity.INFO: "note",
}


def rule_descriptor(rule: Rule) -> dict[str, Any]:
    """One `reportingDescriptor` for the driver's rule list. A project rule's documentation is
    the checkout's, so it is never read as Markdown: `help.markdown` shows it as a literal block
    (`safe_text.markdown_block`), and its only link is `helpUri`, when a reference is a plain
    `https://` URL (`safe_text.https_link`); a built-in rule's is its section in docs/rules.md
    (GitHub's anchor for "## FC001 `flex-without-rayon`")."""
    text = f"{rule.summary}.\n\n{rule.why}"
    tags = ["performance", "cargo-features"]
    if rule.builtin:
        uri: str | None = f"{RULES_DOC_URL}#{rule.code.lower()}-{rule.name}"
        full = rule.why
        help_entry = {
            "text": f"{text}\n\nSee {uri}",
            "markdown": f"**{rule.summary}.**\n\n{rule.why}\n\n[{rule.code} in the rule reference]"
            f"({uri})",
        }
        properties: dict[str, Any] = {"tags": tags, "precision": "very-high"}
    else:  # a `[[rule]]` of the audited project: the checkout's text
        uri = next((u for u in map(https_link, rule.doc.references) if u is not None), None)
        full = rule.why or rule.summary
        help_entry = {"text": text.strip(), "markdown": markdown_block(text.strip())}
        properties = {"tags": [*tags, "project-rule"]}
    return {
        "id": rule.code,
        "name": rule.name,
        "shortDescription": {"text": rule.summary},
        "fullDescription": {"text": full},
        "help": help_entry,
        **({"helpUri": uri} if uri is not None else {}),
        "defaultConfiguration": {"level": LEVELS[rule.severity]},
        "properties": properties,
    }


def sarif_result(
    group: FindingGroup,
    result: AuditResult,
    rule_index: Mapping[str, int],
    workspace: str | None,
    configuration: FeatureSelection | None = None,
) -> dict[str, Any]:
    """One SARIF result for a group; one without a manifest location gets no `locations`.
    `configuration`: the build configuration of the run, whose fingerprint it carries."""
    finding = group.lead
    location = finding.location
    path = repository_path(result, location, workspace) if location is not None else ""
    entry: dict[str, Any] = {"ruleId": finding.code}
    if finding.code in rule_index:
        entry["ruleIndex"] = rule_index[finding.code]
    entry["level"] = LEVELS[finding.severity]
    builds = builds_of_group(group)
    text = finding.message + (f" ({builds})" if builds else "")
    if finding.suggestion:
        text += f". Fix: {finding.suggestion}"
    entry["message"] = {"text": text}  # the verdict, whose builds it is about, and the fix
    if location is not None:
        entry["locations"] = [{"physicalLocation": _physical(path, location)}]
        related = _related_locations(group, result, workspace)
        if related:
            entry["relatedLocations"] = related
    # The finding's own fingerprint (`comparison.fingerprint`); for a cut repeated in several
    # builds, the smallest of its findings', so that the alert keeps its identity while a member
    # is added to the cut or removed from it (but the one that carries it).
    fingerprints = (fingerprint(f, configuration) for f in group.findings)
    entry["partialFingerprints"] = {FINGERPRINT_KEY: min(fingerprints)}
    entry["properties"] = {
        "member": finding.member,
        "target": finding.target,
        "crate": finding.crate,
        "crateVersion": finding.crate_version,
        "feature": finding.feature,
        "notes": list(finding.notes),
        "group": group.id,
        "members": list(group.members),
        "targets": list(group.targets),
        "findings": len(group.findings),
    }
    return entry


def _related_locations(
    group: FindingGroup, result: AuditResult, workspace: str | None
) -> list[dict[str, Any]]:
    """Each member's own declaration of a shared cut (`workspace = true`, or the dependency on
    the way), labelled with its build; none for one finding."""
    places: dict[tuple[str, int, int], tuple[Location, Finding]] = {}
    for finding in group.findings if group.shared else ():
        own = finding.inherited_by or next(iter(finding.member_declarations), None)
        place = own or finding.location
        if place is not None:  # the first finding at each place names it
            places.setdefault((place.file, place.line, place.column), (place, finding))
    return [
        {
            "id": index,
            "physicalLocation": _physical(repository_path(result, place, workspace), place),
            "message": {"text": build_of(finding) or "the cut"},
        }
        for index, (place, finding) in enumerate(places.values())
    ]


def _physical(path: str, location: Location) -> dict[str, Any]:
    region = {
        "startLine": location.line,
        "startColumn": location.column,
        "endLine": location.end_line,
        "endColumn": location.end_column,
    }
    return {"artifactLocation": {"uri": quote(path), "uriBaseId": SOURCE_ROOT}, "region": region}


MAX_RUNS = 20
"""GitHub code scanning refuses a file of more runs, and with it every alert: past it, the
configurations of each target (`--each-feature`: tendermint-rs has 35) share one run."""
EVERY = "every-configuration"


def sarif_document(result: AuditResult, environ: Mapping[str, str] | None = None) -> dict[str, Any]:
    """The SARIF log as a JSON-ready dict: one run per audited target and configuration
    (`MAX_RUNS` at most)."""
    environ = os.environ if environ is None else environ
    workspace = environ.get("GITHUB_WORKSPACE") or None
    rules: tuple[Rule, ...] = (*builtin_rules(), *result.user_rules, UNUSED_SUPPRESSION)
    rule_index = {rule.code: index for index, rule in enumerate(rules)}
    descriptors = [rule_descriptor(rule) for rule in rules]
    runs = []
    targets: list[str | None] = [*result.targets] or [None]
    configurations: list[FeatureSelection | None] = [
        *dict.fromkeys(c for found in result.configurations.values() for c in found)
    ] or [None]
    merged = len(targets) * len(configurations) > MAX_RUNS
    # Past the limit each target's configurations share its run, a result for each build of
    # a finding as in a run of its own: its fingerprint is that build's, as baselines have it.
    runs_of = [(None, configurations)] if merged else [(c, [c]) for c in configurations]
    for target, (configuration, builds) in product(targets, runs_of):
        entries = [
            {**sarif_result(group, result, rule_index, workspace, build), **state}
            for build in builds
            for findings, state in states(result)
            for group in group_findings(_built(findings, target, build))
        ]
        shown = re.sub(r"[^A-Za-z0-9._-]", "_", target or "any-target")
        token = EVERY if merged else configuration_token(configuration)
        category = f"featcheck/{shown}/{token}/"
        runs.append(_run(result, category, descriptors, entries))
    return {"$schema": SARIF_SCHEMA, "version": SARIF_VERSION, "runs": runs}


def _run(
    result: AuditResult, category: str, descriptors: list[dict[str, Any]], entries: list[Any]
) -> dict[str, Any]:
    invocation: dict[str, Any] = {"executionSuccessful": True}
    # An empty result list reads as clean: a run that cannot say so tells code scanning why.
    notifications = [
        *(
            {"level": "error", "message": {"text": f"no verdict: {why}"}}
            for why in result.no_verdict
        ),
        *({"level": "warning", "message": {"text": note}} for note in result.notes),
    ]
    if notifications:
        invocation["toolExecutionNotifications"] = notifications
    return {
        "tool": {
            "driver": {
                "name": "featcheck",
                "version": __version__,
                "semanticVersion": __version__,
                "informationUri": INFORMATION_URI,
                "rules": descriptors,
            }
        },
        "automationDetails": {"id": category},
        "invocations": [invocation],
        "columnKind": "unicodeCodePoints",
        "results": entries,
    }


def render_sarif(result: AuditResult, environ: Mapping[str, str] | None = None) -> str:
    return json_document(sarif_document(result, environ)) + "\n"


def renderer(options: RenderOptions) -> Renderer:
    return lambda result, out: out.write(render_sarif(result))


def _built(
    findings: Sequence[Finding], target: str | None, configuration: FeatureSelection | None
) -> list[Finding]:
    """The findings of one target and configuration of the audit (None: saved tree text does
    not say)."""
    return [
        f
        for f in findings
        if (target is None or f.target == target)
        and (configuration is None or configuration in f.configurations)
    ]


def states(result: AuditResult) -> list[tuple[Sequence[Finding], dict[str, Any]]]:
    """The findings to report, each set with what its results add: nothing without a
    comparison; else `baselineState` (and a suppression for what is accepted or gone)."""
    new = {"baselineState": "new"} if result.comparisons else {}
    sets: list[tuple[Sequence[Finding], dict[str, Any]]] = [(result.findings, new)]
    for comparison in result.comparisons:
        if comparison.kind == "baseline":
            accepted = _suppressed(f"accepted in the baseline {comparison.against}")
            sets.append((comparison.hidden, {"baselineState": "unchanged", **accepted}))
        else:
            sets.append((comparison.hidden, {"baselineState": "unchanged"}))
            gone = _suppressed(f"absent: fixed since {comparison.against}")
            sets.append((comparison.absent, {"baselineState": "absent", **gone}))
    return sets


def _suppressed(why: str) -> dict[str, Any]:
    return {"suppressions": [{"kind": "external", "status": "accepted", "justification": why}]}
