"""`featcheck probe` without compiling anything: verdicts, n, the generated manifest, cargo's
verification on the stub registry, progress lines, error messages, the report and its JSON.

The real build-and-time test is tests/probe/test_probe_slow.py (FEATCHECK_SLOW=1).
"""

from __future__ import annotations

import fnmatch
import io
import json
import os
import re
import shutil
import stat
import sys
import textwrap
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
import tomlkit
from conftest import CRATES, REPO, WORKSPACES, run_featcheck

from featcheck.cargo.tree_text import parse_tree_text
from featcheck.errors import FeatcheckError
from featcheck.probe import build as probe_build
from featcheck.probe.build import (
    CRATE_DIR,
    BuiltProbe,
    ProbeBuilder,
    cache_key,
    cache_root,
    classify_build_failure,
)
from featcheck.probe.command import ProbeOptions, ProbeReport, VariantResult, run_probe
from featcheck.probe.manifest import render_cargo_toml
from featcheck.probe.measure import (
    ROUNDS,
    TIMED_RUNS,
    WARMUP,
    Measurement,
    TorchStats,
    cpu_times,
    measure_torch,
    parse_probe_output,
)
from featcheck.probe.progress import BuildProgress, parse_status
from featcheck.probe.report import render_json, report_json, text_lines
from featcheck.probe.resolve import (
    BackendConfig,
    Pin,
    backend_from_graph,
    release_profile,
    resolve_member,
)
from featcheck.probe.verdict import (
    PARALLEL_THRESHOLD,
    Decision,
    RunStats,
    ThreadEvidence,
    Verdict,
    check_n,
    decide,
)

# --- verdicts on synthetic timings -----------------------------------------------------------


def _runs(
    single_ms: float, all_ms: float, parallelism: float | None, cores: int = 2
) -> tuple[RunStats, RunStats]:
    return (
        RunStats(1, single_ms, single_ms * 1.05, 1.0, "1"),
        RunStats(cores, all_ms, all_ms * 1.05, parallelism),
    )


@pytest.mark.parametrize(
    ("single_ms", "all_ms", "parallelism", "idle", "verdict", "words"),
    [
        # The published case: no rayon, one core whatever RAYON_NUM_THREADS says.
        (21.4, 21.6, 1.01, 0.95, Verdict.SINGLE, "gemm runs on one core"),
        # Unknown idle time (not Linux): the timings alone decide.
        (21.4, 21.6, 1.01, None, Verdict.SINGLE, "one core busy"),
        # rayon on two free cores.
        (21.6, 12.0, 1.85, 0.05, Verdict.MULTI, "several cores"),
        # Exactly at the thresholds counts as multi-threaded.
        (24.0, 20.0, 1.3, 0.0, Verdict.MULTI, "several cores"),
        # One core busy and no faster, but the other core was taken: cannot tell.
        (21.4, 21.5, 1.0, 0.1, Verdict.INCONCLUSIVE, "other cores were busy"),
        # Several cores busy but not faster: contention.
        (21.4, 20.0, 1.6, None, Verdict.INCONCLUSIVE, "not 1.2x faster"),
        # Faster on one core while the other was taken: the busy cores are the reason.
        (30.0, 21.4, 1.02, 0.2, Verdict.INCONCLUSIVE, "other cores were busy"),
        # Faster without more CPU: timing noise.
        (30.0, 21.4, 1.02, 0.9, Verdict.INCONCLUSIVE, "without using more CPU"),
        # Between the two parallelism thresholds.
        (21.4, 21.0, 1.2, 0.9, Verdict.INCONCLUSIVE, "between 1.15"),
        # Just at the single-threaded limits: not single.
        (22.0, 20.0, 1.15, 0.9, Verdict.INCONCLUSIVE, "do not settle it"),
    ],
)
def test_verdict_thresholds(
    single_ms: float,
    all_ms: float,
    parallelism: float,
    idle: float | None,
    verdict: Verdict,
    words: str,
) -> None:
    """Without per-thread evidence (threads not observable) the timings decide alone."""
    single, every = _runs(single_ms, all_ms, parallelism)
    decision = decide(single, every, cores=2, idle_cores=idle)
    assert decision.verdict is verdict, decision.reason
    assert words in decision.reason
    assert "threads were not observed on this platform" in decision.reason
    assert decision.basis == ("none" if verdict is Verdict.INCONCLUSIVE else "timing")
    assert decision.speedup == pytest.approx(single_ms / all_ms)


def _evidence(main_ms: float, *others_ms: float, alive: int = 3) -> ThreadEvidence:
    return ThreadEvidence("linux-schedstat-1", main_ms, tuple(others_ms), alive)


@pytest.mark.parametrize(
    ("single_ms", "all_ms", "parallelism", "other_cores", "evidence", "verdict", "words"),
    [
        # No rayon on a busy machine: the timings alone would say "inconclusive".
        (42.0, 42.5, 1.0, 1.9, _evidence(880.0, alive=1), Verdict.SINGLE, "main thread: 100%"),
        # An idle pool exists but the main thread does the matmul.
        (42.0, 41.0, 1.0, 0.0, _evidence(880.0, 0.4, alive=3), Verdict.SINGLE, "one thread"),
        # rayon on a busy machine: no speedup, but two workers shared the work.
        (
            42.0,
            41.5,
            0.98,
            1.0,
            _evidence(3.0, 450.0, 420.0),
            Verdict.MULTI,
            "2 threads did the work (52%, 48%",
        ),
        # rayon on a quiet machine: the timing agrees.
        (42.0, 22.0, 1.9, 0.0, _evidence(2.0, 420.0, 410.0), Verdict.MULTI, "1.91x"),
        # One pool worker did it all (RAYON_NUM_THREADS=1 in effect): one thread.
        (42.0, 42.0, 1.0, 0.0, _evidence(1.0, 870.0), Verdict.SINGLE, "one pool thread"),
    ],
)
def test_verdict_rests_on_the_threads_whatever_the_load(
    single_ms: float,
    all_ms: float,
    parallelism: float,
    other_cores: float,
    evidence: ThreadEvidence,
    verdict: Verdict,
    words: str,
) -> None:
    single, every = _runs(single_ms, all_ms, parallelism)
    every = replace(every, thread_evidence=evidence)
    decision = decide(single, every, cores=2, idle_cores=0.0, other_cores=other_cores)
    assert decision.verdict is verdict, decision.reason
    assert decision.basis == "threads"
    assert words in decision.reason
    loaded = other_cores >= 0.5
    assert decision.under_load is loaded
    assert ("measured under load" in decision.reason) is loaded


def test_thread_evidence_from_the_probe_and_merged_over_rounds() -> None:
    raw = {"method": "linux-schedstat-1", "main_ms": 2.0, "others_ms": [40.0, 60.0], "alive": 3}
    first = ThreadEvidence.from_probe(raw)
    assert first == _evidence(2.0, 60.0, 40.0)
    assert first.threads_used == 2 and first.shares == pytest.approx((60 / 102, 40 / 102))
    assert first.main_share == pytest.approx(2 / 102)
    both = first.merged(_evidence(1.0, 50.0, alive=4))
    assert both == ThreadEvidence("linux-schedstat-1", 3.0, (110.0, 40.0), 4)
    for bad in (
        None,
        {},
        {**raw, "method": "guess"},
        {**raw, "main_ms": "x"},
        {**raw, "main_ms": -1},
    ):
        assert ThreadEvidence.from_probe(bad) is None
    assert _evidence(10.0).observed is False  # under MIN_OBSERVED_MS: too little to judge


def test_too_little_observed_cpu_time_falls_back_to_the_timings() -> None:
    single, every = _runs(21.4, 21.5, 1.0)
    every = replace(every, thread_evidence=_evidence(10.0))
    decision = decide(single, every, cores=2, idle_cores=0.0)
    assert decision.verdict is Verdict.INCONCLUSIVE
    assert "too little CPU time was observed per thread (10 ms)" in decision.reason


def test_one_core_is_inconclusive_and_says_so() -> None:
    single, every = _runs(21.4, 21.4, 1.0, cores=1)
    decision = decide(single, every, cores=1, idle_cores=0.0)
    assert decision.verdict is Verdict.INCONCLUSIVE
    assert "only one core" in decision.reason


def test_no_cpu_clock_is_inconclusive() -> None:
    single, every = _runs(21.4, 10.0, None)
    decision = decide(single, every, cores=8)
    assert decision.verdict is Verdict.INCONCLUSIVE
    assert "CPU clock" in decision.reason


# --- n ---------------------------------------------------------------------------------------


def test_n_below_the_parallel_threshold_is_inconclusive() -> None:
    assert PARALLEL_THRESHOLD == 192**3
    check_n(1024)
    check_n(1)
    with pytest.raises(ValueError, match="positive"):
        check_n(0)
    single, every = _runs(0.3, 0.3, 1.0)
    every = replace(every, thread_evidence=_evidence(300.0))
    decision = decide(single, every, cores=2, n=191)
    assert decision.verdict is Verdict.INCONCLUSIVE
    assert "below burn-flex's parallel threshold" in decision.reason
    assert decide(single, every, cores=2, n=192).verdict is Verdict.SINGLE


def test_the_probe_crate_keeps_the_published_protocol() -> None:
    source = (CRATE_DIR / "src" / "main.rs").read_text()
    assert "const DEFAULT_RUNS: usize = 20;" in source
    assert "mod threads;" in source and "threads::snapshot()" in source


def test_cli_refuses_a_non_positive_n_before_running_cargo() -> None:
    result = run_featcheck("probe", str(WORKSPACES / "crate-feature"), "--n", "0")
    assert result.returncode == 2
    assert result.stdout == ""
    lines = result.stderr.strip().splitlines()
    assert lines == [lines[0]] and "--n 0: expected a positive integer" in lines[0]


def test_probe_help_says_what_it_compiles_and_runs() -> None:
    result = run_featcheck("probe", "--help")
    assert result.returncode == 0
    text = " ".join(result.stdout.split())
    assert "only part of featcheck that compiles and runs code" in text
    assert "registry crates at the versions your Cargo.lock pins" in text
    assert "featcheck's own small probe crate" in text
    assert "never builds or runs your crate, its build script" in text
    assert "build scripts and proc-macros" in text and "--yes" in text
    assert "784-512-10 MLP train step" in text
    for flag in ("--compare-fix", "--format", "--offline", "--mlp", "--no-mlp", "--n", "--package"):
        assert flag in text


# --- the probe's manifest --------------------------------------------------------------------

CONFIG = BackendConfig(
    member="app",
    target="x86_64-unknown-linux-gnu",
    burn_version="0.22.1",
    pins=(
        Pin("burn-flex", "0.22.1", ("std",)),
        Pin("gemm", "0.19.0", ("f16", "gemm-f16", "std")),
        Pin("gemm-common", "0.19.0", ("f16", "half", "std", "sysctl")),
    ),
    lockfile=b"# lock\n",
    profile={"lto": "fat", "codegen-units": 1, "opt-level": 3},
)


def test_manifest_pins_the_resolved_features_exactly() -> None:
    text = render_cargo_toml(CONFIG, "featcheck-probe-abc", mlp=False)
    document = tomlkit.parse(text).unwrap()
    dependencies = document["dependencies"]
    assert dependencies["burn"] == {
        "version": "=0.22.1",
        "default-features": False,
        "features": ["std", "flex"],
    }
    assert dependencies["burn-flex"] == {
        "version": "=0.22.1",
        "default-features": False,
        "features": ["std"],
    }
    assert dependencies["gemm-common"]["features"] == ["f16", "half", "std", "sysctl"]
    assert set(dependencies) == {"burn", "burn-flex", "gemm", "gemm-common"}
    assert document["target"]["cfg(unix)"]["dependencies"] == {"libc": "0.2"}
    assert document["bin"] == [{"name": "featcheck-probe-abc", "path": "src/main.rs"}]
    assert document["features"] == {"default": [], "mlp": ["burn/autodiff", "burn/optim"]}
    assert document["profile"]["release"] == {
        "debug": False,
        "codegen-units": 1,
        "lto": "fat",
        "opt-level": 3,
    }
    assert document["workspace"] == {}
    assert "/" not in document["package"]["name"]


def test_manifest_with_mlp_turns_the_workload_on() -> None:
    document = tomlkit.parse(render_cargo_toml(CONFIG, "p", mlp=True)).unwrap()
    assert document["features"]["default"] == ["mlp"]


def test_release_profile_keeps_only_speed_settings(tmp_path: Path) -> None:
    manifest = tmp_path / "Cargo.toml"
    manifest.write_text(
        textwrap.dedent(
            """\
            [package]
            name = "x"
            [profile.release]
            opt-level = 3
            lto = "thin"
            codegen-units = 1
            panic = "abort"
            debug = true
            strip = true
            rustflags = ["-Zevil"]
            incremental = true
            overflow-checks = "yes"
            [profile.release.build-override]
            opt-level = 0
            """
        )
    )
    assert release_profile(manifest) == {
        "opt-level": 3,
        "lto": "thin",
        "codegen-units": 1,
        "panic": "abort",
    }
    (tmp_path / "broken.toml").write_text("[profile")
    assert release_profile(tmp_path / "broken.toml") == {}


# --- reading the member's graph --------------------------------------------------------------

TREE = """\
0app v0.1.0 (/w/app) []
1burn v0.22.1 [flex,std]
2burn-core v0.22.1 [flex,std]
3burn-dispatch v0.22.1 [flex,std]
4burn-flex v0.22.1 [rayon,std]
5gemm v0.19.0 [f16,gemm-f16,rayon,std]
6gemm-common v0.19.0 [f16,rayon,std]
6gemm-f32 v0.19.0 [rayon,std]
5rayon v1.12.0 []
1gemm-common v0.18.2 [std]
"""


def test_backend_from_graph_pins_burn_flex_and_the_gemm_crates_below_it() -> None:
    config = backend_from_graph(parse_tree_text(TREE).graph, "app", "x86_64-unknown-linux-gnu")
    assert config.burn_version == "0.22.1"
    assert config.backend == Pin("burn-flex", "0.22.1", ("rayon", "std"))
    # gemm-common 0.18.2 is not below burn-flex: it is not pinned.
    assert [str(p) for p in config.pins[1:]] == [
        "gemm 0.19.0 [f16,gemm-f16,rayon,std]",
        "gemm-common 0.19.0 [f16,rayon,std]",
        "gemm-f32 0.19.0 [rayon,std]",
    ]


def test_backend_from_graph_ignores_a_copy_only_a_proc_macro_uses() -> None:
    # A proc-macro's burn-flex runs in the compiler: the member links the one above.
    host = TREE + "1macros v0.1.0 (proc-macro) (/w/macros) []\n2burn-flex v0.22.1 [std]\n"
    config = backend_from_graph(parse_tree_text(host).graph, "app", "x86_64-unknown-linux-gnu")
    assert config.backend == Pin("burn-flex", "0.22.1", ("rayon", "std"))


def test_backend_from_graph_refuses_what_it_cannot_reproduce() -> None:
    target = "x86_64-unknown-linux-gnu"
    with pytest.raises(FeatcheckError, match="does not build burn-flex"):
        backend_from_graph(parse_tree_text("0app v0.1.0 (/w) []\n").graph, "app", target)
    git = TREE.replace(
        "4burn-flex v0.22.1 [rayon,std]",
        "4burn-flex v0.22.1 (https://github.com/tracel-ai/burn#abc) [rayon,std]",
    )
    with pytest.raises(FeatcheckError, match="registry crates only"):
        backend_from_graph(parse_tree_text(git).graph, "app", target)
    two = TREE + "1burn-flex v0.21.0 [std]\n"
    with pytest.raises(FeatcheckError, match="builds burn-flex 2 times"):
        backend_from_graph(parse_tree_text(two).graph, "app", target)


# --- against real cargo and the stub registry (no compiling) ---------------------------------


def _project(
    tmp_path: Path, name: str, offline_cargo_for: Callable[..., Path] | None = None
) -> Path:
    """A copy of the fixture workspace `name`; cargo pointed at its view of the registry."""
    project = tmp_path / name
    shutil.copytree(WORKSPACES / name, project)
    if offline_cargo_for is not None:
        offline_cargo_for(project)
    return project


def test_resolve_and_verify_on_the_stub_registry(
    tmp_path: Path, offline_cargo_for: Callable[..., Path]
) -> None:
    project = _project(tmp_path, "crate-feature", offline_cargo_for)
    lock_before = (project / "Cargo.lock").read_bytes()
    resolution = resolve_member(project / "Cargo.toml", None, offline=True, timeout=120)
    config = resolution.config
    assert (project / "Cargo.lock").read_bytes() == lock_before
    assert config.member == "app"
    assert config.backend == Pin("burn-flex", "0.22.1", ("std",))
    assert {p.name for p in config.pins} >= {"burn-flex", "gemm", "gemm-common", "gemm-f32"}
    assert config.lockfile == lock_before

    builder = ProbeBuilder(project, offline=True, timeout=120, say=print, root=tmp_path / "cache")
    directory, key = builder.prepare(config, mlp=False)
    assert directory == tmp_path / "cache" / key
    assert (directory / "src" / "main.rs").read_bytes() == (CRATE_DIR / "src/main.rs").read_bytes()
    assert (directory / "Cargo.lock").read_bytes() == lock_before
    builder.verify(directory, config)  # cargo resolves exactly the member's features

    # A feature set the probe cannot reproduce (burn's `std` turns on burn-flex's) is refused.
    impossible = replace(config, pins=(Pin("burn-flex", "0.22.1", ("rayon",)),))
    directory, _ = builder.prepare(impossible, mlp=False)
    with pytest.raises(FeatcheckError, match="cannot reproduce app's build"):
        builder.verify(directory, impossible)


def test_two_versions_of_burn_flex_are_refused(
    tmp_path: Path, offline_cargo_for: Callable[..., Path]
) -> None:
    project = _project(tmp_path, "two-versions", offline_cargo_for)
    with pytest.raises(FeatcheckError, match="builds burn-flex 2 times"):
        resolve_member(project / "Cargo.toml", None, offline=True, timeout=120)


def test_compare_fix_resolves_the_fixed_feature_set(
    tmp_path: Path, offline_cargo_for: Callable[..., Path]
) -> None:
    from featcheck.probe.command import _fix_changes
    from featcheck.probe.resolve import resolve_with_changes

    project = _project(tmp_path, "crate-feature", offline_cargo_for)
    manifest_before = (project / "Cargo.toml").read_text()
    resolution = resolve_member(project / "Cargo.toml", None, offline=True, timeout=120)
    options = ProbeOptions(path=project, offline=True, timeout=120)
    changes, described = _fix_changes(resolution, options, print)
    assert changes and described and "FC001" in described
    fixed = resolve_with_changes(resolution, changes, offline=True, timeout=120)
    assert "rayon" in fixed.backend.features
    assert fixed.label == "with featcheck's fix"
    assert fixed.lockfile is not None
    assert (project / "Cargo.toml").read_text() == manifest_before  # the user's files untouched


def test_missing_c_toolchain_is_one_clear_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    if shutil.which("cargo") is None:
        pytest.skip("cargo is not installed")
    monkeypatch.setenv("CC", "featcheck-no-such-cc")
    with pytest.raises(FeatcheckError, match="no C toolchain: `featcheck-no-such-cc`"):
        ProbeBuilder(tmp_path, offline=True, timeout=10, say=print, root=tmp_path / "c")


def test_missing_cargo_is_one_clear_error(tmp_path: Path) -> None:
    project = _project(tmp_path, "crate-feature")
    python_only = tmp_path / "bin"
    python_only.mkdir()
    result = run_featcheck_with_path("probe", str(project), path=str(python_only))
    assert result.returncode == 2
    assert len(result.stderr.strip().splitlines()) == 1
    assert "cargo" in result.stderr and "not found" in result.stderr


def run_featcheck_with_path(*args: str, path: str) -> Any:
    import subprocess

    return subprocess.run(
        [sys.executable, "-m", "featcheck", *args],
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, "PATH": path, "NO_COLOR": "1", "RUSTUP_HOME": "/nonexistent"},
    )


@pytest.mark.parametrize(
    ("stderr", "offline", "expected"),
    [
        ("error: linker `cc` not found\n  = note: No such file", False, "no C toolchain"),
        (
            "error: failed to download from `https://static.crates.io/crates/x`\n"
            "Caused by:\n  [6] Couldn't resolve host name",
            False,
            "no network?",
        ),
        (
            "error: failed to get `rayon` as a dependency of package `featcheck-probe`\n"
            "Caused by:\n  attempting to make an HTTP request, but --offline was specified",
            True,
            "--offline keeps cargo off the network",
        ),
        (
            "error[E0425]: cannot find function `flex` in this scope\n"
            "error: could not compile `featcheck-probe` (bin)",
            False,
            "does not compile against this burn version",
        ),
        ("error: something else entirely", False, "cargo failed: error: something else"),
    ],
)
def test_build_failures_become_one_line(stderr: str, offline: bool, expected: str) -> None:
    message = classify_build_failure(stderr, offline=offline)
    assert expected in message
    assert "\n" not in message


# --- cache -----------------------------------------------------------------------------------


def test_cache_root_follows_xdg(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    project = CRATES / "pitb-exec-cpu"
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert cache_root(project) == tmp_path / "featcheck" / "probe"
    monkeypatch.setenv("XDG_CACHE_HOME", "relative/ignored")
    assert cache_root(project) == Path.home() / ".cache" / "featcheck" / "probe"


def test_a_cache_inside_the_checkout_is_refused_with_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A planted "probe built before" in a cache that lies in the checkout is never run."""
    project = tmp_path / "project"
    shutil.copytree(CRATES / "pitb-exec-cpu", project)
    (project / ".cache" / "featcheck" / "probe").mkdir(parents=True)
    monkeypatch.setenv("XDG_CACHE_HOME", str(project / ".cache"))
    result = run_featcheck("probe", str(project), "--yes")
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1
    assert "cache directory lies inside the audited checkout" in lines[0]


def test_cache_key_covers_what_shapes_the_binary() -> None:
    toolset = probe_build.Toolset("cargo", {}, "rustc 1.95.0\nhost: x86_64-unknown-linux-gnu\n")
    key = cache_key(CONFIG, toolset, mlp=False)
    assert key == cache_key(CONFIG, toolset, mlp=False)
    assert re.fullmatch(r"[0-9a-f]{16}", key)
    others = [
        cache_key(CONFIG, toolset, mlp=True),
        cache_key(replace(CONFIG, lockfile=b"# other lock\n"), toolset, mlp=False),
        cache_key(
            replace(CONFIG, pins=(Pin("burn-flex", "0.22.1", ("rayon", "std")),)),
            toolset,
            mlp=False,
        ),
        cache_key(replace(CONFIG, profile={}), toolset, mlp=False),
        cache_key(CONFIG, replace(toolset, rustc_version="rustc 1.96.0\n"), mlp=False),
        cache_key(
            CONFIG, replace(toolset, environment={"RUSTFLAGS": "-Ctarget-cpu=native"}), mlp=False
        ),
    ]
    assert key not in others and len(set(others)) == len(others)


def test_the_crate_ships_inside_the_package() -> None:
    """Every file of the probe crate matches pyproject's package-data, so the wheel has it."""
    pyproject = tomlkit.parse((REPO / "pyproject.toml").read_text()).unwrap()
    patterns = pyproject["tool"]["setuptools"]["package-data"]["featcheck.probe"]
    package = CRATE_DIR.parent
    files = [
        p.relative_to(package).as_posix()
        for p in CRATE_DIR.rglob("*")
        if p.is_file() and "target" not in p.relative_to(CRATE_DIR).parts and p.name != "Cargo.lock"
    ]
    assert "crate/Cargo.toml" in files and "crate/src/main.rs" in files
    for name in files:
        assert any(fnmatch.fnmatch(name, pattern) for pattern in patterns), name


# --- progress --------------------------------------------------------------------------------


def test_parse_status_lines() -> None:
    event = parse_status("   Compiling burn-core v0.22.1\n")
    assert event is not None and (event.verb, event.package) == ("Compiling", "burn-core v0.22.1")
    event = parse_status("   Compiling featcheck-probe v0.1.0 (/home/u/.cache/featcheck/probe/k)")
    assert event is not None and event.package == "featcheck-probe v0.1.0"
    event = parse_status("  Downloaded rayon v1.12.0")
    assert event is not None and event.verb == "Downloaded"
    event = parse_status("    Finished `release` profile [optimized] target(s) in 3m 12s")
    assert event is not None and event.package is None
    assert parse_status("warning: unused variable") is None
    assert parse_status("") is None


def test_progress_in_a_log_is_sparse() -> None:
    stream = io.StringIO()
    progress = BuildProgress(100, stream, live=False)
    for index in range(60):
        progress.line(f"   Compiling crate{index} v1.0.0\n")
        progress.line("warning: something\n")
    progress.done()
    lines = stream.getvalue().splitlines()
    assert [line for line in lines if "compiled (" in line] == [
        line for line in lines if re.search(r": (25|50)/100 crates compiled", line)
    ]
    assert len(lines) == 3
    assert "built the probe" in lines[-1] and "60 crates compiled, 40 up to date" in lines[-1]
    assert "\r" not in stream.getvalue()


def test_progress_on_a_terminal_rewrites_one_line() -> None:
    stream = io.StringIO()
    progress = BuildProgress(3, stream, live=True)
    for name in ("a", "bb", "c"):
        progress.line(f"   Compiling {name} v1.0.0\n")
    assert stream.getvalue().count("\r") == 3
    assert "3/3 crates (c v1.0.0)" in stream.getvalue()
    progress.done()
    assert stream.getvalue().endswith("(3 crates compiled)\n")


# --- measuring -------------------------------------------------------------------------------

PROBE_LINE = {
    "probe": 1,
    "n": 1024,
    "warmup": 3,
    "runs": 20,
    "rayon_num_threads": None,
    "available_parallelism": 2,
    "matmul": {
        "min_ms": 21.4,
        "median_ms": 22.0,
        "wall_ms": 440.0,
        "cpu_ms": 444.0,
        "parallelism": 1.01,
    },
    "mlp": None,
}


def test_parse_probe_output() -> None:
    assert parse_probe_output("noise\n" + json.dumps(PROBE_LINE) + "\n") == PROBE_LINE
    with pytest.raises(FeatcheckError, match="unexpected"):
        parse_probe_output("segfault\n")
    with pytest.raises(FeatcheckError, match="unexpected"):
        parse_probe_output('{"other": 1}')


def test_cpu_times_reads_proc_stat() -> None:
    text = (
        "cpu  100 0 100 800 0 0 0 0 0 0\n"
        "cpu0 50 0 50 400 0 0 0 0 0 0\n"
        "cpu1 50 0 50 300 100 0 0 0 0 0\n"
        "intr 1 2 3\n"
    )
    assert cpu_times(text, None) == (800.0, 1000.0)
    assert cpu_times(text, {1}) == (400.0, 500.0)
    assert cpu_times(text, {7}) is None


def test_measure_torch_the_same_way() -> None:
    calls: list[int] = []

    class Tensor:
        def __matmul__(self, other: Tensor) -> Tensor:
            calls.append(1)
            return self

    fake = SimpleNamespace(
        float32="float32",
        __version__="9.9.9",
        rand=lambda *shape, dtype: Tensor(),
        get_num_threads=lambda: 4,
    )
    result = measure_torch(fake, 1024)  # type: ignore[arg-type]
    assert isinstance(result, TorchStats)
    assert (result.version, result.threads) == ("9.9.9", 4)
    assert len(calls) == ROUNDS * (WARMUP + TIMED_RUNS)
    assert 0 <= result.stats.min_ms <= result.stats.median_ms


FAKE_PROBE = """\
#!{python}
import json, os, sys
single = os.environ.get("RAYON_NUM_THREADS") == "1"
multi = {multi}
ms = 21.4 if single or not multi else 11.5
parallelism = 1.0 if single or not multi else 1.9
cpu = ms * 20 * parallelism
threads = {{"method": "linux-schedstat-1", "alive": 3,
           "main_ms": 1.0 if multi else cpu, "others_ms": [cpu / 2, cpu / 2] if multi else []}}
print(json.dumps({{
    "probe": 1, "n": int(sys.argv[2]), "warmup": 3, "runs": 20,
    "rayon_num_threads": 1 if single else None, "available_parallelism": 2,
    "matmul": {{"min_ms": ms, "median_ms": ms * 1.1, "wall_ms": ms * 20,
                "cpu_ms": cpu, "parallelism": parallelism, "threads": threads}},
    "mlp": {{"min_ms": 5.0, "median_ms": 6.0, "wall_ms": 120.0, "cpu_ms": 120.0,
             "parallelism": 1.0, "threads": None}} if "--mlp" in sys.argv else None,
}}))
"""


def _place_in_cache(builder: ProbeBuilder, config: BackendConfig, multi: bool) -> None:
    """Put a script that answers like the probe where the cache keeps `config`'s binary."""
    directory, key = builder.prepare(config, mlp=True)
    path = directory / f"featcheck-probe-{key}"
    path.write_text(FAKE_PROBE.format(python=sys.executable, multi=multi))
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    (directory / "built.json").write_text("{}\n")


@pytest.mark.skipif(os.name != "posix", reason="the fake probe is a script with a #! line")
def test_run_probe_end_to_end_with_cached_probes(
    tmp_path: Path, offline_cargo_for: Callable[..., Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Everything but the compiler: cargo resolves, the fix is resolved on a copy, and the
    cache holds, for both configurations, a script that answers like the probe. A cached build
    compiles nothing, so nothing is asked."""
    from featcheck.probe.command import _fix_changes
    from featcheck.probe.resolve import resolve_with_changes

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    project = _project(tmp_path, "crate-feature", offline_cargo_for)
    resolution = resolve_member(project / "Cargo.toml", None, offline=True, timeout=120)
    options = ProbeOptions(
        path=project,
        offline=True,
        timeout=120,
        compare_fix=True,
        confirm=lambda statement: pytest.fail(f"asked although cached: {statement}"),
    )
    changes, _ = _fix_changes(resolution, options, print)
    fixed = resolve_with_changes(resolution, changes, offline=True, timeout=120)
    builder = ProbeBuilder(project, offline=True, timeout=120, say=print)
    _place_in_cache(builder, resolution.config, multi=False)
    _place_in_cache(builder, fixed, multi=True)
    monkeypatch.setattr("featcheck.probe.command.usable_cores", lambda: 2)
    messages: list[str] = []
    report = run_probe(options, messages.append)
    assert report.current.decision.verdict is Verdict.SINGLE
    assert report.fixed is not None and report.fixed.decision.verdict is Verdict.MULTI
    assert report.mlp is True  # the MLP step is part of the default report
    assert any("nothing is compiled" in m for m in messages)
    assert not any("will compile" in m for m in messages)

    data = report_json(report)
    assert data["verdict"] == "single-threaded" and data["basis"] == "threads"
    assert (data["threads_used"], data["main_thread_share"]) == (1, 1.0)
    assert data["thread_method"] == "linux-schedstat-1"
    assert data["crate"] == "burn-flex" and data["features"] == ["std"]
    assert [run["threads"] for run in data["runs"]] == [1, 2]
    assert data["runs"][0]["mlp"]["min_ms"] == 5.0
    assert data["runs"][0]["mlp"]["threads_used"] is None  # the fake MLP reports no threads
    labels = [v["label"] for v in data["variants"]]
    assert labels[:2] == ["current", "with featcheck's fix"]
    fixed_row = data["variants"][1]
    assert fixed_row["vs_current"] == pytest.approx(21.4 / 11.5, rel=1e-3)
    assert "rayon" in fixed_row["features"]
    # Per round: main 1 ms, each worker 218.5 ms.
    assert (fixed_row["threads_used"], fixed_row["main_thread_share"]) == (2, 0.002)
    assert fixed_row["thread_shares"] == [0.499, 0.499]

    text = "\n".join(line for line, _ in text_lines(report, fancy=False))
    assert "matmul, all cores" in text and "mlp step, all cores" in text
    assert "1: main 100%" in text and "2: 50% 50%, main 0%" in text


def test_the_probe_states_what_it_compiles_and_runs(
    tmp_path: Path, offline_cargo_for: Callable[..., Path]
) -> None:
    """Before a build: the crates, their build scripts and proc-macros at the locked versions,
    from cargo's own metadata of the probe crate; nothing of the member."""
    from featcheck.probe.command import build_statement

    project = _project(tmp_path, "crate-feature", offline_cargo_for)
    config = resolve_member(project / "Cargo.toml", None, offline=True, timeout=120).config
    builder = ProbeBuilder(project, offline=True, timeout=120, say=print, root=tmp_path / "cache")
    plan = builder.plan(config, mlp=True)
    assert plan.cached is False
    assert "burn-flex 0.22.1" in plan.crates and "burn-derive 0.22.1" in plan.proc_macros
    assert set(plan.build_scripts) <= set(plan.crates) and set(plan.proc_macros) <= set(plan.crates)
    assert not any(c.startswith(("app ", "featcheck-probe")) for c in plan.crates)
    statement = build_statement([plan], "app", "the checkout's Cargo.lock")
    assert f"will compile {len(plan.crates)} crates from the registry" in statement
    assert "burn-derive 0.22.1" in statement
    assert "Nothing of app's own code" in statement
    for script in plan.build_scripts or ():
        assert script in statement
    # Every value on the probe's cargo command lines goes through the audit's gate.
    with pytest.raises(FeatcheckError, match=r"target: `@/tmp/evil\.args` is not a target"):
        builder.plan(replace(config, target="@/tmp/evil.args"), mlp=False)
    # Where cargo metadata cannot list build scripts (--offline, a sparse cache), it says so.
    unknown = build_statement([replace(plan, build_scripts=None)], "app", "Cargo.lock")
    assert "the build scripts among them (cargo metadata could not list which here)" in unknown


def test_no_terminal_and_no_yes_builds_nothing(
    tmp_path: Path, offline_cargo_for: Callable[..., Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Where nobody can answer (CI), the statement is printed and the build needs --yes."""
    project = _project(tmp_path, "crate-feature", offline_cargo_for)
    cache = tmp_path / "cache"
    monkeypatch.setenv("XDG_CACHE_HOME", str(cache))
    result = run_featcheck("probe", "--offline", str(project))
    assert result.returncode == 2, result.stderr
    assert result.stdout == ""
    assert "building the probe for burn-flex 0.22.1 [std] will compile" in result.stderr
    assert "proc-macros" in result.stderr
    assert "pass --yes to allow the build" in result.stderr
    assert not (cache / "featcheck" / "probe" / "target").exists()  # cargo built nothing


@pytest.mark.skipif(os.name != "posix", reason="needs a pseudo-terminal")
@pytest.mark.parametrize("answer", ["n", ""])
def test_on_a_terminal_the_probe_asks_and_no_builds_nothing(
    tmp_path: Path, offline_cargo_for: Callable[..., Path], answer: str
) -> None:
    """On a terminal the statement is followed by a question; anything but yes builds nothing."""
    import pty
    import subprocess

    project = _project(tmp_path, "crate-feature", offline_cargo_for)
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
    assert "building the probe for burn-flex 0.22.1 [std] will compile" in text
    assert "Build and run the probe? [y/N]" in text
    assert "nothing was built: the probe's build was not confirmed" in text
    assert not (cache / "featcheck" / "probe" / "target").exists()


def test_a_path_toolchain_hint_names_only_what_the_probe_accepts(
    tmp_path: Path, offline_cargo_for: Callable[..., Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    project = _project(tmp_path, "crate-feature", offline_cargo_for)
    (project / "rust-toolchain.toml").write_text('[toolchain]\npath = "/opt/evil"\n')
    monkeypatch.delenv("RUSTUP_TOOLCHAIN", raising=False)
    result = run_featcheck("probe", "--offline", str(project))
    if "rustup proxy" not in result.stderr and "path =" not in result.stderr:
        pytest.skip("cargo here is not a rustup proxy: toolchain files do not apply")
    assert result.returncode == 2
    assert len(result.stderr.strip().splitlines()) == 1
    assert "RUSTUP_TOOLCHAIN" in result.stderr
    accepted = run_featcheck("probe", "--help").stdout
    for option in re.findall(r"(?<![\w-])--[a-z][a-z-]+", result.stderr):
        assert option in accepted, option


# --- the report ------------------------------------------------------------------------------


def _variant(config: BackendConfig, single_ms: float, all_ms: float, par: float) -> VariantResult:
    single, every = _runs(single_ms, all_ms, par)
    return VariantResult(
        config,
        BuiltProbe(Path("probe"), "0123456789abcdef", cached=False, seconds=301.0),
        Measurement(single, every, 0.9, {"1": None, "all": None}),
        decide(single, every, 2, 0.9),
    )


def _report(compare: bool) -> ProbeReport:
    fixed_config = replace(
        CONFIG, pins=(Pin("burn-flex", "0.22.1", ("rayon", "std")),), label="with featcheck's fix"
    )
    return ProbeReport(
        member="app",
        target="x86_64-unknown-linux-gnu",
        n=1024,
        cores=2,
        mlp=False,
        current=_variant(CONFIG, 21.4, 21.6, 1.01),
        fixed=_variant(fixed_config, 21.6, 11.8, 1.9) if compare else None,
        compare=compare,
        torch=TorchStats("2.5.0", 2, RunStats(2, 0.8, 0.9, 1.9)) if compare else None,
        fix_description='FC001: add "rayon" to the features of burn' if compare else None,
    )


def test_json_schema() -> None:
    data = json.loads(render_json(_report(compare=False)))
    assert data["version"] == 1 and data["tool"]["name"] == "featcheck"
    for key, kind in {
        "verdict": str,
        "reason": str,
        "parallelism": float,
        "speedup": float,
        "cores": int,
        "n": int,
        "runs": list,
        "crate": str,
        "crate_version": str,
        "features": list,
        "member": str,
        "target": str,
        "pins": list,
        "build": dict,
    }.items():
        assert isinstance(data[key], kind), key
    assert data["verdict"] in {v.value for v in Verdict}
    for run in data["runs"]:
        assert set(run) >= {"threads", "min_ms", "median_ms", "parallelism"}
    assert "variants" not in data

    compared = report_json(_report(compare=True))
    rows = compared["variants"]
    assert [row["label"] for row in rows] == ["current", "with featcheck's fix", "PyTorch 2.5.0"]
    assert rows[0]["vs_current"] == 1.0
    assert rows[1]["verdict"] == "multi-threaded" and rows[1]["fix"].startswith("FC001")
    assert rows[2]["min_ms"] == 0.8 and "Accelerate" in rows[2]["note"]


def test_text_report_plain_and_fancy() -> None:
    plain = "\n".join(text for text, _ in text_lines(_report(compare=True), fancy=False))
    assert "single-threaded: " in plain
    assert "RAYON_NUM_THREADS=1" in plain and "all cores (2)" in plain
    assert "#" in plain and "█" not in plain
    assert "featcheck's fix: burn-flex [rayon,std]" in plain
    assert "1.83x faster" in plain
    assert "PyTorch 2.5.0 (2 threads)" in plain
    assert "built in 301 s" in plain
    fancy = "\n".join(text for text, _ in text_lines(_report(compare=False), fancy=True))
    assert "█" in fancy and "--compare-fix" in fancy


def test_decision_is_a_plain_record() -> None:
    decision = Decision(Verdict.MULTI, "why", 1.8, 1.9, None)
    assert decision.verdict.value == "multi-threaded"
