"""`featcheck probe` end to end without compiling: the flow, its questions and its errors
(probe/member.py, probe/command.py).
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from cli_in_process import run_in_process
from probe_support import copy_project, matmul_configs, place_in_cache, probe_builder
from support import WORKSPACES, trust_of

from featcheck.pipeline import audit_project
from featcheck.probe.command import ProbeOptions
from featcheck.probe.member import run_member_probe
from featcheck.probe.report import text_lines
from featcheck.probe.schema import report_json
from featcheck.probe.verdict import Verdict


def test_cli_refuses_a_non_positive_n_before_running_cargo() -> None:
    result = run_in_process("probe", str(WORKSPACES / "crate-feature"), "--n", "0")
    assert result.returncode == 2
    assert result.stdout == ""
    lines = result.stderr.strip().splitlines()
    assert lines == [lines[0]] and "--n 0: expected a positive integer" in lines[0]


def test_probe_help_says_what_it_compiles_and_runs() -> None:
    result = run_in_process("probe", "--help")
    assert result.returncode == 0
    text = " ".join(result.stdout.split())
    assert "only part of featcheck that compiles and runs code" in text
    assert "registry crates at the versions your Cargo.lock pins" in text
    assert "featcheck's own small probe crate" in text
    assert "never builds or runs your crate, its build script" in text
    assert "build scripts and proc-macros" in text and "--yes" in text
    assert "burn-flex, burn-backend and gemm with exactly the features" in text
    assert "MLP" not in text and "--mlp" not in text
    for flag in ("--compare-fix", "--format", "--offline", "--n", "--package"):
        assert flag in text


@pytest.mark.skipif(os.name != "posix", reason="the fake probe is a script with a #! line")
def test_run_probe_end_to_end_with_cached_probes(
    tmp_path: Path, offline_cargo_for: Callable[..., Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Everything but the compiler: cargo resolves, the fix is resolved on a copy, and the
    cache holds, for both configurations, a script that answers like the probe. A cached build
    compiles nothing, so nothing is asked."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    project = copy_project(tmp_path, "crate-feature", offline_cargo_for)
    options = ProbeOptions(
        path=project,
        offline=True,
        timeout=120,
        compare_fix=True,
        confirm=lambda statement: pytest.fail(f"asked although cached: {statement}"),
    )
    current, fixed = matmul_configs(project)
    builder = probe_builder(project)
    place_in_cache(builder, current, multi=False)
    place_in_cache(builder, fixed, multi=True)
    monkeypatch.setattr("featcheck.probe.command.usable_cores", lambda: 2)
    messages: list[str] = []
    member_report = run_member_probe(
        options, messages.append, trust_of(options.path), audit_project
    )
    assert member_report.rules is None  # crate-feature's one finding is burn-flex's
    report = member_report.matmul
    assert report is not None
    assert report.current.decision.verdict is Verdict.SINGLE
    assert report.fixed is not None and report.fixed.decision.verdict is Verdict.MULTI
    assert any("nothing is compiled" in m for m in messages)
    assert not any("will compile" in m for m in messages)

    data = report_json(report)
    assert data["verdict"] == "single-threaded" and data["basis"] == "threads"
    assert (data["threads_used"], data["main_thread_share"]) == (1, 1.0)
    assert data["thread_method"] == "linux-schedstat-1"
    assert data["crate"] == "burn-flex" and data["features"] == ["std"]
    assert [run["threads"] for run in data["runs"]] == [1, 2]
    assert "mlp" not in data["runs"][0]
    labels = [v["label"] for v in data["variants"]]
    assert labels[:2] == ["current", "with featcheck's fix"]
    fixed_row = data["variants"][1]
    assert fixed_row["vs_current"] == pytest.approx(21.4 / 11.5, rel=1e-3)
    assert "rayon" in fixed_row["features"]
    # Per round: main 1 ms, each worker 218.5 ms.
    assert (fixed_row["threads_used"], fixed_row["main_thread_share"]) == (2, 0.002)
    assert fixed_row["thread_shares"] == [0.499, 0.499]

    text = "\n".join(line for line, _ in text_lines(report, fancy=False))
    assert "matmul, all cores" in text and "mlp" not in text
    assert "1: main 100%" in text and "2: 50% 50%, main 0%" in text


def test_no_terminal_and_no_yes_builds_nothing(
    tmp_path: Path, offline_cargo_for: Callable[..., Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Where nobody can answer (CI), the statement is printed and the build needs --yes."""
    project = copy_project(tmp_path, "crate-feature", offline_cargo_for)
    cache = tmp_path / "cache"
    monkeypatch.setenv("XDG_CACHE_HOME", str(cache))
    result = run_in_process("probe", "--offline", str(project))
    assert result.returncode == 2, result.stderr
    assert result.stdout == ""
    assert "pass --yes to allow the build" in result.stderr
    lines = result.stderr.splitlines()
    start = lines.index("featcheck: building the probe for burn-flex 0.22.1 [std]")
    statement = lines[start : next(i for i, x in enumerate(lines) if "error:" in x)]
    # burn-flex alone: 124 crates, where burn's facade with its nn and optim compiled 142.
    assert statement[1] == "  compiles 124 crates from the registry, at the versions"
    # How long, said to be an estimate, from what it rests on.
    assert re.fullmatch(r"  first build: about \d+ (minutes|s) here, an estimate", statement[4])
    assert re.fullmatch(
        r"  \(125 crates, \d+ cores?, (load [\d.]+ from other work|no load average)\);",
        statement[5],
    )
    # Build scripts (the stubs have none) and proc-macros, one per line.
    assert "  build scripts cargo runs while compiling: none" in statement
    assert "    serde_derive 1.0.229" in statement and "    burn-derive 0.22.1" not in statement
    assert max(len(line) for line in statement) <= 72, statement
    assert not (cache / "featcheck" / "probe" / "target").exists()  # cargo built nothing


@pytest.mark.skipif(os.name != "posix", reason="needs a pseudo-terminal")
@pytest.mark.parametrize("answer", ["n", ""])
def test_on_a_terminal_the_probe_asks_and_no_builds_nothing(
    tmp_path: Path, offline_cargo_for: Callable[..., Path], answer: str
) -> None:
    """On a terminal the statement is followed by a question; anything but yes builds nothing."""
    import pty
    import subprocess

    project = copy_project(tmp_path, "crate-feature", offline_cargo_for)
    cache = tmp_path / "cache"
    leader, follower = pty.openpty()
    process = subprocess.Popen(
        [sys.executable, "-m", "featcheck", "probe", "--offline", str(project)],
        stdin=follower,
        stdout=follower,
        stderr=follower,
        env={**os.environ, "XDG_CACHE_HOME": str(cache), "NO_COLOR": "1", "COLUMNS": "200"},
    )
    os.close(follower)
    drawn = b""
    while b"[y/N]" not in drawn:
        chunk = os.read(leader, 65536)
        assert chunk, drawn.decode(errors="replace")
        drawn += chunk
    os.write(leader, answer.encode() + b"\r")
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # EIO: the child closed the terminal
            break
        if not chunk:
            break
        drawn += chunk
    assert process.wait(timeout=120) == 2
    os.close(leader)
    text = drawn.decode(errors="replace")
    assert "building the probe for burn-flex 0.22.1 [std]\r\n  compiles 124" in text
    assert "  first build: about " in text
    assert "Build and run the probe? [y/N]" in text
    assert "nothing was built: the probe's build was not confirmed" in text
    assert not (cache / "featcheck" / "probe" / "target").exists()


def test_a_path_toolchain_hint_names_only_what_the_probe_accepts(
    tmp_path: Path, offline_cargo_for: Callable[..., Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    project = copy_project(tmp_path, "crate-feature", offline_cargo_for)
    (project / "rust-toolchain.toml").write_text('[toolchain]\npath = "/opt/evil"\n')
    monkeypatch.delenv("RUSTUP_TOOLCHAIN", raising=False)
    result = run_in_process("probe", "--offline", str(project))
    if "rustup proxy" not in result.stderr and "path =" not in result.stderr:
        pytest.skip("cargo here is not a rustup proxy: toolchain files do not apply")
    assert result.returncode == 2
    assert len(result.stderr.strip().splitlines()) == 1
    assert "RUSTUP_TOOLCHAIN" in result.stderr
    accepted = run_in_process("probe", "--help").stdout
    for option in re.findall(r"(?<![\w-])--[a-z][a-z-]+", result.stderr):
        assert option in accepted, option
