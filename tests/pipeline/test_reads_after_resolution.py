"""Once resolution starts, an audit reads no manifest: the finding's place, its fix, its why
chain and the rendered line are read off the model (docs/how-it-decides.md, "One finding, from
cargo's answer to the rendered line"). What the audit still opens in the checkout is Cargo.lock,
to tell whether cargo rewrote it (fileio.LockfileWatch).

One reader stands apart, and is not recorded: cargo's check of a fix that needs packages
Cargo.lock lacks, which copies the workspace for cargo to resolve (fixes/workspace_copy.py). Keeping
cargo's answer for the next run reads the root manifest's member patterns as cargo answers, and
once the audit is done only notes the state of the files cargo read (cargo/last_answer.py).
`--fix` and `--diff` edit manifests and are not audits.

Every file Python opens passes an audit hook ("open" events: `open`, `os.open`, `Path.read_*`),
so a read added after resolution, through any call, fails these tests.
"""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from cli_in_process import run_in_process
from rule_fixtures import RULE_FIXTURES, replayed_outputs
from support import CRATES, WORKSPACES

import featcheck.pipeline
from featcheck.fixes.overlay import OverlayCheck

_opened: list[str] | None = None
"""What the hook records: None while nothing is recorded."""
_hooked = False


def _hook(event: str, args: tuple[Any, ...]) -> None:
    if event == "open" and _opened is not None and isinstance(args[0], (str, bytes, os.PathLike)):
        _opened.append(os.fsdecode(args[0]))


class Reads:
    """The files the audit opened from the start of its resolution stage on."""

    def __init__(self) -> None:
        self.opened: list[str] = []

    def of_the_next_audit(self) -> None:
        """Forget what was opened, and record nothing until resolution starts again: the next
        audit reads the checkout before resolution, as it should."""
        global _opened
        _opened = None
        self.opened = []

    def in_checkout(self, checkout: Path) -> list[str]:
        """What was opened inside `checkout`, relative to it."""
        root = checkout.resolve()
        inside = {Path(p).resolve() for p in self.opened}
        return sorted(p.relative_to(root).as_posix() for p in inside if p.is_relative_to(root))


@pytest.fixture
def reads(monkeypatch: pytest.MonkeyPatch) -> Iterator[Reads]:
    global _hooked
    if not _hooked:  # an audit hook stays for the process: added by the first test that asks
        sys.addaudithook(_hook)
        _hooked = True
    resolve, confirm, found = featcheck.pipeline.resolve, OverlayCheck.confirm, Reads()

    def recording(*args: Any, **kwargs: Any) -> Any:
        global _opened
        _opened = found.opened
        return resolve(*args, **kwargs)

    def unrecorded(*args: Any, **kwargs: Any) -> Any:
        global _opened
        _opened = None
        try:
            return confirm(*args, **kwargs)
        finally:
            _opened = found.opened

    monkeypatch.setattr(featcheck.pipeline, "resolve", recording)
    monkeypatch.setattr(OverlayCheck, "confirm", unrecorded)
    try:
        yield found
    finally:
        found.of_the_next_audit()


@pytest.mark.usefixtures("remembered_cargo")
@pytest.mark.parametrize(
    "project",
    [
        CRATES / "pitb-exec-cpu",  # FC001: the cut is the member's own line
        WORKSPACES / "workspace-inheritance",  # the cut is a [workspace.dependencies] entry
        WORKSPACES / "shape-i-library-owns-the-cut",  # a library's line, for several members
    ],
    ids=lambda p: p.name,
)
def test_an_audit_reads_no_manifest_once_resolution_starts(
    project: Path, tmp_path: Path, offline_cargo_for: Callable[..., Path], reads: Reads
) -> None:
    offline_cargo_for(project)
    copy = tmp_path / project.name
    shutil.copytree(project, copy, ignore=shutil.ignore_patterns("target"))
    for arguments in ((), ("--format", "json"), ("--verbose",)):
        reads.of_the_next_audit()
        result = run_in_process(str(copy), *arguments)
        assert result.returncode == 1, result.stdout + result.stderr
        assert ".toml:" in result.stdout  # a finding, placed at a manifest line
        assert reads.in_checkout(copy) == ["Cargo.lock"], arguments


def test_a_present_features_chain_is_read_off_the_record_not_the_checkout(
    tmp_path: Path, synthetic_registry: Path, reads: Reads
) -> None:
    """FC021's chain names the member's own line that switches the feature on: read off the
    resolver's record of that build (cargo's answers replayed, no process)."""
    case = RULE_FIXTURES / "fc021" / "bad"
    outputs = replayed_outputs(case, tmp_path, synthetic_registry, kinds=("json",))
    assert "switched on by fc021-bad's dependency precise-config: precise-config" in outputs["json"]
    assert reads.in_checkout(tmp_path / case.name) == ["Cargo.lock"]
