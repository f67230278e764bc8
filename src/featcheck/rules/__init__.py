"""The rules: specs (data), one detector, the catalogue of a run, and their documentation.

A built-in rule is one TOML file in `builtin/`, named after its code (docs/writing-rules.md says
how to add one), read once on first use; a project adds its own in the same form under
`[[rule]]` in its configuration (`featcheck.policy` makes a `Catalogue` with both). A code is
never reused. FC900 `unused-suppression` has a catalogue entry of its own
(`UNUSED_SUPPRESSION`, a `Rule` of no crate): no spec produces its findings, `featcheck.policy`
makes them.
"""

from __future__ import annotations

import functools
import textwrap
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from importlib import resources

from featcheck.errors import FeatcheckError
from featcheck.rules.detect import BuildView, Detection, detect, skipped_for_target
from featcheck.rules.load import BUILTIN_CODE, parse_rule
from featcheck.rules.spec import CAPABILITIES, Rule, RuleDoc, SpecError
from featcheck.severity import Severity
from featcheck.toml_read import toml_data

__all__ = [
    "BuildView",
    "Catalogue",
    "Detection",
    "Rule",
    "builtin_rules",
    "detect",
    "skipped_for_target",
]


FC900_UNSELECTABLE = "FC900 (unused-suppression) is reported unless ignored; it cannot be selected"


def check_builtin_codes(select: tuple[str, ...], ignore: tuple[str, ...]) -> None:
    """An unknown FC code fails before cargo runs; other names may be the project's own rules,
    known once its configuration is read."""

    def builtin(codes: tuple[str, ...]) -> tuple[str, ...]:
        return tuple(
            c for c in codes if BUILTIN_CODE.fullmatch(c.strip().upper()) or names_fc900(c)
        )

    try:
        Catalogue.builtin().select(builtin(select), builtin(ignore))
    except ValueError as error:
        raise FeatcheckError(str(error)) from None


def names_fc900(text: str) -> bool:
    return find_by_code((UNUSED_SUPPRESSION,), text) is not None


def find_by_code(entries: Iterable[Rule], text: str) -> Rule | None:
    """The entry with this code or name (case-insensitive), if any."""
    wanted = text.strip().lower()
    return next((e for e in entries if wanted in (e.code.lower(), e.name)), None)


@functools.cache
def builtin_rules() -> tuple[Rule, ...]:
    """The built-in rules, in code order (read from the package's data files once)."""
    rules: list[Rule] = []
    for entry in sorted(resources.files("featcheck.rules.builtin").iterdir(), key=lambda e: e.name):
        if not entry.name.endswith(".toml"):
            continue
        # tomli, not tomlkit (~200 ms for the specs): every run loads them.
        data = toml_data(entry.read_text(encoding="utf-8"))
        try:
            rules.append(parse_rule(data, builtin=True))
        except SpecError as error:  # a defect of the package, caught by its tests
            where = ".".join(str(p) for p in error.path)
            raise RuntimeError(f"{entry.name}: {where}: {error}") from None
    return tuple(sorted(rules, key=lambda r: r.code))


@dataclass(frozen=True)
class Catalogue:
    """Every rule of a run, built-in ones first; codes and names are unique."""

    rules: tuple[Rule, ...]

    @classmethod
    def builtin(cls) -> Catalogue:
        return cls(builtin_rules())

    def select(self, select: Iterable[str] = (), ignore: Iterable[str] = ()) -> tuple[Rule, ...]:
        """The rules to run: the defaults plus `select`ed ones (codes or names), minus `ignore`d;
        a ValueError names any unknown one."""
        if any(map(names_fc900, select)):
            raise ValueError(FC900_UNSELECTABLE)
        # Not a rule that runs: ignored, it reports nothing (`policy.suppress`).
        select, ignore = tuple(select), tuple(c for c in ignore if not names_fc900(c))
        unknown = [c for c in (*select, *ignore) if find_by_code(self.rules, c) is None]
        if unknown:
            raise ValueError(f"unknown rule {', '.join(unknown)} (see `featcheck rules`)")
        chosen = {r.code for r in self.rules if r.enabled_by_default}
        chosen |= {r.code for c in select if (r := find_by_code(self.rules, c))}
        chosen -= {r.code for c in ignore if (r := find_by_code(self.rules, c))}
        return tuple(r for r in self.rules if r.code in chosen)


UNUSED_SUPPRESSION = Rule(
    code="FC900",
    name="unused-suppression",
    severity=Severity.WARNING,
    summary="a suppression (an `allow` entry or a `# featcheck: allow` comment) matches no finding",
    crates=(),
    feature="",
    consequence="",
    doc=RuleDoc(
        what=(
            "Reports each `[[allow]]` entry of the configuration and each code of a "
            "`# featcheck: allow(...)` comment that suppressed no finding in this audit. "
            "Entries for a member, target or rule that was not audited are not reported; "
            "an entry that names a member, crate or target that does not exist (a typo) "
            "always is."
        ),
        why=(
            "A suppression that matches nothing is stale or mistyped: the problem it excused "
            "was fixed, or its code, crate, member or target does not match what featcheck "
            "reports. Left in place, it would silently hide the problem if it came back."
        ),
        example=(
            "# the declaration has `rayon`, so FC001 does not fire here\n"
            'burn = { version = "0.22", features = ["flex", "rayon"] }  '
            "# featcheck: allow(FC001) wasm build"
        ),
        fix="Remove the suppression, or correct its code, crate, member or target.",
        ignore=(
            'While a suppression is needed only sometimes, add `ignore = ["FC900"]` to the '
            "configuration; FC900 itself cannot be allowed."
        ),
    ),
)


# Rule documentation from the specs: `featcheck rules`, `featcheck rule CODE`, docs/rules.md
# and the rule table of the README.
#
# Every function takes the catalogue entries to show: the rules, and FC900 (`unused-suppression`),
# which the suppressions make and the rules do not know. docs/rules.md and the README's table
# between its `rules-table` markers are generated; tests/rules/test_rule_docs.py fails when either
# drifts from the specs and rewrites both with FEATCHECK_UPDATE_SNAPSHOTS=1.

SECTIONS = (
    ("What it checks", "what"),
    ("Why it matters", "why"),
    ("Example", "example"),
    ("Fix", "fix"),
    ("Fix safety", "fix_safety"),
    ("When to ignore it", "ignore"),
    ("References", "references"),
)
"""The documentation sections, in order (ruff's template, in featcheck's words)."""

_CAPABILITY_WORDS = {
    "std": "targets with `std` (not `*-none-*`)",
    "threads": "targets with threads (not `wasm32-*` without the `atomics` target feature, "
    "not targets without `std`)",
}
assert set(_CAPABILITY_WORDS) == set(CAPABILITIES)


def rule_markdown(rule: Rule, heading: str = "#") -> str:
    opt_in = "" if rule.enabled_by_default else f" (opt-in: `--select {rule.code}`)"
    intro = f"Default severity: **{rule.severity.label}**{opt_in}. {rule.summary}."
    scope = [", ".join(f"`{t}`" for t in rule.targets.triples)] if rule.targets.triples else []
    scope += [_CAPABILITY_WORDS[n] for n in rule.targets.needs]
    if unless := rule.targets.unless_features:
        scope.append(f"not where {', '.join(f'`{f}`' for f in unless)} is on at compile time")
    intro += f" Applies to {'; '.join(scope)}." if scope else ""
    lines = [f"{heading} {rule.code} `{rule.name}`", "", intro]
    doc = rule.doc
    for title, attribute in SECTIONS[:-1]:  # the references (last) are a list
        text = rule.worded(getattr(doc, attribute))
        if not text:
            continue  # a user rule may leave sections out; built-in ones may not (tests)
        lines += ["", f"{heading}# {title}", ""]
        lines += ["```toml", text, "```"] if attribute == "example" else [text]
        if attribute == "fix" and doc.fix_example:
            lines += ["", "```toml", doc.fix_example, "```"]
    if doc.references:
        lines += ["", f"{heading}# {SECTIONS[-1][0]}", ""]
        lines += [f"- <{r}>" if "://" in r else f"- {r}" for r in doc.references]
    return "\n".join(lines) + "\n"


_SUMMARY_COLUMN = 30
"""The narrowest the `what it checks` column of `featcheck rules` may be beside the others;
below it each summary goes under its row."""


def rule_table(rules: Sequence[Rule], width: int) -> list[str]:
    """`featcheck rules`: code, name, default severity and what each rule checks, as a table
    that fits `width` columns (the summaries wrapped in their column, or under each row)."""
    rows = [
        ((r.code, r.name, r.severity.label + ("" if r.enabled_by_default else ", opt-in")), r)
        for r in rules
    ]
    heads = ("code", "name", "severity")
    widths = [max(len(h), *(len(cells[i]) for cells, _ in rows)) + 2 for i, h in enumerate(heads)]
    fixed = sum(widths)
    beside = width - fixed >= _SUMMARY_COLUMN
    summary_at = fixed if beside else widths[0]
    lines = ["".join(h.ljust(w) for h, w in zip(heads, widths, strict=True))]
    lines[0] = (lines[0] + "what it checks") if beside else lines[0].rstrip()
    for cells, rule in rows:
        start = "".join(c.ljust(w) for c, w in zip(cells, widths, strict=True))
        summary = textwrap.wrap(rule.summary, max(width - summary_at, 20))
        lines += [start + summary[0]] if beside else [start.rstrip(), " " * summary_at + summary[0]]
        lines += [" " * summary_at + more for more in summary[1:]]
    return lines
