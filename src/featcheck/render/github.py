"""`--format github`: GitHub Actions workflow commands, plus a Markdown job summary.

Each finding becomes one `::error`/`::warning`/`::notice` command that the runner turns into an
annotation on the manifest line to edit; a cut repeated in several builds is one annotation that
names them all (render/common.py), and one row of the job summary. The runner keeps only the first
10 annotations of each level in a step and silently drops the rest, so featcheck emits at most
that many per level and one closing `::notice::` that says how many more there are. When
`GITHUB_STEP_SUMMARY` is set the job summary (appended to that file) lists every finding, within
GitHub's 1 MiB cap per step.

Paths are relative to the repository root (`GITHUB_WORKSPACE`) when it is set, because that is
what annotations attach to; otherwise they are the finding's path, relative to the report root.

Nothing the checkout wrote may become a workflow command (safe_text.py says what the runner
acts on, and how each is broken): featcheck's own annotations are the only commands printed,
their values escaped as the runner unescapes them. Every other line (notes, the count line,
errors on stderr) is made printable (a bare CR starts a new line for the runner) and inert, and
printed between `::stop-commands::TOKEN` and `::TOKEN::`. The job summary escapes Markdown and
HTML in every cell.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Mapping
from contextlib import suppress
from pathlib import Path, PurePosixPath
from typing import TextIO
from urllib.parse import quote

from featcheck.render.common import (
    FindingGroup,
    Renderer,
    RenderOptions,
    builds_of_group,
    count_line,
    group_findings,
)
from featcheck.render.safe_text import (
    escape_data,
    escape_property,
    markdown_text,
    printable,
    stop_commands,
    without_azure_commands,
)
from featcheck.report import AuditResult, Finding, Location
from featcheck.severity import Severity, plural

ANNOTATIONS_PER_LEVEL = 10
"""Annotations of one level that GitHub keeps per step; it drops the rest without a word."""
SUMMARY_LIMIT = 1024 * 1024
"""GitHub's cap on one step's job summary, in bytes."""
_SUMMARY_RESERVE = 1024
"""Bytes kept free for the line that says rows were left out."""

LEVELS: Mapping[Severity, str] = {
    Severity.ERROR: "error",
    Severity.WARNING: "warning",
    Severity.INFO: "notice",
}


def repository_path(result: AuditResult, location: Location, workspace: str | None) -> str:
    """The finding's file relative to `workspace` (the repository root) when given and inside it,
    else as the finding gives it: relative to the report root."""
    if not workspace:
        return location.file
    full = Path(os.path.normpath(os.path.abspath(result.root / location.file)))
    base = Path(os.path.normpath(os.path.abspath(workspace)))
    with suppress(ValueError):
        return full.relative_to(base).as_posix()
    # Only then through symlinks (a checkout under a linked directory): resolving costs a
    # system call per directory, and SARIF and the summary ask for every finding.
    try:
        return full.resolve().relative_to(base.resolve()).as_posix()
    except ValueError:
        return location.file


def annotation(group: FindingGroup, result: AuditResult, workspace: str | None) -> str:
    """One group's workflow command, on its manifest line where it has one: the verdict, whose
    builds it is about, and the fix."""
    finding = group.lead
    said = [
        printable(finding.message),
        builds_of_group(group),
        f"placed: {printable(finding.placement)}" if finding.placement else "",
        f"fix: {printable(finding.suggestion)}" if finding.suggestion else "",
    ]
    properties: list[tuple[str, str]] = []
    location = finding.location
    if location is not None:
        properties += [
            ("file", printable(repository_path(result, location, workspace))),
            ("line", str(location.line)),
            ("col", str(location.column)),
            ("endLine", str(location.end_line)),
            ("endColumn", str(location.end_column)),
        ]
    properties.append(("title", printable(f"{finding.code} {finding.rule}")))
    rendered = ",".join(f"{key}={escape_property(value)}" for key, value in properties)
    message = escape_data("\n".join(line for line in said if line))
    return without_azure_commands(f"::{LEVELS[finding.severity]} {rendered}::{message}")


def render_annotations(
    result: AuditResult,
    *,
    workspace: str | None = None,
    summary_written: bool = False,
    problem: str = "",
) -> str:
    """The workflow commands for `result`, at most ANNOTATIONS_PER_LEVEL per level, then the
    log text (`problem` as a warning, the notes, the count line) inside stop-commands. When some
    findings do not fit, a closing `::notice::` says how many; it is a notice itself, so
    notice-level findings then get one slot fewer and the closing notice is always kept."""
    groups = group_findings(result.findings)
    totals = Counter(group.lead.severity for group in groups)
    caps = dict.fromkeys(LEVELS, ANNOTATIONS_PER_LEVEL)
    if any(total > ANNOTATIONS_PER_LEVEL for total in totals.values()):
        caps[Severity.INFO] = ANNOTATIONS_PER_LEVEL - 1
    seen: Counter[Severity] = Counter()
    lines: list[str] = []
    for group in groups:
        severity = group.lead.severity
        seen[severity] += 1
        if seen[severity] <= caps[severity]:
            lines.append(annotation(group, result, workspace))
    omitted = len(groups) - len(lines)
    if omitted:
        where = (
            f"the job summary lists all {len(groups)}"
            if summary_written
            else "run featcheck with --format text to see them all"
        )
        lines.append(
            "::notice::"
            + escape_data(
                f"featcheck: {plural(omitted, 'more finding')} not shown as annotations "
                f"(GitHub shows at most {ANNOTATIONS_PER_LEVEL} per level in a step); {where}"
            )
        )
    text = "".join(f"{line}\n" for line in lines)
    log = [f"featcheck: warning: {printable(' '.join(problem.split()))}"] if problem else []
    log += [f"featcheck: note: {printable(' '.join(note.split()))}" for note in result.notes]
    log.append(f"featcheck: {count_line(result)}")
    return text + stop_commands(log)


def escape_cell(text: str) -> str:
    """Text shown literally inside one Markdown table cell; its line breaks become <br>."""
    lines = [markdown_text(line.strip()) for line in text.strip().splitlines()]
    return "<br>".join(lines) or " "


def _place(result: AuditResult, finding: Finding, workspace: str | None, links: str | None) -> str:
    location = finding.location
    if location is None:
        return "(no manifest)"
    path = repository_path(result, location, workspace)
    text = escape_cell(f"{path}:{location.line}")
    relative = not PurePosixPath(path).is_absolute() and not path.startswith("../")
    if links is not None and workspace and relative:
        return f"[{text}]({links}{quote(path)}#L{location.line})"
    return text


def _row(result: AuditResult, group: FindingGroup, workspace: str | None, links: str | None) -> str:
    """One group, every member and target named."""
    finding = group.lead
    members = [f"{m} (library)" if m in group.libraries else m for m in group.members]
    cells = [
        finding.severity.label,
        f"{finding.code} {finding.rule}",
        ", ".join(members) or "(unknown)",
        f"{finding.crate} {finding.crate_version}",
        finding.feature,
        ", ".join(group.targets) or "(not recorded)",
    ]
    fix = escape_cell(finding.suggestion or finding.message)
    escaped = [*map(escape_cell, cells), _place(result, finding, workspace, links), fix]
    return "| " + " | ".join(escaped) + " |\n"


def render_summary(
    result: AuditResult,
    *,
    workspace: str | None = None,
    links: str | None = None,
    budget: int = SUMMARY_LIMIT,
) -> str:
    """The job summary in Markdown: counts, then a table of every finding that fits in `budget`
    (UTF-8 bytes); rows that do not fit are counted in a closing line instead."""
    audited = result.audited or result.root
    name = audited.name or "."
    if workspace and audited.is_absolute():  # the audited directory within the repository
        base = os.path.normpath(os.path.abspath(workspace))
        relative = os.path.relpath(os.path.normpath(audited), base)
        name = audited.name if relative.startswith("..") else Path(relative).as_posix()
    parts = [f"## featcheck: {escape_cell(name)}\n\n"]
    parts.append(f"**{escape_cell(count_line(result))}**\n\n")
    for note in result.notes:
        parts.append(f"> note: {escape_cell(' '.join(note.split()))}\n\n")
    if result.findings:
        parts.append(
            "| Severity | Rule | Member | Crate | Feature | Target | Manifest | Fix |\n"
            "|---|---|---|---|---|---|---|---|\n"
        )
    used = sum(len(part.encode("utf-8")) for part in parts)
    limit = budget - _SUMMARY_RESERVE
    left_out = 0
    for group in group_findings(result.findings):
        row = _row(result, group, workspace, links)
        size = len(row.encode("utf-8"))
        if left_out or used + size > limit:
            left_out += 1
            continue
        parts.append(row)
        used += size
    if left_out:
        parts.append(
            f"\n{plural(left_out, 'more finding')} left out to keep this summary under "
            f"{SUMMARY_LIMIT // (1024 * 1024)} MiB; run featcheck with --format json for all.\n"
        )
    parts.append("\n")
    return "".join(parts)


def write_github(
    result: AuditResult, stream: TextIO, environ: Mapping[str, str] | None = None
) -> None:
    """The annotations on `stream`; the summary appended to GITHUB_STEP_SUMMARY where set."""
    environ = os.environ if environ is None else environ
    summary_path = environ.get("GITHUB_STEP_SUMMARY", "")
    workspace = environ.get("GITHUB_WORKSPACE")
    written = False
    problem = ""
    if summary_path:
        try:
            existing = os.path.getsize(summary_path)
        except OSError:
            existing = 0
        budget = SUMMARY_LIMIT - existing
        if budget <= 2 * _SUMMARY_RESERVE:
            problem = "the step summary is full"
        else:
            try:
                # Where the audited commit's files can be browsed, when all three are set.
                names = ("GITHUB_SERVER_URL", "GITHUB_REPOSITORY", "GITHUB_SHA")
                server, repository, sha = (environ.get(name, "") for name in names)
                found = server and repository and sha
                links = f"{server.rstrip('/')}/{repository}/blob/{sha}/" if found else None
                text = render_summary(result, workspace=workspace, links=links, budget=budget)
                with open(summary_path, "a", encoding="utf-8") as summary:
                    summary.write(text)
                written = True
            except OSError as error:
                problem = f"cannot write the step summary: {error.strerror or error}"
    # A problem is plain log text, not an annotation: it must not take a finding's warning slot.
    stream.write(
        render_annotations(result, workspace=workspace, summary_written=written, problem=problem)
    )


def renderer(options: RenderOptions) -> Renderer:
    return write_github
