"""`featcheck probe PATH`: every finding of the member that has a program, in one run and one
report (probe/member.py), and its exit codes. Nothing is compiled: the cache holds, where each
build's binary would be, a script that answers like it (a probe "built before")."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable
from pathlib import Path

import pytest
from cli_in_process import run_in_process
from probe_support import copy_project, place_probes

pytestmark = [
    pytest.mark.skipif(os.name != "posix", reason="the fake probes are scripts with a #! line"),
    pytest.mark.usefixtures("remembered_cargo"),  # the audits: one real cargo per question
]


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The probe's cache for this test (featcheck's and the test's own)."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    return tmp_path / "cache"


def test_a_member_without_burn_flex_gets_its_findings_timed(
    tmp_path: Path, offline_cargo_for: Callable[..., Path], cache: Path
) -> None:
    """FC011 (regex without `perf`) was refused by the default probe: "does not build
    burn-flex"; only --rule FC011 timed it. The default probe takes the member's findings."""
    project = copy_project(tmp_path, "regex-without-perf", offline_cargo_for)
    assert place_probes(project, timings={"FC011": (3.0, 1.0)}) == ["FC011"]
    done = run_in_process("probe", "--offline", str(project))
    assert done.returncode == 1, done.stderr
    assert done.stdout.startswith("featcheck probe: app (")
    assert "FC011 regex 1.13.2 without `perf`: 3.00x slower here (search: " in done.stdout
    assert "  fixed:    regex 1.13.2 [" in done.stdout and "perf" in done.stdout
    assert "using the probe built before for regex 1.13.2 [" in done.stderr

    data = json.loads(run_in_process("probe", "--offline", str(project), "--format", "json").stdout)
    assert (data["kind"], data["member"], data["costs_here"]) == ("rules", "app", True)
    assert [p["code"] for p in data["probes"]] == ["FC011"]


def test_a_burn_member_gets_its_matmul_and_its_other_findings_timed_in_one_report(
    tmp_path: Path, offline_cargo_for: Callable[..., Path], cache: Path
) -> None:
    """burn-flex without rayon (FC001: the matmul) next to rustfft without `avx` (FC014: its
    rule program): both measured, one report, one exit code."""
    project = copy_project(tmp_path, "crate-feature")
    # The view holds rustfft (the registry's only 6.x) and all it can select beside the
    # lockfile's packages: cargo resolves the edited member as over the whole registry.
    offline_cargo_for(project, adding=("rustfft-6.4.1",))
    manifest = project / "Cargo.toml"
    manifest.write_text(
        manifest.read_text().replace(
            "[dependencies]\n",
            '[dependencies]\nrustfft = { version = "6", default-features = false, '
            'features = ["sse"] }\n',
        )
    )
    assert place_probes(project, matmul=False, timings={"FC014": (1.0, 1.02)}) == ["FC014"]

    done = run_in_process("probe", "--offline", str(project))
    assert done.returncode == 1, done.stderr  # the matmul runs on one core
    text = done.stdout
    assert text.startswith("featcheck probe: app (")
    assert "single-threaded: " in text
    assert "FC014 rustfft 6.4.1 without `avx`: no measurable cost here (0.98x)" in text
    assert text.index("single-threaded: ") < text.index("FC014 rustfft")
    assert text.count("app (") == 1  # one header

    data = json.loads(run_in_process("probe", "--offline", str(project), "--format", "json").stdout)
    assert (data["version"], data["kind"], data["verdict"]) == (2, "matmul", "single-threaded")
    assert data["rules"]["kind"] == "rules"
    assert [p["code"] for p in data["rules"]["probes"]] == ["FC014"]
    assert data["rules"]["costs_here"] is False


def test_a_member_with_nothing_to_time_is_one_line_and_exit_2(
    tmp_path: Path, offline_cargo_for: Callable[..., Path], cache: Path
) -> None:
    project = copy_project(tmp_path, "regex-with-perf", offline_cargo_for)
    done = run_in_process("probe", "--offline", "--yes", str(project))
    assert done.returncode == 2
    last = done.stderr.strip().splitlines()[-1]
    assert re.match(
        r"featcheck: error: nothing to probe: app does not build burn-flex .* and has no "
        r"finding whose crate the probe can time \(.*regex.*\)$",
        last,
    ), last
    assert not (cache / "featcheck" / "probe" / "target").exists()


def test_an_inconclusive_verdict_has_its_own_exit_code(
    tmp_path: Path, offline_cargo_for: Callable[..., Path], cache: Path
) -> None:
    """Below n = 192 burn-flex never splits a matmul: inconclusive, which exited 0 like
    multi-threaded; now 3, as the help says."""
    project = copy_project(tmp_path, "crate-feature", offline_cargo_for)
    place_probes(project, matmul=True)
    done = run_in_process("probe", "--offline", str(project), "--n", "64")
    assert done.returncode == 3, done.stderr
    assert "\ninconclusive: " in done.stdout
    settled = run_in_process("probe", "--offline", str(project))
    assert settled.returncode == 0, settled.stderr
    assert "\nmulti-threaded: " in settled.stdout
    help_text = " ".join(run_in_process("probe", "--help").stdout.split())
    assert "inconclusive (exit 3)" in help_text


def test_a_rule_probe_whose_builds_disagree_is_inconclusive_too(
    tmp_path: Path, offline_cargo_for: Callable[..., Path], cache: Path
) -> None:
    """Two builds that computed different results give no ratio: that is no measured
    "no cost" (exit 0) either."""
    project = copy_project(tmp_path, "regex-without-perf", offline_cargo_for)
    place_probes(project, timings={"FC011": (3.0, -1.0)})
    done = run_in_process("probe", "--offline", str(project), "--rule", "FC011")
    assert done.returncode == 3, done.stderr
    assert "the two builds computed different results; no ratio is given" in done.stdout
