"""Every rule over its fixtures: a build that triggers it and one that does not, and what
featcheck prints for each, against its snapshots (tests/rule_fixtures.py says where they are;
FEATCHECK_UPDATE_SNAPSHOTS=1 rewrites them).

The snapshots are printed in this process from one audit per case, with what cargo answered
over the small synthetic registry (fixtures/rules/registry.toml) replayed from the case's
recording; test_cargo_answers.py holds the recordings to real cargo's answers.
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
from cli_in_process import run_in_process
from rule_fixtures import (
    OUTPUTS,
    RULE_FIXTURES,
    audit_fixture,
    case_id,
    check_case,
    replayed_outputs,
    rule_cases,
    snapshot_path,
)
from snapshots import assert_snapshot
from support import WORKSPACES, trust_of

from featcheck.featureset import AuditOptions
from featcheck.pipeline import audit_project
from featcheck.rules import builtin_rules
from featcheck.rules.spec import TargetScope, lacks, not_applicable
from featcheck.semantics.cfg import TargetCfg

CASES = rule_cases()


def _host() -> str:
    output = subprocess.run(["rustc", "-vV"], capture_output=True, text=True).stdout
    return next(line[6:] for line in output.splitlines() if line.startswith("host: "))


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_rule_fixture(case: Path, tmp_path: Path, synthetic_registry: Path) -> None:
    outputs = replayed_outputs(case, tmp_path, synthetic_registry)
    check_case(case, outputs["json"])
    for kind, printed in outputs.items():
        assert_snapshot(snapshot_path(case, kind), printed)


def test_every_builtin_rule_has_fixtures_both_ways() -> None:
    for rule in builtin_rules():
        directory = RULE_FIXTURES / rule.code.lower()
        kinds = {p.name.split("-")[0] for p in directory.iterdir() if (p / "Cargo.toml").exists()}
        assert kinds == {"bad", "ok"}, rule.code


def test_every_snapshot_belongs_to_a_case() -> None:
    expected = {snapshot_path(case, kind) for case in CASES for kind in OUTPUTS}
    assert set(RULE_FIXTURES.glob("*/snapshots/*")) <= expected


# --- targets --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "target, reason, resolver",
    [
        ("wasm32-unknown-unknown", "no threads", "featcheck"),
        ("wasm32-unknown-unknown", "no threads", "cargo"),  # cargo tree needs no installed target
        ("thumbv7em-none-eabihf", "no `std`", "featcheck"),
    ],
)
def test_threading_rules_skip_targets_without_threads(
    target: str, reason: str, resolver: str, tmp_path: Path, synthetic_cargo: Path
) -> None:
    host = _host()
    fixture = RULE_FIXTURES / "fc001" / "bad"
    result = audit_fixture(fixture, tmp_path, target, host, resolver=resolver)
    assert [(f.code, f.target) for f in result.findings] == [("FC001", host)]
    [skip] = result.skipped
    assert (skip.code, skip.target, skip.members, skip.findings) == (
        "FC001",
        target,
        ("fc001-bad",),
        1,
    )
    assert reason in skip.reason


def test_the_real_burn_graph_on_wasm_gives_no_threading_finding(
    offline_cargo_for: Callable[..., Path],
) -> None:
    offline_cargo_for(WORKSPACES / "direct-flex")
    # burn 0.22.1 from the stub registry of real manifests: the host build is flagged, wasm not.
    host = _host()
    options = AuditOptions(targets=("wasm32-unknown-unknown", host), confirm_fixes=False)
    result = audit_project(
        WORKSPACES / "direct-flex", options, trust_of(WORKSPACES / "direct-flex")
    )
    assert {(f.code, f.target) for f in result.findings} == {("FC001", host)}
    assert [(s.code, s.target) for s in result.skipped] == [("FC001", "wasm32-unknown-unknown")]


def test_a_skipped_target_is_said_once_with_verbose(tmp_path: Path, synthetic_cargo: Path) -> None:
    project = tmp_path / "project"
    shutil.copytree(RULE_FIXTURES / "fc001" / "bad", project)
    quiet = run_in_process(str(project), "--target", "wasm32-unknown-unknown")
    assert quiet.returncode == 0 and "FC001" not in quiet.stderr + quiet.stdout
    verbose = run_in_process(str(project), "--target", "wasm32-unknown-unknown", "-v")
    assert verbose.returncode == 0
    said = [line for line in verbose.stderr.splitlines() if "FC001" in line]
    assert said == [
        "featcheck: FC001 (flex-without-rayon) not applied on wasm32-unknown-unknown: the target "
        "has no threads (wasm without the `atomics` target feature); 1 finding not reported "
        "(fc001-bad)"
    ]


def _cfg(triple: str, *pairs: tuple[str, str]) -> TargetCfg:
    return TargetCfg(triple, frozenset(), frozenset(pairs))


def test_target_capabilities() -> None:
    wasm = _cfg("wasm32-unknown-unknown", ("target_family", "wasm"), ("target_os", "unknown"))
    assert lacks("threads", wasm.triple, wasm) is not None
    assert lacks("std", wasm.triple, wasm) is None
    atomics = _cfg(
        "wasm32-unknown-unknown", ("target_family", "wasm"), ("target_feature", "atomics")
    )
    assert lacks("threads", atomics.triple, atomics) is None
    assert lacks("threads", "wasm32-wasip1-threads", None) is None
    embedded = _cfg("thumbv7em-none-eabihf", ("target_os", "none"))
    assert lacks("std", embedded.triple, embedded) and lacks("threads", embedded.triple, embedded)
    assert lacks("threads", "x86_64-unknown-linux-gnu", None) is None
    x86_only = TargetScope(triples=("x86_64-*",))
    assert not_applicable(x86_only, "x86_64-pc-windows-msvc", None) is None
    assert not_applicable(x86_only, "aarch64-apple-darwin", None) is not None
    assert not_applicable(x86_only, None, None) is not None  # saved tree text: target unknown
    assert not_applicable(TargetScope(needs=("threads",)), None, None) is None


def test_one_line_per_rule_and_target_for_several_members(
    tmp_path: Path, synthetic_cargo: Path
) -> None:
    root = tmp_path / "workspace"
    root.mkdir()
    (root / "Cargo.toml").write_text('[workspace]\nmembers = ["app", "tool"]\nresolver = "2"\n')
    bad = (RULE_FIXTURES / "fc001" / "bad" / "Cargo.toml").read_text()
    for member in ("app", "tool"):
        (root / member / "src").mkdir(parents=True)
        (root / member / "src" / "main.rs").write_text("fn main() {}\n")
        manifest = bad.replace('name = "fc001-bad"', f'name = "{member}"').replace(
            "[workspace]\n", ""
        )
        (root / member / "Cargo.toml").write_text(manifest)
    options = AuditOptions(targets=("wasm32-unknown-unknown",), confirm_fixes=False)
    result = audit_project(root, options, trust_of(root))
    assert result.findings == []
    [skip] = result.skipped
    assert (skip.code, skip.members, skip.findings) == ("FC001", ("app", "tool"), 2)
