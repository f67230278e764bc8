"""The matrix: every entry point of featcheck (rows) against every hostile checkout (columns).

An entry point is a way a user starts featcheck on a checkout: a subcommand with the options
that read or write something, alone or in the combinations that derive other trees from the
checkout (the `--fix` copy, the `--new-since` revision tree, the probe's fixed copy), `cargo
featcheck`, each hook of .pre-commit-hooks.yaml run as pre-commit runs it, and the Action's
steps run as the runner runs them. test_completeness.py fails for any option, hook or step that
no row runs.

Arguments name the run's copy of the checkout through placeholders: {project} (the audited
directory), {root} (the checkout root, where reports and baselines are written), {manifest},
{package}, {host} (the host triple), {revision} (each revision the checkout offers, see
`Entry.per_revision`) and {base} (the pull request's base for the Action).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import yaml
from hostile_world import World
from support import REPO

from featcheck.cli import COMMANDS

ACTION = "action"
CARGO = "cargo"
FEATCHECK = "featcheck"
HOOK = "hook"
"""Kinds of entry point: the console script, `cargo featcheck`, a pre-commit hook, the Action."""


@dataclass(frozen=True)
class Entry:
    name: str
    args: tuple[str, ...] = ()
    kind: str = FEATCHECK
    outside: bool = False
    """Run from a directory outside the checkout (default: from its root, as a user does)."""
    stdin: str = ""
    per_revision: bool = False
    """Run once per revision the checkout offers (`--new-since {revision}`)."""
    revision: int = 0
    """Otherwise, which of them (the last where the checkout offers fewer)."""
    action: dict[str, str] = field(default_factory=dict)
    """The Action's inputs, and `event_name`/`base` for its github context."""
    runs: int = 1
    """Runs one after the other, in the same checkout with the same user cache."""
    last_says: str = ""
    """On the clean checkout: a text the last of several runs prints."""
    clean_exit: frozenset[int] = frozenset({1})
    clean_says: str = ""
    """On the clean checkout: the exit code, and a text of what it printed, which show that the
    entry point did its work (so that a row passing elsewhere means something)."""
    timeout: float = 20.0

    @property
    def subcommand(self) -> str:
        return self.args[0] if self.args and self.args[0] in COMMANDS else "check"


TREE_TEXT = (REPO / "fixtures" / "trees" / "pitb-exec-cpu-simd.invert-burn-flex.txt").read_text()

CHECK_ENTRIES = (
    Entry("text", ("{project}", "--sarif", "{root}/featcheck.sarif"), clean_says="error[FC001]"),
    Entry(
        "json",
        (
            "{project}",
            "--format",
            "json",
            "-p",
            "{package}",
            "--target",
            "{host}",
            "-F",
            "burn/simd",
            "--select",
            "FC006",
            "--ignore",
            "FC003",
            "--fail-on",
            "error",
            "--locked",
            "--root",
            "{root}",
            "--timeout",
            "5",
            "--color",
            "never",
        ),
        clean_says='"code": "FC001"',
    ),
    Entry(
        "github",
        ("{project}", "--format", "github", "-v"),
        clean_says="::error file=",
    ),
    Entry(
        "unchanged",
        ("{project}", "-v"),
        # The last run takes cargo's kept answer (cargo/last_answer.py): the first may keep
        # none, where the copy of the checkout was written just before cargo started.
        runs=3,
        clean_says="error[FC001]",
        last_says="featcheck: reusing the answer of: cargo metadata",
    ),
    Entry("sarif", ("{project}", "--format", "sarif", "-o", "{root}/featcheck.out", "-q")),
    Entry("fix", ("{project}", "--fix"), clean_exit=frozenset({0}), clean_says="fixed 2 file"),
    Entry(
        "fix-level",
        ("{project}", "--fix", "--fix-level", "info"),
        clean_exit=frozenset({0}),
        clean_says="fixed 2 file",
    ),
    Entry("diff", ("{project}", "--diff"), clean_says="+++ b/Cargo.toml"),
    Entry(
        "new-since",
        ("{project}", "--new-since", "{revision}"),
        per_revision=True,
        clean_exit=frozenset({0}),
        clean_says="also on HEAD~1",
    ),
    Entry(
        "new-since+fix",
        ("{project}", "--new-since", "{revision}", "--fix", "--no-default-features"),
        clean_exit=frozenset({0}),
        # The finding is on HEAD~1 too, and --fix changes only what is shown: the revision is
        # audited before anything is fixed, and nothing is written.
        clean_says="fixed 0 files",
    ),
    Entry(
        "new-since+no-exec",
        ("{project}", "--no-exec", "--new-since", "{revision}", "--timeout", "5"),
        revision=1,  # the planted checkout's tree bomb: --timeout must bound --no-exec too
        clean_exit=frozenset({0}),
        clean_says="also on HEAD~1",
    ),
    Entry(
        "baseline",
        ("{project}", "--baseline", "{root}/featcheck-baseline.txt", "--new-since", "{revision}"),
        clean_exit=frozenset({0}),
        clean_says="in the baseline",
    ),
    Entry(
        "write-baseline",
        ("{project}", "--write-baseline", "{root}/featcheck-baseline.txt"),
        clean_exit=frozenset({0}),
        clean_says="1 finding accepted",
    ),
    Entry(
        "each-feature",
        ("{project}", "--each-feature", "--offline"),
        clean_says="configurations",
    ),
    Entry("tree-stdin", ("--tree", "-"), stdin=TREE_TEXT, clean_exit=frozenset({0})),
    Entry("no-exec", ("{project}", "--no-exec", "--format", "json"), clean_says="FC001"),
    Entry(
        "no-exec+fix",
        ("{project}", "--no-exec", "--fix", "--all-features"),
        # Refused before anything is read: --fix confirms with cargo, --no-exec starts nothing.
        clean_exit=frozenset({2}),
        clean_says="--fix cannot be used with --no-exec",
    ),
    Entry("measured", ("--manifest-path", "{manifest}", "--measured"), outside=True),
)

OTHER_ENTRIES = (
    Entry("rules", ("rules", "{root}"), clean_exit=frozenset({0}), clean_says="FC001"),
    Entry("rule", ("rule", "FC001", "{root}"), clean_exit=frozenset({0}), clean_says="rayon"),
    Entry(
        "probe-compare-fix",
        (
            "probe",
            "--compare-fix",
            "--manifest-path",
            "{manifest}",
            "-p",
            "{package}",
            "--format",
            "json",
            "-v",
            "--offline",
            "--timeout",
            "20",
            "--n",
            "256",
        ),
        outside=True,
        clean_exit=frozenset({2}),
        clean_says="pass --yes",
        timeout=60,
    ),
    Entry(
        "probe-rule",
        ("probe", "--rule", "all", "{project}"),
        clean_exit=frozenset({2}),
        clean_says="nothing to probe",
        timeout=60,
    ),
    Entry(
        "cargo-featcheck",
        ("{project}", "--format", "json"),
        kind=CARGO,
        outside=True,
        clean_says="FC001",
    ),
    Entry(
        "action-push",
        kind=ACTION,
        action={
            "path": ".",
            "args": "-p {package} --fail-on error",
            "sarif": "true",
            "sarif-file": "featcheck.sarif",
            "new-since": "{revision}",
            "event_name": "push",
        },
        clean_exit=frozenset({0}),
        clean_says="wrote SARIF",
    ),
    Entry(
        "action-pull-request",
        kind=ACTION,
        action={"path": ".", "event_name": "pull_request", "base": "{base}"},
        clean_exit=frozenset({0}),
        clean_says="no new findings",
    ),
)


def hook_entries() -> tuple[Entry, ...]:
    """Each hook of .pre-commit-hooks.yaml, as pre-commit runs it: its entry and args, no file
    names (`pass_filenames: false`), from the repository root."""
    hooks = yaml.safe_load((REPO / ".pre-commit-hooks.yaml").read_text())
    return tuple(
        Entry(
            f"hook-{hook['id']}",
            (*hook["entry"].split(), *hook.get("args", [])),
            kind=HOOK,
            clean_exit=frozenset({0}) if "--fix" in hook["entry"] else frozenset({1}),
        )
        for hook in hooks
    )


ENTRIES = (*CHECK_ENTRIES, *OTHER_ENTRIES, *hook_entries())


@dataclass(frozen=True)
class Column:
    """A checkout of the family, and the user's environment around it."""

    name: str
    checkout: str
    environment: Callable[[Path], dict[str, str]] = lambda root: {}
    prepare: Callable[[Path, World], None] = lambda root, world: None


def _toolchain_inside(root: Path, world: World) -> None:
    """A `path` toolchain and cargo, rustc and rustup on PATH, all the checkout's."""
    toolchain = root / "rustup" / "toolchains" / "stable-x86_64-unknown-linux-gnu"
    (root / "rust-toolchain.toml").write_text(f'[toolchain]\npath = "{toolchain}"\n')
    for program in ("cargo", "rustc", "rustup"):
        world.marker_script(root / "node_modules" / ".bin" / program)


COLUMNS = (
    Column("clean", "clean"),
    Column("planted", "planted"),
    Column("planted-cargo-home-inside", "planted", lambda root: {"CARGO_HOME": f"{root}/.cargo"}),
    Column("planted-cache-inside", "planted", lambda root: {"XDG_CACHE_HOME": f"{root}/.cache"}),
    Column(
        "planted-toolchain-inside",
        "planted",
        lambda root: {
            "RUSTUP_HOME": f"{root}/rustup",
            "PATH_PREFIX": f"{root}/node_modules/.bin",
        },
        _toolchain_inside,
    ),
    Column("escapes", "escapes"),
    Column("network", "network"),
)

LIMITS = {
    (
        "cargo-featcheck",
        "planted-cargo-home-inside",
    ): "cargo reads $CARGO_HOME/config.toml (its [alias] featcheck) before featcheck starts",
    (
        "cargo-featcheck",
        "planted-toolchain-inside",
    ): "the user's cargo is rustup's proxy, which runs the toolchain RUSTUP_HOME names",
}
"""Rows no featcheck can pass: the program the user starts obeys the checkout before featcheck
runs (docs/how-it-decides.md says so). They are expected to fail, strictly: one that passes
means the limit is gone, and the row should be held like the others."""


def rows(columns: tuple[Column, ...]) -> list[object]:
    """pytest parameters for each entry point on each of `columns`, `entry-x-column`."""
    made = []
    for column in columns:
        for entry in ENTRIES:
            reason = LIMITS.get((entry.name, column.name))
            marks = [pytest.mark.xfail(reason=reason, strict=True)] if reason else []
            made.append(
                pytest.param(entry, column, id=f"{entry.name}-x-{column.name}", marks=marks)
            )
    return made
