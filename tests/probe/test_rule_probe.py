"""`featcheck probe --rule FC012` end to end, offline: memchr 2.8.3 (real sources, in
fixtures/probe/registry) built as the crate declares it and as featcheck's fix builds it, both
timed side by side; a second run reuses both builds."""

from __future__ import annotations

import json
import platform
import shutil
import subprocess
from pathlib import Path

import pytest
from cli_in_process import run_in_process
from support import FIXTURES, cargo_environment

pytestmark = [
    pytest.mark.cargo,
    pytest.mark.skipif(
        platform.machine().lower() not in ("x86_64", "amd64"),
        reason="FC012 is about x86_64 (run-time AVX2 detection)",
    ),
]

PROBE_FIXTURES = FIXTURES / "probe"


def _home(base: Path) -> Path:
    home = base / "cargo-home"
    home.mkdir()
    (home / "config.toml").write_text(
        "[source.crates-io]\n"
        'replace-with = "probe-fixtures"\n'
        "[source.probe-fixtures]\n"
        f"directory = {json.dumps((PROBE_FIXTURES / 'registry').as_posix())}\n"
        "[net]\n"
        "offline = true\n"
    )
    return home


def _probe(
    monkeypatch: pytest.MonkeyPatch, crate: Path, home: Path, cache: Path, *arguments: str
) -> subprocess.CompletedProcess[str]:
    _environment(monkeypatch, home, cache)
    return run_in_process("probe", str(crate), *arguments)


def _environment(monkeypatch: pytest.MonkeyPatch, home: Path, cache: Path) -> None:
    """cargo pointed at `home`, featcheck's cache at `cache`, no colours."""
    for name, value in {**cargo_environment(home), "XDG_CACHE_HOME": str(cache)}.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("NO_COLOR", "1")


def test_the_memchr_rule_is_timed_as_built_and_as_fixed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    crate = tmp_path / "memchr-trimmed"
    shutil.copytree(PROBE_FIXTURES / "memchr-trimmed", crate)
    home, cache = _home(tmp_path), tmp_path / "cache"

    # Without a terminal and without --yes nothing is compiled: the statement, then exit 2.
    refused = _probe(monkeypatch, crate, home, cache, "--rule", "FC012")
    assert refused.returncode == 2
    assert (
        "building 2 probes, for\n    memchr 2.8.3 []\n    memchr 2.8.3 [alloc,std]\n"
        "  compiles 1 crate from the registry"
    ) in refused.stderr
    assert "pass --yes" in refused.stderr

    done = _probe(monkeypatch, crate, home, cache, "--rule", "fc012", "--yes", "--format", "json")
    assert done.returncode in (0, 1), done.stderr
    report = json.loads(done.stdout)
    assert (report["version"], report["kind"], report["member"]) == (1, "rules", "memchr-trimmed")
    [probe] = report["probes"]
    assert (probe["code"], probe["crate"], probe["crate_version"]) == ("FC012", "memchr", "2.8.3")
    assert probe["current_features"] == []
    assert probe["fixed_features"] == ["alloc", "std"]
    assert probe["fix"] == 'featcheck\'s fix: add "std" to the features of memchr'
    assert probe["same_results"] is True
    assert [w["name"] for w in probe["workloads"]] == ["memchr", "memmem"]
    for workload in probe["workloads"]:
        assert workload["current_ms"] > 0 and workload["fixed_ms"] > 0
        assert workload["ratio"] == pytest.approx(
            workload["current_ms"] / workload["fixed_ms"], rel=1e-2
        )
    assert probe["ratio"] == max(w["ratio"] for w in probe["workloads"])
    # Exit 1 exactly when the build costs speed here (AVX2 machines: about 2x).
    assert done.returncode == (1 if report["costs_here"] else 0)
    assert report["costs_here"] == (probe["ratio"] >= 1.10)

    again = _probe(monkeypatch, crate, home, cache, "--rule", "FC012")  # cached: no --yes needed
    assert again.returncode in (0, 1), again.stderr
    assert "using the probe built before for memchr 2.8.3 []" in again.stderr
    assert "FC012 memchr 2.8.3 without `std`: " in again.stdout
    assert "  current:  memchr 2.8.3 []\n" in again.stdout
    assert "  fixed:    memchr 2.8.3 [alloc,std]  (featcheck's fix:" in again.stdout


def _audit(
    monkeypatch: pytest.MonkeyPatch, crate: Path, home: Path, cache: Path, *arguments: str
) -> subprocess.CompletedProcess[str]:
    _environment(monkeypatch, home, cache)
    return run_in_process(str(crate), "--measured", *arguments)


def test_measured_findings_carry_what_the_probe_measured_here(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    crate = tmp_path / "memchr-trimmed"
    shutil.copytree(PROBE_FIXTURES / "memchr-trimmed", crate)
    home, cache = _home(tmp_path), tmp_path / "cache"
    quoted = _audit(monkeypatch, crate, home, cache)
    assert quoted.returncode == 1
    assert (
        "  = cost: not measured here: the rule quotes featcheck's build machine (`featcheck rule "
        "FC012`); `featcheck probe --rule FC012` measures it here" in quoted.stdout
    )
    probed = _probe(monkeypatch, crate, home, cache, "--rule", "FC012", "--yes", "--format", "json")
    [probe] = json.loads(probed.stdout)["probes"]
    ratio = probe["ratio"]
    slowest = next(w["name"] for w in probe["workloads"] if w["ratio"] == ratio)
    done = _audit(monkeypatch, crate, home, cache, "--format", "json")
    [finding] = json.loads(done.stdout)["findings"]
    cost = finding["cost"]
    assert (cost["here"], cost["ratio"], cost["workload"]) == (True, ratio, slowest)
    assert cost["command"] == "featcheck probe --rule FC012"
    text = _audit(monkeypatch, crate, home, cache).stdout
    assert f"  = cost: {ratio:.2f}x slower measured here ({slowest}, " in text
    # A cache inside the checkout is the checkout's: nothing is read from it.
    planted = _audit(monkeypatch, crate, home, crate / "cache", "--format", "json")
    report = json.loads(planted.stdout)
    assert report["findings"][0]["cost"] is None
    assert any(note.startswith("--measured: no measurement is read") for note in report["notes"])


# A trailing comma names no rule, as it names none for --select.
@pytest.mark.parametrize("rules", ["FC011", "FC011,"])
def test_a_rule_without_a_finding_is_one_line_and_exit_2(
    rules: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    crate = tmp_path / "memchr-trimmed"
    shutil.copytree(PROBE_FIXTURES / "memchr-trimmed", crate)
    done = _probe(monkeypatch, crate, _home(tmp_path), tmp_path / "cache", "--rule", rules, "--yes")
    assert done.returncode == 2
    assert (
        done.stderr.strip()
        .splitlines()[-1]
        .startswith("featcheck: error: nothing to probe: memchr-trimmed has no finding of FC011 on")
    )
    assert "Traceback" not in done.stderr
