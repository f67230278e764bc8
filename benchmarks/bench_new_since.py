#!/usr/bin/env python3
"""Benchmark: what `--new-since REF` costs beside one audit, both as a user waits for them.

On a git repository of two commits (the second edits one member), each case times
`featcheck . --new-since HEAD~1` and, interleaved with it in the same loop, `featcheck .`:
medians over `--repeat` paired runs, the ratio median over median. The workspaces are
bench_cli.py's: the flagged example crate, and a generated workspace of 100 members (40%
flagged) over the released burn 0.22.1 closure, offline. "cold" rows forget the cargo answers
featcheck keeps between runs before each command (as after an edit, or in a fresh CI job).
Goal: <= 2x one audit.

    .venv/bin/python benchmarks/bench_new_since.py [--repeat 7] [--sizes 100]
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from bench_cli import (
    CRATES,
    FEATCHECK,
    _forget_kept_answers,
    compile_package,
    generate_workspace,
    run,
)
from stub_registry import offline_environment

GOAL = 2.0


def _git(repository: Path, *arguments: str) -> None:
    subprocess.run(
        [
            "git",
            "-C",
            str(repository),
            "-c",
            "user.name=b",
            "-c",
            "user.email=b@example.com",
            *arguments,
        ],
        check=True,
        capture_output=True,
    )


def two_commits(workspace: Path) -> Path:
    """`workspace` as a repository whose second commit moves one member's lines."""
    _git(workspace, "init", "-q")
    _git(workspace, "add", "-A")
    _git(workspace, "commit", "-q", "-m", "first")
    manifest = next(sorted(workspace.glob("*/Cargo.toml")).__iter__(), workspace / "Cargo.toml")
    text = manifest.read_text()
    manifest.write_text(text.replace("[dependencies]\n", "[dependencies]\n# moved\n", 1))
    _git(workspace, "commit", "-q", "-am", "second")
    return workspace


def measure(
    label: str, cwd: Path, environment: dict[str, str], repeat: int, *, cold: bool = False
) -> tuple[str, float, float]:
    single = [*FEATCHECK, "."]
    compared = [*FEATCHECK, ".", "--new-since", "HEAD~1"]
    for command in (single, compared):  # warm-up, and a check that both audit
        done = run(command, cwd, environment)
        if done.returncode not in (0, 1):
            raise SystemExit(
                f"{label}: {' '.join(command)} exited {done.returncode}:\n{done.output}"
            )
    singles: list[float] = []
    comparisons: list[float] = []
    for _ in range(repeat):
        if cold:
            _forget_kept_answers(environment)
        singles.append(run(single, cwd, environment).seconds)
        if cold:
            _forget_kept_answers(environment)
        comparisons.append(run(compared, cwd, environment).seconds)
    return label, statistics.median(singles), statistics.median(comparisons)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--sizes", type=int, nargs="*", default=[100])
    options = parser.parse_args()
    compile_package()
    rows = []
    with tempfile.TemporaryDirectory() as scratch:
        environment = offline_environment(Path(scratch) / "cargo-home", unpacked=True)
        crate = Path(scratch) / "crate"
        shutil.copytree(CRATES / "pitb-exec-cpu", crate, ignore=shutil.ignore_patterns("target"))
        crate = two_commits(crate)
        rows.append(measure("flagged crate", crate, environment, options.repeat))
        rows.append(measure("the same, cold", crate, environment, options.repeat, cold=True))
        for size in options.sizes:
            workspace = generate_workspace(Path(scratch) / f"ws{size}", size, environment)
            workspace = two_commits(workspace)
            rows.append(measure(f"{size} members", workspace, environment, options.repeat))
            rows.append(
                measure("the same, cold", workspace, environment, options.repeat, cold=True)
            )
    print(
        f"machine: {platform.machine()}, {os.cpu_count()} cores, {platform.system()};"
        f" python {platform.python_version()}; medians of {options.repeat} paired runs\n"
    )
    header = f"{'case':<16}{'one audit':>11}{'--new-since':>13}{'ratio':>8}{'goal':>8}"
    print(header)
    print("-" * len(header))
    for label, single, compared in rows:
        ratio = compared / single
        mark = "" if ratio <= GOAL else "  MISSED"
        print(f"{label:<16}{single:>10.3f}s{compared:>12.3f}s{ratio:>7.2f}x{GOAL:>7.1f}x{mark}")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
