"""The terminal report: findings grouped by member, the manifest line quoted, the fix spelled out.

By default a finding is compact, as ruff and clippy print them: the verdict, where (with the
manifest line quoted and underlined), the one-line why and the fix. `verbose` adds what the
audit knows beyond that: the whole why with its measurements, the chain (how the feature would
arrive, what cut it), notes and the other candidate fixes. `featcheck rule CODE` prints the rule's
page; JSON and SARIF always carry everything.

Every string from the checkout (names, paths, quoted manifest lines, notes) is passed through
`printable`, so no control character reaches the terminal, and every line printed is made
`inert`: a report printed in any CI log carries no workflow command. Each line is a list of
runs of text, each with its style (text_lines.py); the text is never read as markup.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from functools import partial
from itertools import groupby
from typing import TextIO

from featcheck.render.common import (
    FindingGroup,
    Renderer,
    RenderOptions,
    builds_of_group,
    cost_text,
    count_line,
    first_sentence,
    group_findings,
)
from featcheck.render.safe_text import printable
from featcheck.render.text_lines import (
    Line,
    builds_line,
    configuration_table,
    details_hint,
    edit_blocks,
    fix_hint,
    quote,
    rule_why,
    several_configurations,
    write_lines,
)
from featcheck.report import AuditResult, Finding, Fix, edit_words, fix_words
from featcheck.severity import Confidence, Severity, plural

_STYLE = {Severity.ERROR: "bold red", Severity.WARNING: "bold yellow", Severity.INFO: "bold cyan"}

_EQUALS: Line = [("  ", ""), ("=", "blue"), (" ", "")]
"""How each detail line of a finding starts: `  = `."""

WIDTH = 100
"""The width the report is wrapped to where no terminal says its own (piped, a file)."""


def _where(fix: Fix) -> str:
    """The files the fix edits, each at every line it edits there (none for a new line)."""
    lines: dict[str, set[int]] = {}
    for edit in fix.edits:
        lines.setdefault(edit.file, set()).update([edit.line] if edit.line else [])
    said = (
        ", ".join(f"{file}:{line}" for line in sorted(at)) or file for file, at in lines.items()
    )
    return ", ".join(sorted(said))


def _fix_lines(
    finding: Finding, applied: list[Finding], features: Sequence[str] = (), varies: bool = False
) -> list[Line]:
    """`  = placed: ...` where the fix's place was chosen, then `  = fix: ...`: the fix, the
    features it brings (`features`, else the finding's) and what applies it. `varies`: the
    builds of a group gain different numbers of packages (the fix's is the most)."""
    lines = [_detail("placed", finding.placement)] if finding.placement else []
    fix = [*_EQUALS, ("fix:", "green")]
    if finding.fix is not None:
        added = _added(finding.fix, "up to " if varies else "")
        if not (finding.fix.safe and finding.fix.confirmed):
            applies = printable(finding.fix.note)
        elif finding in applied:
            applies = "`--fix` applies it"
        else:
            applies = f"`--fix --fix-level {finding.severity.label}` applies it"
        gets = ", ".join(f"`{printable(f)}`" for f in dict.fromkeys(features or [finding.feature]))
        # The same edit in several manifests (one per member) is said once, `_where` naming them.
        said = list(dict.fromkeys(edit_words(edit) for edit in finding.fix.edits))
        several = len({edit.file for edit in finding.fix.edits}) > 1
        described = said[0] if len(said) == 1 and several else fix_words(finding.fix)
        text = (
            f" {printable(described)} ({printable(_where(finding.fix))}); with it "
            f"the build gets {gets}{added}, {applies}"
        )
        return [*lines, [*fix, (text, "")]]
    if finding.suggestion:
        return [*lines, [*fix, (f" {printable(finding.suggestion)}", "")]]
    return lines


def _added(fix: Fix, most: str) -> str:
    """What the fix adds to the workspace's builds (each package once, whichever build gains
    it: `added_packages`), and to Cargo.lock where that is more (the lock holds what other
    platforms and features would build)."""
    built, locked = fix.added or 0, fix.locked or 0
    builds = "the workspace's builds"
    if locked > built:
        lock = f"{plural(locked, 'package')} to Cargo.lock, {built or 'none'} to {builds}"
        return f" and adds {most}{lock}"
    return f" and adds {most}{plural(built, 'package')} to {builds}" if built else ""


def _detail(label: str, text: str) -> Line:
    """`  = label: text`, the text made printable."""
    return [*_EQUALS, (f"{label}: {printable(text)}", "")]


def _render_group(
    group: FindingGroup, verbose: bool, width: int, applied: list[Finding]
) -> list[Line]:
    """The lead finding, with the builds a repeated cut covers named under its quote."""
    finding, applied = _with_group_fix(group, applied)
    lines = [_verdict(finding), *_place(finding, width)]
    if group.shared:  # where the cut costs, before why and fix
        lines.append(_detail("builds", builds_of_group(group)))
    lines += _confidence(group.confidence)
    if verbose:  # notes and the chain; the whole why, not its first sentence
        lines += [_detail("note", note) for note in _notes(group)]
        if len(finding.configurations) > 1:
            also = "; ".join(c.label for c in finding.configurations[1:])
            lines.append(_detail("note", f"also in the build with {also}"))
        lines += [_detail("chain", link) for link in finding.chain]
    if finding.why:
        why = " ".join(finding.why.split())
        lines.append(_detail("why", why if verbose else first_sentence(why)))
    if finding.cost is not None:
        lines.append(_detail("cost", cost_text(finding.cost)))
    lines += _fix_lines(finding, applied, varies=group.gains_vary)
    for alternative in finding.alternatives if verbose else ():  # smallest first
        state = "confirmed" if alternative.confirmed else "not confirmed"
        if alternative.note:
            state += f": {alternative.note}"
        lines.append(_detail("or", f"{fix_words(alternative)} ({_where(alternative)}; {state})"))
    return lines


def _notes(group: FindingGroup) -> list[str]:
    """The notes of the group's findings, each once; one that not all of them carry names the
    members it is about (feos: "feos-core depends on ndarray directly" is py_feos's only), and
    one each says of its own member names them all ("for each of abac, core-lib: regex is a
    direct dependency of the member": ockam's said only the first)."""
    about: dict[str, tuple[str, list[str]]] = {}
    for finding in group.findings:
        member = finding.member or ""
        for note in finding.notes:
            same = note.replace(member, "\0") if member else note
            about.setdefault(same, (note, []))[1].append(member)
    every, notes = len(group.findings), []
    for same, (note, members) in about.items():
        named = list(dict.fromkeys(members))
        if "\0" in same and len(named) > 1:  # each says it of its own member
            note = same.replace("\0", "the member")
            notes.append(f"for each of {', '.join(named)}: {note}")
        else:
            notes.append(note if len(members) == every else f"for {', '.join(named)}: {note}")
    return notes


def _render_block(block: list[FindingGroup], width: int, applied: list[Finding]) -> list[Line]:
    """Findings at one place with one edit (`edit_blocks`): each verdict, the place once, the
    builds, each rule's why once, the one fix."""
    first = block[0]
    lines = [_verdict(group.lead) for group in block]
    lines += _place(first.lead, width)
    resolved = Confidence.RESOLVED
    lines += _confidence(next((g.confidence for g in block if g.confidence != resolved), resolved))
    several_members = len(first.members) > 1
    # The groups of a block, one per rule, name the same builds: said once.
    said = dict.fromkeys(map(builds_of_group, block))
    builds = "; ".join(said) if several_members else builds_line(block)
    lines.append(_detail("builds", builds))
    codes = list(dict.fromkeys(group.lead.code for group in block))
    for code in codes:
        lead = next(group.lead for group in block if group.lead.code == code)
        named = f"{code}: " if len(codes) > 1 else ""
        if lead.why:
            lines.append(_detail("why", named + first_sentence(rule_why(block, code))))
        if lead.cost is not None:
            lines.append(_detail("cost", named + cost_text(lead.cost)))
    lead, applied = _with_group_fix(first, applied)
    features = [group.lead.feature for group in block]
    return lines + _fix_lines(lead, applied, features, varies=first.gains_vary)


def _with_group_fix(group: FindingGroup, applied: list[Finding]) -> tuple[Finding, list[Finding]]:
    """The group's lead with the group's fix, which names each member's own edit, and `applied`
    counting it where it counts the lead."""
    lead = group.lead
    if group.fix is lead.fix:
        return lead, applied
    named = replace(lead, fix=group.fix)
    return named, [*applied, named] if lead in applied else applied


def _verdict(finding: Finding) -> Line:
    """`error[FC001] burn-flex 0.22.1 is built without `rayon`: ...`"""
    return [
        (f"{finding.severity.label}[{finding.code}]", _STYLE[finding.severity]),
        (" ", ""),
        (printable(finding.message), "bold"),
    ]


def _place(finding: Finding, width: int) -> list[Line]:
    """`  --> file:line:column` and the quoted manifest line; nothing without a location."""
    location = finding.location
    if location is None:
        return []
    place = f" {printable(location.file)}:{location.line}:{location.column}"
    lines: list[Line] = [[("  ", ""), ("-->", "blue"), (place, "")]]
    return lines + [[("  ", ""), *line] for line in quote(finding, width)]


def _confidence(confidence: Confidence) -> list[Line]:
    if confidence is Confidence.RESOLVED:
        return []
    # Always shown: a verdict read from the manifests alone must never pass for a resolved one.
    why = "packages --no-exec could not read may turn the feature on; see the note above"
    return [_detail("confidence", f"{confidence.value} ({why})")]


def _heading(group: FindingGroup, by_edit: bool) -> tuple[tuple[str, ...], str, str, str]:
    """Findings are listed per member, build configuration and target (`by_edit`: without the
    configuration, the blocks under it name their builds); unused suppressions under
    "configuration"; a cut repeated in several members under `N members` (each named in the
    finding). The members come first: equal headings are printed once."""
    finding = group.lead
    members = group.members
    if len(members) > 1:
        member = f"{len(members)} members"
    elif finding.member is not None:
        member = finding.member
    else:
        member = "configuration" if finding.code == "FC900" else "(unknown member)"
    configuration = finding.configuration
    shown = "" if configuration is None or configuration.is_default else configuration.label
    return members, member, ", ".join(group.targets), "" if by_edit else shown


def _shared_last(group: FindingGroup) -> tuple[bool, tuple[str, ...]]:
    several = len(group.members) > 1
    return several, group.members if several else ()


def _findings_lines(result: AuditResult, verbose: bool, width: int) -> list[Line]:
    lines: list[Line] = []
    applied = result.applied_fixes()
    # Groups of several members after the members' own, those of one set of members together.
    groups = sorted(group_findings(result.findings), key=_shared_last)
    by_edit = not verbose and several_configurations(result)
    heading_of = partial(_heading, by_edit=by_edit)
    if by_edit:  # one heading per member and target, each block naming its builds
        groups.sort(key=lambda group: (_shared_last(group), heading_of(group)))
    for (_, member, target, configuration), shown in groupby(groups, key=heading_of):
        heading: Line = [(printable(member), "bold")]
        if target:
            heading += [(" ", ""), (f"({printable(target)})", "dim")]
        if configuration:
            heading += [(" with ", ""), (printable(configuration), "bold")]
        lines.append(heading)
        if by_edit:
            blocks = [_render_block(block, width, applied) for block in edit_blocks(list(shown))]
        else:
            blocks = [_render_group(group, verbose, width, applied) for group in shown]
        for block_lines in blocks:
            lines += [*block_lines, []]
    return lines


def render_text(result: AuditResult, stream: TextIO, options: RenderOptions) -> None:
    """Print the report to `stream` as `options` say (nothing with `quiet` and no findings)."""
    width = options.width or WIDTH
    verbose = options.verbose
    if options.quiet:
        write_lines(_findings_lines(result, verbose, width), stream, options.colour, width)
        return
    lines: list[Line] = [
        [("note:", "yellow"), (f" {printable(note)}", "")] for note in result.notes
    ]
    lines += configuration_table(result)
    lines += _findings_lines(result, verbose, width)
    lines.append([(count_line(result), "green" if not result.findings else "bold")])
    if any(f.fix and f.fix.safe for f in result.findings) and (fixes := fix_hint(result)):
        lines.append([(fixes, "dim")])
    if not verbose and any(f.notes or f.chain or f.alternatives or f.why for f in result.findings):
        code = min(f.code for f in result.findings)
        lines.append([(details_hint(code, result), "dim")])
    write_lines(lines, stream, options.colour, width)


def renderer(options: RenderOptions) -> Renderer:
    return partial(render_text, options=options)
