"""What every format shares: the protocol each renderer follows (`Renderer`, made with
`RenderOptions`), the findings that repeat one cut grouped as one, and the wording, so that the
terminal, annotations and SARIF say the same thing. Checkout text is made safe to print in
`safe_text`.

Findings that repeat one cut (a `[workspace.dependencies]` line ten members inherit) are noise
read one by one, so they are shown once, naming every member, target and configuration they
cover (README, "One finding per cut"); JSON keeps one entry per finding and names its group, and
exit codes still count findings. They group when rule, crate, version, feature, severity,
confidence and location (file, line, column) are the same, whatever shape the fix takes
(`FindingGroup.fix` holds every member's edit). A library's finding (lowered to info:
`builder.FindingBuilder`) also folds into a binary's finding of the same cut: the binary's build
is where that cut costs, and the library's own fix is the same line.
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import NamedTuple, TextIO

from featcheck.featureset import FeatureSelection
from featcheck.render.safe_text import printable
from featcheck.report import AuditResult, Cost, Edit, Finding, Fix
from featcheck.severity import Confidence, Severity, plural


def count_line(result: AuditResult) -> str:
    """`1 error (1 member, x86_64-unknown-linux-gnu; 2 suppressed)`, or `no findings (...)`;
    `(1 member, 5 configurations, …)` when builds other than the default ones were audited."""
    scope = plural(len(result.members), "member")
    audited = [c for found in result.configurations.values() for c in found]
    if any(not c.is_default for c in audited):
        scope += f", {plural(len(audited), 'configuration')}"
    if result.targets:
        scope += f", {', '.join(printable(target) for target in result.targets)}"
    if result.suppressed:
        scope += f"; {sum(result.suppressed.values())} suppressed"
    for comparison in result.comparisons:
        against, hidden = printable(comparison.against), len(comparison.hidden)
        if comparison.kind == "revision":  # `2 new, 5 also on main (1a2b3c4d), not shown`
            scope += f"; {len(result.findings)} new, {hidden} also on {against}, not shown"
        else:
            scope += f"; {hidden} in the baseline {against}, not shown"
    if not result.findings:
        verdict = "no findings, audit incomplete" if result.incomplete else "no findings"
        if any(c.kind == "revision" for c in result.comparisons):
            verdict = verdict.replace("no findings", "no new findings")
        if result.no_verdict:
            verdict = f"no verdict: {'; '.join(result.no_verdict)}"
        return f"{verdict} ({scope})"
    # What is shown is counted: a cut repeated in several builds is one (`group_findings`).
    shown = [group.lead.severity for group in group_findings(result.findings)]
    counts = [plural(shown.count(s), s.label) for s in sorted(Severity, reverse=True) if s in shown]
    total = len(result.findings)
    grouped = f", grouped from {total} findings" if len(shown) < total else ""
    return f"{', '.join(counts)}{grouped} ({scope})"


def cost_text(cost: Cost) -> str:
    """`2.10x slower measured here (memchr, 2026-12-02)`, or where it was quoted from."""
    if cost.here and cost.ratio is not None:
        return (
            f"{cost.ratio:.2f}x slower measured here ({printable(cost.workload)}, "
            f"{printable(cost.measured_on)}; `{cost.command}`)"
        )
    code = cost.command.rsplit(" ", 1)[-1]
    return (
        f"not measured here: the rule quotes featcheck's build machine (`featcheck rule {code}`); "
        f"`{cost.command}` measures it here"
    )


def build_of(finding: Finding) -> str:
    """`member app, target x86_64-unknown-linux-gnu`: whose build the finding is about, with
    `with --features …` for a build other than the default one."""
    configuration = finding.configuration
    parts = [
        f"member {printable(finding.member)}" if finding.member else "",
        f"target {printable(finding.target)}" if finding.target else "",
        f"with {printable(configuration.label)}"
        if configuration is not None and not configuration.is_default
        else "",
    ]
    return ", ".join(part for part in parts if part)


def builds_of_group(group: FindingGroup) -> str:
    """`build_of` for a group: `10 members: a, b, lib (library); target T`, naming every
    member, target and (where it is not only the default) configuration the cut costs in.
    Where the members do not share them, each names its own targets and configurations (app's
    Windows build has the feature; noodles' default build has no finding, noodles-cram's has)."""
    if not group.shared:
        return build_of(group.lead)
    members = [
        f"{printable(m)} (library)" if m in group.libraries else printable(m) for m in group.members
    ]
    targets = [printable(t) for t in group.targets]
    configurations = group.configurations
    shown = any(not c.is_default for c in configurations)
    own = {m: [f for f in group.findings if f.member == m] for m in group.members}
    kept = dict.fromkeys  # in order, once each
    on = {m: list(kept(f.target for f in fs)) for m, fs in own.items()}
    using = {m: list(kept(c for f in fs for c in f.configurations)) for m, fs in own.items()}
    between = ", "
    if any(len(on[m]) < len(targets) or len(using[m]) < len(configurations) for m in own):
        members = [
            name
            + (f" on {', '.join(printable(t) for t in on[m] if t)}" if len(targets) > 1 else "")
            + (f" with {', '.join(printable(c.label) for c in using[m])}" if shown else "")
            for m, name in zip(group.members, members, strict=True)
        ]
        between, shown = "; ", False
        targets = targets if len(targets) == 1 else []
    parts = [
        f"member {members[0]}" if len(members) == 1 else "",
        f"{len(members)} members: {between.join(members)}" if len(members) > 1 else "",
        f"{'target' if len(targets) == 1 else 'targets'} {', '.join(targets)}" if targets else "",
        f"with {'; '.join(printable(c.label) for c in configurations)}" if shown else "",
    ]
    return "; ".join(part for part in parts if part)


def first_sentence(text: str) -> str:
    """`text` on one line, up to the end of its first sentence outside any quotation,
    parenthesis and code span (`_sentence_end`), else all of it. A finding's why line: what the
    missing feature does (the whole paragraph, with the measurements and their source, is for
    `-v`, JSON, SARIF and `featcheck rule CODE`)."""
    text = " ".join(text.split())
    quoted = code = False
    depth = 0
    for position, character in enumerate(text):
        if character == "`":
            code = not code
        elif code:
            continue
        elif character == '"':
            quoted = not quoted
        elif character == "(":
            depth += 1
        elif character == ")":
            depth = max(0, depth - 1)
        elif character in ".!?":
            end = _sentence_end(text, position + 1, quoted, depth)
            if end is not None:
                return text[:end]
    return text


def _sentence_end(text: str, after: int, quoted: bool, depth: int) -> int | None:
    """Where a sentence whose full stop lies just before `after` ends, or None where the stop
    ends no sentence (inside a quotation or parenthesis it does not close, before a lowercase
    word: `e.g. here`)."""
    end = after  # past the quotations and parentheses the sentence closes after its full stop
    while end < len(text) and text[end] in '")' and (quoted or depth):
        if text[end] == '"':
            quoted = False
        else:
            depth -= 1
        end += 1
    if quoted or depth:
        return None
    following = text[end + 1 : end + 2]
    if text[end : end + 1] != " " or not (following.isupper() or following in ("`", '"', "(")):
        return None
    return end


_GroupKey = tuple[object, ...]


@dataclass(frozen=True)
class FindingGroup:
    """Findings shown as one: the lead's verdict and fix, every member's build named."""

    findings: tuple[Finding, ...]
    """The lead first (a binary's finding where there is one), then in report order."""
    key: tuple[object, ...]
    """What the findings share (see the module's text)."""

    @functools.cached_property
    def id(self) -> str:
        """`key` hashed, 16 hex digits: the same in every finding of the group (JSON `group`);
        made only when a format asks (most renderings never do)."""
        return hashlib.sha256(repr(self.key).encode("utf-8")).hexdigest()[:16]

    @property
    def lead(self) -> Finding:
        return self.findings[0]

    @property
    def gains_vary(self) -> bool:
        """Whether the findings' fixes add different numbers of packages to their builds (the
        group's fix then says the most)."""
        return len({f.fix.added for f in self.findings if f.fix is not None}) > 1

    @functools.cached_property
    def fix(self) -> Fix | None:
        """What applies the group's fixes: the lead's when every finding has the same one;
        else every finding's edits together (None when one of them has no fix)."""
        fixes = [f.fix for f in self.findings]
        distinct = list(dict.fromkeys(f for f in fixes if f is not None))
        if len(distinct) < 2 or None in fixes:
            return self.lead.fix
        # Edits adding features to one declaration are made one: the features of all of them.
        merged: dict[tuple[object, ...], Edit] = {}
        for edit in dict.fromkeys(e for fix in distinct for e in fix.edits):
            key: tuple[object, ...] = (edit.manifest, edit.declaration, edit.action)
            if edit.action not in ("add-features", "add-feature-values"):
                key = (*key, edit)
            known = merged.get(key)
            features = (*known.features, *edit.features) if known is not None else edit.features
            merged[key] = replace(edit, features=tuple(dict.fromkeys(features)))
        counts, locked = [f.added for f in distinct], [f.locked for f in distinct]
        return Fix(
            tuple(merged.values()),
            confirmed=all(f.confirmed for f in distinct),
            safe=all(f.safe for f in distinct),
            note=next((f.note for f in distinct if f.note), ""),
            # The most one build gains (linfa's 19 members: 4 or 5 each), not silence.
            added=None if None in counts else max(c for c in counts if c is not None),
            locked=None if None in locked else max(c for c in locked if c is not None),
        )

    @property
    def shared(self) -> bool:
        """More than one finding: the group names the builds it covers."""
        return len(self.findings) > 1

    @property
    def members(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(f.member for f in self.findings if f.member is not None))

    @property
    def libraries(self) -> frozenset[str]:
        """Those of `members` that are libraries only (their finding is info on its own)."""
        return frozenset(f.member for f in self.findings if f.library and f.member is not None)

    @property
    def targets(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(f.target for f in self.findings if f.target is not None))

    @property
    def configurations(self) -> tuple[FeatureSelection, ...]:
        return tuple(dict.fromkeys(c for f in self.findings for c in f.configurations))

    @property
    def confidence(self) -> Confidence:
        """`resolved` unless a finding of the group is not (a folded library's may be)."""
        resolved = Confidence.RESOLVED
        return next((f.confidence for f in self.findings if f.confidence != resolved), resolved)


def group_findings(findings: Sequence[Finding]) -> list[FindingGroup]:
    """The findings in groups, in the order of each group's first finding (one pass)."""
    # Grouped by the cut, severity and confidence, not the fix; named by the first finding's
    # whole key: a group's id stays what it was when its findings all had the same fix.
    grouped: dict[_GroupKey, tuple[_GroupKey, list[Finding]]] = {}
    for position, finding in enumerate(findings):
        key = _key(finding, position)
        grouped.setdefault(key[:-1], (key, []))[1].append(finding)
    groups = list(grouped.values())
    if any(finding.library for finding in findings):
        # Groups of libraries only join the first group with a binary cut at the same place.
        with_binary: dict[_GroupKey, list[Finding]] = {}
        for key, found in groups:
            if found[0].location is not None and not all(f.library for f in found):
                with_binary.setdefault(key[:_CUT], found)
        kept: list[tuple[_GroupKey, list[Finding]]] = []
        for key, found in groups:
            if found[0].location is not None and all(f.library for f in found):
                binary = with_binary.get(key[:_CUT])
                if binary is not None:
                    binary.extend(found)
                    continue
            kept.append((key, found))
        groups = kept
    # A binary's finding leads: its severity and wording are the build's own.
    leads = [next((f for f in found if not f.library), found[0]) for _, found in groups]
    return [
        FindingGroup((lead, *(f for f in found if f is not lead)), key)
        for lead, (key, found) in zip(leads, groups, strict=True)
    ]


def _key(finding: Finding, position: int) -> _GroupKey:
    """What findings of one group share (the module's text): the cut first (`_CUT` items), then
    severity, confidence and the fix's edits as reports show them; a finding without a location
    is a group of its own."""
    cut = finding.identity.cut
    if cut is None:
        return ("alone", position, finding.code, finding.member, finding.crate, finding.target)
    fix: tuple[object, ...] = ("suggestion", finding.suggestion)
    if finding.fix is not None:
        fix = tuple(
            (e.file, e.line, tuple(map(str, e.declaration)), e.action, e.features, e.version)
            for e in finding.fix.edits
        )
    return (*cut, finding.severity.value, finding.confidence.value, fix)


_CUT = 7
"""How many items of a located finding's key name its cut."""


Renderer = Callable[[AuditResult, TextIO], object]
"""Writes one audit's report. What a format needs besides the result (verbosity, colour,
width, the CI environment) it is given when made, never per call."""


class RenderOptions(NamedTuple):
    """What the command line tells a renderer (the text report reads all of it, others none)."""

    verbose: bool = False
    """Each finding's chain, notes, full why and other fixes (`-v`)."""
    quiet: bool = False
    """Only the findings: no notes, no summary line (`-q`)."""
    colour: bool | None = None
    """True: styled; False: plain; None: as the stream allows (see `text_report`)."""
    width: int | None = None
    """Columns to wrap to; None: the report's own width."""
