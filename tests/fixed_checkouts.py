"""A fixture's checkout audited and then fixed by `--fix` once per test module, for the tests
that each check a part of what the fix did (its edits, cargo's verdict, the report after it).

Each copy is featcheck's own work done once: the audit (`--format json`), then, where a test
asks for it, `--fix --fix-level info --format json` over the same copy, both the command line
in this process (`run_in_process`). What cargo builds in the fixed checkout is asked of real
cargo (`cargo tree --locked`), once per member and crate for the module: the checkout does not
change after the fix, so a second test asking the same question gets the same answer.
"""

from __future__ import annotations

import functools
import json
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from cli_in_process import run_in_process
from support import WORKSPACES


def manifests(root: Path) -> dict[Path, str]:
    """Every Cargo.toml under `root` with its text."""
    return {p.relative_to(root): p.read_text() for p in root.rglob("Cargo.toml")}


class FixedCheckout:
    """One copy of a fixture workspace: its audit, its `--fix` run, cargo's view of the result."""

    def __init__(self, project: Path) -> None:
        self.project = project
        self.before = manifests(project)
        """The manifests as copied, before any run."""
        self._trees: dict[tuple[str, str], set[str]] = {}

    @functools.cached_property
    def audit(self) -> subprocess.CompletedProcess[str]:
        """`featcheck PROJECT --format json`, before any fix."""
        return run_in_process(str(self.project), "--format", "json")

    @property
    def report(self) -> dict[str, Any]:
        result = self.audit
        assert result.returncode in (0, 1), result.stderr
        report: dict[str, Any] = json.loads(result.stdout)
        return report

    @functools.cached_property
    def fixed(self) -> subprocess.CompletedProcess[str]:
        """`featcheck PROJECT --fix --fix-level info --format json`, after the audit: every
        finding's fix, the info findings' too; its report is the fixed checkout's."""
        assert self.audit is not None
        return run_in_process(str(self.project), "--fix", "--fix-level", "info", "--format", "json")

    def built(self, member: str, crate: str) -> set[str]:
        """The features real cargo builds on `crate` (`name` or `name@version`) for `member`
        in the fixed checkout, with its Cargo.lock as it is: `--locked` fails, as
        `cargo metadata --locked` does, where cargo would have to change it (the whole
        workspace is resolved either way)."""
        assert self.fixed is not None
        key = (member, crate)
        if key not in self._trees:
            self._trees[key] = cargo_built(self.project, member, crate)
        return self._trees[key]


def cargo_built(project: Path, member: str, crate: str) -> set[str]:
    """What `FixedCheckout.built` asks, of any checkout, every time."""
    tree = subprocess.run(
        ["cargo", "tree", "--locked", "-e", "normal", "-p", member, "-i", crate, "-f", "{p} [{f}]"],
        cwd=project,
        capture_output=True,
        text=True,
        check=False,
    )
    assert tree.returncode == 0, tree.stderr
    match = re.search(r"\[([^\]]*)\]$", tree.stdout.splitlines()[0])
    assert match is not None, tree.stdout
    return set(filter(None, match.group(1).split(",")))


class FixedCheckouts:
    """The module's copies, one per fixture name, made on first use."""

    def __init__(self, base: pytest.TempPathFactory) -> None:
        self.base = base
        self._copies: dict[str, FixedCheckout] = {}

    def of(self, name: str) -> FixedCheckout:
        if name not in self._copies:
            project = self.base.mktemp(name) / name
            shutil.copytree(WORKSPACES / name, project)
            self._copies[name] = FixedCheckout(project)
        return self._copies[name]
