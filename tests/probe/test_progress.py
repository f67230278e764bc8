"""cargo's progress while the probe compiles (probe/compile.py)."""

from __future__ import annotations

import io
import re

from featcheck.probe.compile import BuildProgress


def test_the_progress_names_the_crate_cargo_compiles_and_nothing_else() -> None:
    stream = io.StringIO()
    progress = BuildProgress(4, stream, live=True)
    progress.line("   Compiling burn-core v0.22.1\n")
    assert stream.getvalue().endswith("1/4 crates (burn-core v0.22.1)")
    progress.line("   Compiling featcheck-probe v0.1.0 (/home/u/.cache/featcheck/probe/k)")
    assert stream.getvalue().endswith("2/4 crates (featcheck-probe v0.1.0)")
    shown = stream.getvalue()
    progress.line("  Downloaded rayon v1.12.0")
    progress.line("    Finished `release` profile [optimized] target(s) in 3m 12s")
    progress.line("warning: unused variable")
    progress.line("")
    assert stream.getvalue() == shown and progress.compiled == 2


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


class _Clock:
    """A clock the test moves."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_a_wait_for_another_build_is_said_once_and_not_counted_as_build_time() -> None:
    """Another probe held the cache's lock for 16 minutes: cargo said so dozens of times, and
    the wait was reported as this build's time."""
    stream, clock = io.StringIO(), _Clock()
    progress = BuildProgress(3, stream, live=False, clock=clock)
    for second in range(0, 960, 30):
        clock.now = float(second)
        progress.line("    Blocking waiting for file lock on package cache\n")
        progress.line("    Blocking waiting for file lock on build directory\n")
    clock.now = 960.0
    for name in ("a", "b", "c"):
        progress.line(f"   Compiling {name} v1.0.0\n")
    clock.now = 1272.0
    progress.done()
    lines = stream.getvalue().splitlines()
    assert lines == [
        "featcheck: waiting for another build in the probe's cache (cargo: Blocking waiting "
        "for file lock on package cache); the wait is not counted as build time",
        "featcheck: building the probe: 1/3 crates compiled (0 s, now a v1.0.0)",
        "featcheck: waited 960 s for another build",
        "featcheck: built the probe in 312 s (3 crates compiled)",
    ]
    assert progress.waited == 960.0
