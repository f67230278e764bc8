"""Baseline files: findings a team has decided to keep, hidden until they change.

One accepted finding per line, sorted, so that a diff of the file reads as a review:

    # featcheck baseline 1: ...
    3f2a9c1e0b7d4a55 error FC001 app x86_64-unknown-linux-gnu default  # burn-flex 0.22.1 ...

The fields are the fingerprint (`fingerprint` below), the severity the finding had when it was
accepted, the rule, the member, the target and the build configuration (`-` where a finding has
none); after `#`, what the finding said. Only the fingerprint and the severity decide what is
hidden: a finding whose severity has risen since is shown again. Rule, member, target and
configuration say which audits can call an entry stale: one that matches no finding of a build
the audit covered (the same member, target and configuration, its rule run).

`against_baseline` and `against_revision` (`--new-since`) set an audit's findings against such
entries or against the audit of an earlier revision, by the same rule: what is new is shown,
what was there is counted, and the exit code follows what is shown, as it follows suppressions.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import replace
from pathlib import Path

from featcheck.boundary import decode_text, read_checkout_file
from featcheck.errors import FeatcheckError
from featcheck.featureset import FeatureSelection
from featcheck.report import AuditResult, BaselineEntry, Comparison, Finding
from featcheck.semantics.semver import parse_version
from featcheck.severity import Severity, plural
from featcheck.workspace.model import crate_key

BASELINE_LIMIT = 16 * 1024 * 1024
"""The largest baseline file read (a million entries is far beyond any project)."""

HEADER = (
    "# featcheck baseline 1: findings accepted as they are; `featcheck --baseline FILE` hides\n"
    "# them and names the entries that match nothing any more. One per line: fingerprint,\n"
    "# severity, rule, member, target, configuration; after `#`, what the finding said.\n"
    "# Rewrite it with `featcheck --write-baseline FILE`.\n"
)

# A finding's fingerprint: what it is about, free of where its line happens to be.
#
# Two audits that find the same trimmed feature in the same member's build give the same
# fingerprint, even when the manifest was reformatted, lines above it moved, or the crate took a
# patch (or, past 1.0, a minor) upgrade: it hashes the rule code, the member, the crate as
# crates.io compares names, the crate's semver-compatible version (`1` for 1.12.2, `0.22` for
# 0.22.1: cargo's own line between copies of a crate that can coexist), the feature, the target
# and the build configuration, and nothing else. JSON (`fingerprint`), SARIF
# (`partialFingerprints`) and baselines carry the same value.

FINGERPRINT_LENGTH = 16
"""Hex digits kept of the sha256: 64 bits, ample for the findings of one project."""


def compatible_version(version: str) -> str:
    parsed = parse_version(version)
    if parsed is None:
        return version
    major, minor, patch, _ = parsed
    if major:
        return str(major)
    return f"0.{minor}" if minor else f"0.0.{patch}"


def configuration_token(selection: FeatureSelection | None) -> str:
    """The build configuration as one word without spaces: `default`,
    `no-default-features,features=a+b`, `all-features`."""
    if selection is None or selection.is_default:
        return "default"
    parts = (
        "no-default-features" if selection.no_default_features else "",
        "all-features" if selection.all_features else "",
        "features=" + "+".join(selection.features) if selection.features else "",
    )
    return ",".join(part for part in parts if part)


def fingerprint(finding: Finding, configuration: FeatureSelection | None = None) -> str:
    """The finding's fingerprint in one of its builds: `configuration`, else the one it is
    reported for (its first)."""
    parts = (
        "featcheck-fingerprint-1",
        finding.code,
        finding.member or "",
        crate_key(finding.crate),
        compatible_version(finding.crate_version),
        finding.feature,
        finding.target or "",
        configuration_token(finding.configuration if configuration is None else configuration),
    )
    digest = hashlib.sha256("\n".join(parts).encode("utf-8")).hexdigest()
    return digest[:FINGERPRINT_LENGTH]


def _by_build(finding: Finding) -> list[tuple[FeatureSelection | None, str]]:
    """The finding's fingerprint in each build configuration it is in (`--each-feature` makes
    one finding of several): each is accepted, new or gone on its own."""
    configurations = finding.configurations or (None,)
    return [(c, fingerprint(finding, c)) for c in configurations]


_FINGERPRINT = re.compile(rf"[0-9a-f]{{{FINGERPRINT_LENGTH}}}")
_SEVERITIES = {severity.label: severity for severity in Severity}
_NONE = "-"


def read_baseline(path: Path, root: Path | None) -> list[BaselineEntry]:
    """`root`: the checkout the file lies in, which it must not lead out of."""
    if not path.exists() and not path.is_symlink():
        raise FeatcheckError("no such baseline file (write one with --write-baseline)", path=path)
    data = read_checkout_file(path, "baseline file", BASELINE_LIMIT, root)
    return [
        entry
        for number, line in enumerate(decode_text(data, path).splitlines(), start=1)
        if (entry := _entry(line, number, path)) is not None
    ]


def _entry(line: str, number: int, path: Path) -> BaselineEntry | None:
    text, _, comment = line.partition("#")
    fields = text.split()
    if not fields:
        return None
    column = len(text) - len(text.lstrip()) + 1

    def error(message: str) -> FeatcheckError:
        return FeatcheckError(message, path=path, line=number, column=column)

    if len(fields) != 6:
        raise error(
            "a baseline entry is `FINGERPRINT SEVERITY RULE MEMBER TARGET CONFIGURATION`, "
            f"then `# …`; this line has {plural(len(fields), 'field')}"
        )
    printed, severity, code, member, target, configuration = fields
    if not _FINGERPRINT.fullmatch(printed):
        raise error(f"`{printed[:40]}` is not a fingerprint ({FINGERPRINT_LENGTH} hex digits)")
    if severity not in _SEVERITIES:
        raise error(f"the severity must be one of {', '.join(_SEVERITIES)}")
    return BaselineEntry(
        number,
        printed,
        _SEVERITIES[severity],
        code,
        None if member == _NONE else member,
        None if target == _NONE else target,
        configuration,
        comment.strip(),
    )


def baseline_text(findings: Iterable[Finding], kept: Iterable[BaselineEntry] = ()) -> str:
    """The file accepting `findings`, with the `kept` entries of the file it replaces."""

    # By rule, member, target, configuration, then what it is about: a reviewer's order.
    def review_order(line: str) -> tuple[list[str], str]:
        fields, _, about = line.partition("#")
        return fields.split()[2:6], about

    written = {_line(finding, c) for finding in findings for c, _ in _by_build(finding)}
    for e in kept:
        fields = (e.fingerprint, e.severity.label, e.code, e.member, e.target, e.configuration)
        written.add(f"{' '.join(f or _NONE for f in fields)}  # {e.comment}")
    return HEADER + "".join(f"{line}\n" for line in sorted(written, key=review_order))


def unaudited_entries(path: Path, result: AuditResult) -> list[BaselineEntry]:
    """The entries of the baseline at `path` (where there is one) about builds or rules this
    audit did not cover (`-p`, `--select`, `--target`): rewriting the file keeps them."""
    if not path.exists() and not path.is_symlink():
        return []
    try:
        entries = read_baseline(path, None)
    except FeatcheckError as error:
        error.message += "; that is no baseline file, and --write-baseline does not write over it"
        raise
    return [entry for entry in entries if not _covered(result, entry)]


def _line(finding: Finding, configuration: FeatureSelection | None) -> str:
    fields = (
        fingerprint(finding, configuration),
        finding.severity.label,
        finding.code,
        finding.member or _NONE,
        finding.target or _NONE,
        configuration_token(configuration),
    )
    about = (
        f"{finding.crate} {compatible_version(finding.crate_version)} "
        f"`{finding.feature}`: {finding.message}"
    )
    # Each field as one word: names cargo accepts have no space, `#` or control character;
    # what it said on one line of printable characters (the baseline is read line by line).
    words = (re.sub(r"[\s#]", "?", field) or _NONE for field in fields)
    said = "".join(c if c.isprintable() else "?" for c in " ".join(about.split()))
    return f"{' '.join(words)}  # {said}"


def against_baseline(
    result: AuditResult, entries: Sequence[BaselineEntry], file: str
) -> AuditResult:
    """`result` without the findings the baseline `file` (as reports name it) accepts; its
    stale entries said in a note each."""
    shown, hidden, now = _split(result.findings, {e.fingerprint: e.severity for e in entries})
    # A finding `--new-since`'s revision has too is hidden already, not gone.
    now.update(
        key for earlier in result.comparisons for f in earlier.hidden for _, key in _by_build(f)
    )
    stale = [e for e in entries if e.fingerprint not in now and _covered(result, e)]
    comparison = Comparison("baseline", file, hidden=tuple(hidden), stale=tuple(stale))
    notes = [
        f"{file}:{entry.line}: baseline entry matches no finding any more ({entry.describe()}); "
        "remove the line, or rewrite the file with --write-baseline"
        for entry in stale
    ]
    return replace(
        result,
        findings=shown,
        notes=[*result.notes, *notes],
        comparisons=[*result.comparisons, comparison],
    )


def against_revision(result: AuditResult, earlier: AuditResult, label: str) -> AuditResult:
    """`result` with only what the audit of the revision `label` did not find."""
    # Each fingerprint at its highest severity: the last of the findings in severity order.
    ordered = sorted(earlier.findings, key=lambda finding: finding.severity)
    before = {key: finding.severity for finding in ordered for _, key in _by_build(finding)}
    shown, hidden, now = _split(result.findings, before)
    absent = tuple(_gone(earlier.findings, now))
    comparison = Comparison("revision", label, hidden=tuple(hidden), absent=absent)
    return replace(result, findings=shown, comparisons=[*result.comparisons, comparison])


def _gone(findings: Sequence[Finding], now: set[str]) -> Iterator[Finding]:
    """Each earlier finding with the builds it is no longer in, where there are some."""
    for finding in findings:
        builds = _by_build(finding)
        gone = [c for c, key in builds if key not in now]
        if len(gone) == len(builds):
            yield finding
        elif gone:
            yield replace(finding, configurations=tuple(c for c in gone if c is not None))


def _split(
    findings: Sequence[Finding], accepted: dict[str, Severity]
) -> tuple[list[Finding], list[Finding], set[str]]:
    """The findings to show, those hidden (accepted at their severity or a higher one), and
    every finding's fingerprints. A finding accepted in some of its builds only is split: the
    builds it is new in are shown, the rest hidden."""
    shown: list[Finding] = []
    hidden: list[Finding] = []
    now: set[str] = set()
    for finding in findings:
        builds = _by_build(finding)
        builds_of = [c for c, _ in builds]
        now.update(key for _, key in builds)
        kept = [c for c, key in builds if key in accepted and finding.severity <= accepted[key]]
        new = [c for c in builds_of if c not in kept]
        for part, configurations in ((hidden, kept), (shown, new)):
            if configurations == builds_of:
                part.append(finding)
            elif configurations:  # some of its several builds
                selections = tuple(c for c in configurations if c is not None)
                part.append(replace(finding, configurations=selections))
    return shown, hidden, now


def _covered(result: AuditResult, entry: BaselineEntry) -> bool:
    """Whether this audit saw the build the entry is about, with its rule run: only then does
    an entry that matches nothing say the finding is gone (not that it went unaudited)."""
    if result.rules and entry.code not in result.rules:
        return False
    known = result.workspace_features
    if entry.member is not None and known and entry.member not in known:
        return True  # a member no longer in the workspace: its entries are gone
    if entry.member is not None and entry.member not in result.members:
        return False
    if entry.target is not None and result.targets and entry.target not in result.targets:
        return False
    if entry.member is None or not result.configurations:
        return entry.configuration == "default"
    audited = result.configurations.get(entry.member, [])
    if entry.configuration in {configuration_token(c) for c in audited}:
        return True
    # A build of a feature the member no longer defines is gone, not unaudited.
    named = {
        name
        for part in entry.configuration.split(",")
        if part.startswith("features=")
        for name in part.removeprefix("features=").split("+")
    }
    return bool(named - known.get(entry.member, named))
