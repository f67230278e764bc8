"""What an audit reports: findings that know rule, member, crate, feature, target and place,
the fixes they carry as edits (worded here too), and the result renderers show. The ground floor:
it imports only the severity levels, so renderers, rules and the orchestrator all stand on it."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Literal, NamedTuple

from featcheck.severity import Confidence, FailOn, Severity, plural

if TYPE_CHECKING:  # rules, selections and key paths stand on this floor; it only names them
    from featcheck.featureset import FeatureSelection
    from featcheck.manifest.spans import KeyPath
    from featcheck.rules.spec import Rule

Action = Literal[
    "add-features",
    "remove-default-features",
    "add-dependency",
    "add-optional-dependency",
    "inherit-dependency",
    "inherit-optional-dependency",
    "add-feature-values",
]


@dataclass(frozen=True)
class Edit:
    """One change to one dependency declaration in one manifest."""

    manifest: Path
    declaration: KeyPath
    """e.g. ("workspace", "dependencies", "burn")."""
    action: Action
    features: tuple[str, ...] = ()
    """The features to add; for `add-feature-values`, the named feature's values (`dep:KEY`)."""
    version: str = ""
    """For add-dependency and add-optional-dependency: the version requirement."""
    file: str = ""
    """The manifest relative to the report root."""
    line: int = 0
    """The declaration's line (0 for a new dependency)."""

    @property
    def adds_declaration(self) -> bool:
        """A new `[dependencies]` line; an optional one comes with the `add-feature-values` edit
        whose feature turns it on (`dep:KEY`)."""
        return self.action.endswith("dependency")

    def declared_table(self) -> dict[str, object]:
        """The new declaration's value, as TOML reads it."""
        inherits = self.action.startswith("inherit")
        table: dict[str, object] = {"workspace": True} if inherits else {"version": self.version}
        if self.action.endswith("optional-dependency"):
            table["optional"] = True
        if not inherits:
            # A `workspace = true` line cannot drop what the workspace entry keeps (an error
            # since edition 2024): only a line with its own version says it.
            table["default-features"] = False
        table["features"] = list(self.features)
        return table

    def declared_pairs(self) -> list[str]:
        """The new declaration's `key = value` pairs as written: its strings, booleans and
        arrays of strings are written as JSON writes them, which TOML reads the same."""
        return [
            f"{key} = {json.dumps(value, ensure_ascii=False)}"
            for key, value in self.declared_table().items()
        ]

    def declared_value(self) -> str:
        """The new declaration's value as written: `{ version = "1", ... }`."""
        return "{ " + ", ".join(self.declared_pairs()) + " }"


@dataclass(frozen=True)
class Fix:
    """A candidate change for one finding."""

    edits: tuple[Edit, ...]
    confirmed: bool = False
    """cargo resolved the missing feature on a temporary copy with the edits applied."""
    safe: bool = False
    """Confirmed and the smallest candidate: what `--fix` applies."""
    note: str = ""
    """Why it could not be confirmed, when it was not; why it is not safe, when it is not."""
    added: int | None = None
    """How many packages the fix adds to the member's build; None where that is unknown."""
    locked: int | None = None
    """How many packages Cargo.lock gains (every platform's, built here or not); None where
    cargo was not asked for one that turns on what the lock lacks."""


# A fix in words: the one place where featcheck words an edit, for every format (the text
# report's fix line, JSON's `description`, the suggestions GitHub annotations and SARIF carry,
# and the probe's). To change how a fix reads, change the phrase below.


def add_features(features: Iterable[str], key: str) -> str:
    return f"add {_listed(features)} to the features of {key}"


def remove_defaults(key: str) -> str:
    return f"remove `default-features = false` from {key}"


def edit_words(edit: Edit) -> str:
    key = str(edit.declaration[-1])
    if edit.action == "add-features":
        return add_features(edit.features, key)
    if edit.action == "remove-default-features":
        return remove_defaults(key)
    if edit.action == "add-feature-values" and edit.features[0] == f"dep:{key}":
        # An optional dependency's implicit feature, written (fixes/direct.py).
        return f"add {key} = [{_listed(edit.features)}] to [features]"
    if edit.action == "add-feature-values":
        return f"add {_listed(edit.features)} to `{key}` in [features]"
    table = "dependencies"
    if edit.declaration[0] == "target":
        table = f"target.{table_key(str(edit.declaration[1]))}.dependencies"
    return f"add {key} = {edit.declared_value()} to [{table}]"


def table_key(name: str) -> str:
    """`name` as a key of a table header: bare where TOML allows (a target triple), else
    quoted (`'cfg(unix)'`)."""
    if re.fullmatch(r"[A-Za-z0-9_-]+", name):
        return name
    return f"'{name}'" if "'" not in name else json.dumps(name)


def fix_words(fix: Fix) -> str:
    """The fix in words; with edits in several manifests, each names its file."""
    if len({edit.manifest for edit in fix.edits}) == 1:
        return " and ".join(edit_words(edit) for edit in fix.edits)
    return "; ".join(
        f"{edit_words(edit)} ({edit.file})" if edit.file else edit_words(edit) for edit in fix.edits
    )


def _listed(features: Iterable[str]) -> str:
    return ", ".join(f'"{f}"' for f in features)


@dataclass(frozen=True)
class Location:
    """A span in a manifest, relative to the report root; lines and columns are 1-based."""

    file: str
    """Relative to the report root (`AuditResult.root`), with forward slashes."""
    line: int
    column: int
    """In characters."""
    end_line: int
    end_column: int
    """Just past the span's last character."""
    source_line: str = ""
    """The text of the start line, for quoting in reports."""


@dataclass(frozen=True)
class Cost:
    """What a finding costs, with `--measured`: timed on this machine by `featcheck probe
    --rule` (`here`), else quoted from the rule's documentation (its why)."""

    here: bool
    command: str
    """`featcheck probe --rule FC012`."""
    ratio: float | None = None
    """How many times slower the member's build ran its hot path here (None when quoted)."""
    workload: str = ""
    measured_on: str = ""
    """ISO 8601, when it was measured here."""
    features: tuple[str, ...] = ()
    """The crate's features in the build that was timed."""


class FindingIdentity(NamedTuple):
    """One finding, whichever configurations' builds show it: the same rule, crate, missing
    feature and place to edit (its cut), in the same member and target, saying the same."""

    code: str
    crate: str
    crate_version: str
    feature: str
    location: Location | None
    member: str | None
    target: str | None
    message: str

    @property
    def cut(self) -> tuple[str, str, str, str, str, int, int] | None:
        """What findings of several members and targets share when they are one cut."""
        if self.location is None:
            return None
        place = self.location
        return (*self[:4], place.file, place.line, place.column)  # code, crate, version, feature


@dataclass(frozen=True)
class Finding:
    """One configuration that costs performance in what cargo builds for a member and target."""

    code: str
    """e.g. `FC001`; never reused for another rule."""
    rule: str
    """e.g. `flex-without-rayon`."""
    severity: Severity
    member: str | None
    """None when saved tree text cannot tell."""
    crate: str
    """The crate built without the feature, e.g. `burn-flex`."""
    crate_version: str
    feature: str
    """The missing feature, e.g. `rayon`."""
    target: str | None
    """None when saved tree text does not say."""
    message: str
    """One sentence: what is wrong and what it costs."""
    location: Location | None
    """The manifest span to edit; None for saved tree text."""
    why: str = ""
    """Why it matters, with the measured numbers and their source."""
    suggestion: str = ""
    notes: tuple[str, ...] = field(default_factory=tuple)
    """Caveats about how the verdict was reached (e.g. what saved tree text cannot show)."""
    chain: tuple[str, ...] = field(default_factory=tuple)
    """The why chain: how the feature would arrive, what cut it, where else it is enabled."""
    fix: Fix | None = None
    """The best confirmed change (what `--fix` applies), if any."""
    alternatives: tuple[Fix, ...] = field(default_factory=tuple)
    """Other candidate changes, smallest first (unconfirmed unless marked)."""
    declaration: Location | None = None
    """The whole declaration `location` lies in (a table: header to last key), for suppressions."""
    inherited_by: Location | None = None
    """A cut in `[workspace.dependencies]`: the member's `workspace = true`, for suppressions."""
    member_declarations: tuple[Location, ...] = ()
    """The member's own declarations on the way to the crate, where suppressions count too."""
    confidence: Confidence = Confidence.RESOLVED
    configurations: tuple[FeatureSelection, ...] = ()
    """The `--features` selections whose build has it, reported one first; empty for tree text."""
    library: bool = False
    """A library-only member, whose binaries choose its features: info, and folded into theirs."""
    cost: Cost | None = None
    """With `--measured`, for rules the probe can time: the cost measured here, or quoted."""
    placement: str = ""
    """Why the fix edits the member's manifest, not the cut a workspace library owns; else empty."""
    deferred_to: tuple[str, ...] = ()
    """While the audit runs: features whose findings make this one go; empty in every report."""

    @property
    def identity(self) -> FindingIdentity:
        return FindingIdentity._make(getattr(self, name) for name in FindingIdentity._fields)

    @property
    def configuration(self) -> FeatureSelection | None:
        """The one the finding is reported for (its first)."""
        return self.configurations[0] if self.configurations else None


@dataclass(frozen=True)
class BuildGap:
    """One member's build on one target whose verdict depends on packages a --no-exec audit
    could not read (see `noexec.gaps`); its fields are JSON's `incomplete` entries."""

    member: str
    target: str
    unread: tuple[str, ...]
    """`name@version` of the unread packages the build reaches, sorted."""
    reasons: tuple[str, ...]
    """Why they were not read, sorted."""


@dataclass(frozen=True)
class TargetSkip:
    """A rule that would have reported findings but does not apply to the audited target
    (threading rules on `wasm32-unknown-unknown`): said with `-v`, never silently clean; its
    fields are JSON's `skipped` entries."""

    code: str
    rule: str
    target: str
    reason: str
    """Why the rule does not apply, e.g. `the target has no threads (...)`."""
    members: tuple[str, ...]
    findings: int

    def describe(self) -> str:
        """One line, for verbose output."""
        return (
            f"{self.code} ({self.rule}) not applied on {self.target}: {self.reason}; "
            f"{plural(self.findings, 'finding')} not reported ({', '.join(self.members)})"
        )


@dataclass(frozen=True)
class BaselineEntry:
    """One accepted finding of a baseline file (featcheck.comparison.baseline); a stale one
    matches no finding of a build this audit covered any more."""

    line: int
    fingerprint: str
    severity: Severity
    code: str
    member: str | None
    target: str | None
    configuration: str
    comment: str

    def describe(self) -> str:
        """The entry's own words (rule, member, crate, feature), as the file gives them; the
        build configuration where it is not the default (`--each-feature` writes one a build)."""
        who = f" {self.member}" if self.member else ""
        if self.configuration != "default":
            who += f" ({self.configuration})"
        about = f": {self.comment}" if self.comment else ""
        return f"{self.code}{who}{about}"


@dataclass(frozen=True)
class Comparison:
    """Findings set against earlier ones: a baseline file, or the audit of a base revision."""

    kind: Literal["baseline", "revision"]
    against: str
    """The baseline file (relative to the report root) or the revision, e.g. `main (1a2b3c4d)`."""
    hidden: tuple[Finding, ...] = ()
    """Findings that were there already (in the baseline, or on the revision): not shown."""
    absent: tuple[Finding, ...] = ()
    """Findings of the base revision that this audit no longer has (fixed since)."""
    stale: tuple[BaselineEntry, ...] = ()


@dataclass
class AuditResult:
    """Findings plus what was audited, for renderers."""

    root: Path
    """The repository root, else the audited directory (`--root`); locations are relative to it."""
    workspace_root: Path | None = None
    """Where Cargo.lock lies; None for tree text."""
    local_manifests: tuple[Path, ...] = ()
    """The manifest of every path package, as cargo names it (links not followed)."""
    findings: list[Finding] = field(default_factory=list)
    members: list[str] = field(default_factory=list)
    targets: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    suppressed: dict[str, int] = field(default_factory=dict)
    """How many findings each rule had that a suppression with a reason silenced."""
    fail_on: FailOn | None = None
    """The failing level the project's configuration sets (the command line wins)."""
    fix_level: Severity | None = None
    """The configuration's `fix-level`; the command line replaces it with the run's own."""
    incomplete: list[BuildGap] = field(default_factory=list)
    """Builds a --no-exec audit could not read fully: not clean even without findings."""
    skipped: list[TargetSkip] = field(default_factory=list)
    user_rules: tuple[Rule, ...] = ()
    """The project's own rules (`[[rule]]` in its configuration), which SARIF lists too."""
    configurations: dict[str, list[FeatureSelection]] = field(default_factory=dict)
    """The build configurations audited, by member, in audit order (empty for tree text)."""
    audited: Path | None = None
    """The audited directory, when it is not `root` itself."""
    configuration_errors: list[str] = field(default_factory=list)
    """Configurations cargo would refuse, one line each (the others were audited): exit code 2."""
    no_verdict: list[str] = field(default_factory=list)
    """Why the run cannot call the project clean: without findings, `no verdict` and exit 2."""
    rules: tuple[str, ...] = ()
    """The codes of the rules run for some member; empty when not known (saved tree text)."""
    baseline: Path | None = None
    """The baseline file the project's configuration names (`baseline`); `--baseline` wins."""
    comparisons: list[Comparison] = field(default_factory=list)
    """What `--baseline`/`--new-since` compared `findings` with: they hold only what is new."""
    workspace_features: dict[str, frozenset[str]] = field(default_factory=dict)
    """Every workspace member, audited or not, with the features it defines: a baseline entry
    about a member or feature no longer there is stale, whatever the run audited."""

    def applied_fix_level(self) -> Severity:
        """The least severity whose safe fixes `--fix` applies: `fix_level`, else the failing
        level (`fail_on`, else warning; warning too where nothing fails)."""
        if self.fix_level is not None:
            return self.fix_level
        return (self.fail_on or FailOn.WARNING).threshold or Severity.WARNING

    def applied_fixes(self) -> list[Finding]:
        """The findings whose safe fix `--fix` applies: those at or above the fix level, and
        those below it whose every edit one of those makes anyway (memchr's `std` below
        regex's, both added by the same edit of regex)."""
        level = self.applied_fix_level()
        fixable = [(f, f.fix.edits) for f in self.findings if f.fix is not None and f.fix.safe]
        made = {edit for finding, edits in fixable if finding.severity >= level for edit in edits}
        return [f for f, edits in fixable if f.severity >= level or made.issuperset(edits)]
