"""The rule fixtures (fixtures/rules/<code>/<case>/) and what featcheck prints for them.

A case is a directory `bad*` or `ok*` beside the rule's others, with a Cargo.toml and, where the
rule needs a target or `select`, a featcheck.toml. Its snapshots are
`fixtures/rules/<code>/snapshots/<case>.{text,json,diff}.snap`: the text report, the JSON report
and the `--diff` of the fix, each with the exit code and stderr (tests/snapshots.py). What cargo
answered for it is recorded in `fixtures/rules/<code>/cargo/<case>.json` (cargo_answers.py,
scripts/record_cargo_answers.py): `replayed_outputs` prints the snapshots in this process from it.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from cargo_answers import RECORD, Places, RecordedCargo, Recording, RecordingCargo
from cargo_tree_oracle import cargo_resolves
from cli_in_process import printed
from support import FIXTURES, trust_of

from featcheck import __version__
from featcheck.featureset import AuditOptions
from featcheck.pipeline import audit_project
from featcheck.report import AuditResult
from featcheck.rules import SECTIONS, Rule, rule_markdown
from featcheck.toml_read import toml_data

RULE_FIXTURES = FIXTURES / "rules"

OUTPUTS = {"text": (), "json": ("--format", "json"), "diff": ("--diff",)}
"""Each snapshot's kind and the options it is printed with."""

SNAPSHOT_TARGET = "x86_64-unknown-linux-gnu"
"""The target of a case whose featcheck.toml names none: a snapshot must not depend on the
machine it was taken on (rustc answers for any target it knows, installed or not)."""


def rule_cases(root: Path = RULE_FIXTURES) -> list[Path]:
    """Every case directory of every rule under `root`."""
    return sorted(p.parent for p in root.glob("fc*/*/Cargo.toml"))


def case_id(case: Path) -> str:
    """`fc001/bad`: a case as tests name it."""
    return f"{case.parent.name}/{case.name}"


def snapshot_path(case: Path, kind: str) -> Path:
    """Where the `kind` snapshot of `case` lives."""
    return case.parent / "snapshots" / f"{case.name}.{kind}.snap"


def audit_fixture(
    fixture: Path, tmp_path: Path, *targets: str, resolver: str = "featcheck"
) -> AuditResult:
    """Audit a copy of `fixture` (cargo writes a Cargo.lock) as the CLI does, without fixes, its
    builds resolved by `resolver`: "featcheck", or "cargo" (cargo tree, the oracle)."""
    copy = tmp_path / fixture.name
    shutil.copytree(fixture, copy)
    options = AuditOptions(targets=targets, confirm_fixes=False)
    if resolver == "featcheck":
        return audit_project(copy, options, trust_of(copy))
    assert resolver == "cargo", resolver
    with cargo_resolves():
        return audit_project(copy, options, trust_of(copy))


def _names_targets(case: Path) -> bool:
    config = case / "featcheck.toml"
    return config.exists() and "targets" in toml_data(config.read_text(encoding="utf-8"))


def locked_copy(case: Path, tmp_path: Path) -> Path:
    """A copy of `case` with the Cargo.lock real cargo makes for it, as a project has one."""
    project = tmp_path / case.name
    shutil.copytree(case, project)
    subprocess.run(
        ["cargo", "generate-lockfile", "--offline", "--quiet"],
        cwd=project,
        check=True,
        capture_output=True,
    )
    return project


def case_outputs(case: Path, tmp_path: Path, python_path: Path | None = None) -> dict[str, str]:
    """What featcheck prints for a copy of `case`, one entry per kind of OUTPUTS, as its snapshot
    holds it. The copy gets its Cargo.lock first, as a project has one: the diff then shows the
    fix alone, not a lockfile in the format of the cargo at hand. `python_path` runs another
    copy of the package (the test that follows docs/writing-rules.md)."""
    locked_copy(case, tmp_path)  # featcheck runs in tmp_path on case.name
    environment = {**os.environ, "NO_COLOR": "1", "COLUMNS": "100"}
    if python_path is not None:
        environment["PYTHONPATH"] = str(python_path)
    pinned = () if _names_targets(case) else ("--target", SNAPSHOT_TARGET)
    outputs: dict[str, str] = {}
    for kind, options in OUTPUTS.items():
        done = subprocess.run(
            [sys.executable, "-m", "featcheck", *options, *pinned, case.name],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            env=environment,
        )
        printed = (
            f"exit code: {done.returncode}\n--- stdout\n{done.stdout}--- stderr\n{done.stderr}"
        )
        outputs[kind] = _stable(printed, tmp_path)
    return outputs


def _stable(text: str, tmp_path: Path) -> str:
    """`text` without what changes from run to run: the temporary directory, the version."""
    text = text.replace(str(tmp_path), "<tmp>")
    tool = '"name": "featcheck",\n    "version": '
    return text.replace(f'{tool}"{__version__}"', f'{tool}"<version>"')


def recording_path(case: Path) -> Path:
    """Where cargo's recorded answers for `case` live (cargo_answers.py)."""
    return case.parent / "cargo" / f"{case.name}.json"


def registry_digest() -> str:
    """The synthetic registry's spec, digested: a recording holds for this registry only."""
    return hashlib.sha256((RULE_FIXTURES / "registry.toml").read_bytes()).hexdigest()[:24]


def _command_lines(case: Path) -> dict[str, tuple[str, ...]]:
    pinned = () if _names_targets(case) else ("--target", SNAPSHOT_TARGET)
    return {kind: (*options, *pinned, case.name) for kind, options in OUTPUTS.items()}


def replayed_outputs(
    case: Path, tmp_path: Path, registry: Path, kinds: Iterable[str] = OUTPUTS
) -> dict[str, str]:
    """What `case_outputs` prints (of `kinds`), from one audit in this process, with cargo's
    answers replayed from the case's recording (its Cargo.lock included): no process is
    started."""
    recording = Recording.load(recording_path(case))
    assert recording.registry == registry_digest(), f"registry.toml changed: {RECORD}"
    project = tmp_path / case.name
    shutil.copytree(case, project)
    (project / "Cargo.lock").write_text(recording.lockfile, encoding="utf-8")
    places = Places(registry)
    lines = {kind: line for kind, line in _command_lines(case).items() if kind in kinds}
    outputs = printed(
        lines, tmp_path, lambda workdir, options, trust: RecordedCargo(recording, places, trust)
    )
    return {kind: _stable(text, tmp_path) for kind, text in outputs.items()}


def recorded_outputs(
    case: Path, tmp_path: Path, registry: Path
) -> tuple[Recording, dict[str, str]]:
    """`replayed_outputs` with real cargo (over the synthetic `registry`, which the
    environment's CARGO_HOME must name), and every answer it gave, recorded. The case's
    command lines ask cargo the same question more than once (the text, JSON and diff audits
    of one unchanged copy): real cargo answers the first, the case's own memo the others
    (tests/cargo_memo.py), and the recording holds each distinct question once either way."""
    from cargo_memo import CargoMemo

    memo = CargoMemo()
    recording = Recording(registry_digest())
    project = locked_copy(case, tmp_path)
    recording.lockfile = (project / "Cargo.lock").read_text(encoding="utf-8")
    places = Places(registry)
    outputs = printed(
        _command_lines(case),
        tmp_path,
        lambda workdir, options, trust: RecordingCargo(
            memo.source(workdir, options, trust), recording, places
        ),
        processes=True,
    )
    return recording, {kind: _stable(text, tmp_path) for kind, text in outputs.items()}


def findings_of(json_output: str) -> list[dict[str, Any]]:
    """The findings of a JSON snapshot (its stdout)."""
    stdout = json_output.split("--- stdout\n", 1)[1].split("--- stderr\n", 1)[0]
    findings: list[dict[str, Any]] = json.loads(stdout)["findings"]
    return findings


def check_case(case: Path, json_output: str) -> None:
    """A `bad*` case gives exactly one finding of its rule, at the dependency declaration on
    line 9 of its Cargo.toml; an `ok*` case none."""
    code = case.parent.name.upper()
    findings = findings_of(json_output)
    found = [f for f in findings if f["code"] == code]
    if case.name.startswith("ok"):
        assert found == [], [f["message"] for f in found]
        return
    assert len(found) == 1, [f["message"] for f in findings]
    [finding] = found
    assert (finding["location"]["file"], finding["location"]["line"]) == ("Cargo.toml", 9)
    assert finding["feature"] in finding["message"] and finding["why"]


def check_documented(rule: Rule) -> None:
    """What a built-in rule's spec must say besides what the reader checks: a consequence and
    every doc section (`fix-example` may be left out), the references as https links."""
    for _, section in SECTIONS:
        value = getattr(rule.doc, section)
        if section == "references":
            assert value and all(r.startswith("https://") for r in value)
        else:
            assert len(value.strip()) > 20, section
    assert rule.consequence and rule.summary
    text = rule_markdown(rule)
    for title, _ in SECTIONS:
        assert f"# {title}" in text
