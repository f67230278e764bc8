#!/usr/bin/env python3
"""Benchmark: the whole `featcheck` process as a user waits for it, side by side with cargo.

Every case times the full command line (interpreter start, imports, cargo, resolution, rules,
fixes, rendering) and, interleaved with it in the same loop, the cargo call a user would
compare it with. Medians over `--repeat` paired runs; the ratio is median over median. All runs
use an offline CARGO_HOME over the stub registry in fixtures/registry, so the graphs are the real
ones and the network plays no part.

- flagged crate: `featcheck crates/pitb-exec-cpu` (a finding and its confirmed fix) against
  `cargo tree -e normal -i burn-flex` in that crate; goal <= 1.5x;
- clean crate: `featcheck crates/pitb-exec-cpu-simd` against the same; goal <= 1.3x;
- the same two when cargo's answer differs from the last run's (as after editing a manifest:
  the audit waits for it), and in a project built before (its target/ holds what rustc
  answered cargo, so cargo tree asks rustc nothing; featcheck's cargo keeps those answers in
  the user cache): the goals above;
- --no-exec: `featcheck --no-exec crates/pitb-exec-cpu` (starts no process); goal <= 1.0x;
- 100 members: a generated workspace, 40% of its members flagged, against one
  `cargo metadata`; goal <= 1.3x;
- 500 members: the same with 500 members; goal <= 2x and a peak RSS under 300 MB;
- `--diff` and `--fix` on the flagged crate, beside the same cargo tree: what resolving and
  auditing the fixed copy before writing costs (no goal).

    .venv/bin/python benchmarks/bench_cli.py [--repeat 7] [--sizes 100 500] [--first-runs]

featcheck runs from compiled bytecode, as after `pip install` (which compiles every module):
the package is compiled first, so that an editable install under PYTHONDONTWRITEBYTECODE does
not time the compiler. The user's cache (rustc's answers, --no-exec's distilled registry
manifests) is as one earlier run left it; `--first-runs` adds the single-crate cases with an
empty cache each run. Nothing here asserts; the goals are printed next to the numbers. The
machine it runs on is named in the output: on a shared machine, compare ratios from one run,
not times across runs.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, replace
from pathlib import Path

from stub_registry import REPO, offline_environment, write_workspace

CRATES = REPO / "crates"
BURN = 'version = "=0.22.1"'
FEATCHECK = [sys.executable, "-m", "featcheck"]


def _member(index: int, library: str) -> tuple[str, str]:
    """(Cargo.toml, source file) of member `index`: five patterns, two of them flagged."""
    name = f"m{index:03d}"
    header = f'[package]\nname = "{name}"\nversion = "0.1.0"\nedition = "2024"\n\n[dependencies]\n'
    pattern = index % 5
    if pattern == 0:  # burn's minimal template: flex without rayon (flagged)
        body = f'burn = {{ {BURN}, default-features = false, features = ["std", "flex"] }}\n'
        return header + body + f'{library} = {{ path = "../{library}" }}\n', "main.rs"
    if pattern == 1:  # workspace inheritance of an entry whose defaults are off (flagged)
        return header + 'burn = { workspace = true, features = ["flex"] }\n', "main.rs"
    if pattern == 2:  # burn's defaults plus the CPU backend (clean)
        return header + f'burn = {{ {BURN}, features = ["flex", "autodiff"] }}\n', "main.rs"
    if pattern == 3:  # the same through the passthrough features (clean)
        features = '["std", "flex", "rayon", "simd"]'
        body = f"burn = {{ {BURN}, default-features = false, features = {features} }}\n"
        return header + body, "main.rs"
    # a backend-agnostic library (clean)
    return header + f'burn = {{ {BURN}, default-features = false, features = ["std"] }}\n', "lib.rs"


def generate_workspace(directory: Path, members: int, environment: dict[str, str]) -> Path:
    """A workspace of `members` members, 40% of them flagged, with its lockfile."""
    names = [f"m{i:03d}" for i in range(members)]
    root = (
        '[workspace]\nresolver = "3"\nmembers = ['
        + ", ".join(json.dumps(name) for name in names)
        + "]\n\n[workspace.dependencies]\n"
        + f'burn = {{ {BURN}, default-features = false, features = ["std"] }}\n'
    )
    library = names[4]
    written = {name: _member(index, library) for index, name in enumerate(names)}
    return write_workspace(directory, root, written, environment)


@dataclass(frozen=True)
class Run:
    seconds: float
    returncode: int
    peak_rss_mb: float
    output: str


def run(command: list[str], cwd: Path, environment: dict[str, str]) -> Run:
    """Wall time, exit code and output of one process."""
    start = time.perf_counter()
    process = subprocess.Popen(
        command, cwd=cwd, env=environment, stdout=subprocess.PIPE, stderr=subprocess.STDOUT
    )
    output, _ = process.communicate()
    seconds = time.perf_counter() - start
    return Run(seconds, process.returncode, 0.0, output.decode(errors="replace"))


def run_measuring_rss(command: list[str], cwd: Path, environment: dict[str, str]) -> Run:
    """Like `run`, with the peak RSS of that one process (Linux: KiB; macOS: bytes)."""
    start = time.perf_counter()
    process = subprocess.Popen(
        command, cwd=cwd, env=environment, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    _, status, usage = os.wait4(process.pid, 0)
    seconds = time.perf_counter() - start
    process.returncode = os.waitstatus_to_exitcode(status)
    divisor = 2**20 if sys.platform == "darwin" else 1024
    return Run(seconds, process.returncode, usage.ru_maxrss / divisor, "")


@dataclass(frozen=True)
class Case:
    label: str
    featcheck: list[str]
    cargo: list[str]
    cargo_label: str
    cwd: Path
    goal: float
    expected_exit: int
    empty_cache: bool = False
    """Each featcheck run gets a new, empty user cache directory (a first run)."""
    answer_changed: bool = False
    """Each featcheck run finds no kept cargo answer (as after an edit of a manifest), but
    the rest of the user cache as the last run left it."""
    restore_from: Path | None = None
    """Each featcheck run gets `cwd` copied afresh from here (`--fix` changes it)."""


def measure(
    case: Case, environment: dict[str, str], repeat: int, scratch: Path
) -> dict[str, object]:
    """Paired runs: cargo, then featcheck, `repeat` times after one warm-up of each."""
    runs = iter(range(1_000_000))

    def featcheck_environment() -> dict[str, str]:
        if not case.empty_cache:
            return environment
        return {**environment, "XDG_CACHE_HOME": str(scratch / f"cache-{next(runs)}")}

    def restore() -> None:
        if case.restore_from is not None:
            shutil.rmtree(case.cwd, ignore_errors=True)
            shutil.copytree(case.restore_from, case.cwd, ignore=shutil.ignore_patterns("target"))

    restore()
    warm_cargo = run(case.cargo, case.cwd, environment)
    warm_featcheck = run(case.featcheck, case.cwd, featcheck_environment())
    if warm_cargo.returncode != 0:
        raise SystemExit(f"{case.cargo_label} failed in {case.cwd}:\n{warm_cargo.output}")
    if warm_featcheck.returncode != case.expected_exit:
        raise SystemExit(
            f"{case.label}: featcheck exited {warm_featcheck.returncode}, expected"
            f" {case.expected_exit}:\n{warm_featcheck.output}"
        )
    cargo_times: list[float] = []
    featcheck_times: list[float] = []
    peak = 0.0
    for _ in range(repeat):
        cargo_times.append(run(case.cargo, case.cwd, environment).seconds)
        if case.answer_changed:
            _forget_kept_answers(environment)
        restore()
        measured = run_measuring_rss(case.featcheck, case.cwd, featcheck_environment())
        featcheck_times.append(measured.seconds)
        peak = max(peak, measured.peak_rss_mb)
    cargo_median = statistics.median(cargo_times)
    featcheck_median = statistics.median(featcheck_times)
    return {
        "case": case.label,
        "featcheck": featcheck_median,
        "cargo": cargo_median,
        "cargo_label": case.cargo_label,
        "ratio": featcheck_median / cargo_median,
        "goal": case.goal,
        "rss": peak,
        "exit": warm_featcheck.returncode,
    }


def _forget_kept_answers(environment: dict[str, str]) -> None:
    """Remove the cargo answers featcheck keeps in the user cache (see last_answer.py)."""
    from featcheck.fileio import user_cache_directory

    cache = user_cache_directory(environment)
    if cache is not None:
        shutil.rmtree(cache / "metadata", ignore_errors=True)


def compile_package() -> None:
    """Byte-compile featcheck where it is installed, as pip does when it installs a wheel."""
    import compileall

    import featcheck

    compileall.compile_dir(Path(featcheck.__file__).parent, quiet=1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--sizes", type=int, nargs="*", default=[100, 500])
    parser.add_argument(
        "--first-runs",
        action="store_true",
        help="also time the single-crate cases with an empty user cache each run",
    )
    options = parser.parse_args()
    compile_package()
    tree = ["cargo", "tree", "-e", "normal", "-i", "burn-flex", "-f", "{p} [{f}]"]
    metadata = ["cargo", "metadata", "--format-version", "1"]
    with tempfile.TemporaryDirectory() as scratch:
        environment = offline_environment(Path(scratch) / "cargo-home", unpacked=True)
        flagged = CRATES / "pitb-exec-cpu"
        cases = [
            Case("flagged crate", [*FEATCHECK, "."], tree, "cargo tree", flagged, 1.5, 1),
            Case(
                "clean crate",
                [*FEATCHECK, "."],
                tree,
                "cargo tree",
                CRATES / "pitb-exec-cpu-simd",
                1.3,
                0,
            ),
            Case("--no-exec", [*FEATCHECK, "--no-exec", "."], tree, "cargo tree", flagged, 1.0, 1),
        ]
        # The same when cargo's answer differs from the last run's (a manifest was edited).
        cases += [
            replace(case, label=f"{case.label}, edited", answer_changed=True) for case in cases[:2]
        ]
        # The same in a project built before: cargo tree keeps rustc's answers in its target/
        # (the warm-up run writes them), as featcheck's cargo keeps them in the user cache.
        built = Path(scratch) / "built"
        for label, crate, goal, expected in (
            ("flagged crate, built", flagged, 1.5, 1),
            ("clean crate, built", CRATES / "pitb-exec-cpu-simd", 1.3, 0),
        ):
            copy = built / crate.name
            shutil.copytree(crate, copy, ignore=shutil.ignore_patterns("target"))
            (copy / "target").mkdir()
            cases.append(Case(label, [*FEATCHECK, "."], tree, "cargo tree", copy, goal, expected))
        # What --diff and --fix cost beside the audit (no goal): the fixed copy is resolved
        # and audited again before anything is written; --fix gets a fresh crate each run.
        fixing = Path(scratch) / "fixing" / flagged.name
        cases += [
            Case("--diff", [*FEATCHECK, "--diff", "."], tree, "cargo tree", flagged, 0.0, 1),
            Case(
                "--fix",
                [*FEATCHECK, "--fix", "."],
                tree,
                "cargo tree",
                fixing,
                0.0,
                0,
                restore_from=flagged,
            ),
        ]
        # The same with nothing in the user's cache: rustc asked, registry manifests parsed.
        cases += [
            replace(case, label=f"{case.label}, 1st run", empty_cache=True)
            for case in cases
            if options.first_runs and case.label in ("flagged crate", "clean crate", "--no-exec")
        ]
        for size in options.sizes:
            workspace = generate_workspace(Path(scratch) / f"ws{size}", size, environment)
            goal = 1.3 if size <= 100 else 2.0
            cases.append(
                Case(
                    f"{size} members",
                    [*FEATCHECK, "."],
                    metadata,
                    "cargo metadata",
                    workspace,
                    goal,
                    1,
                )
            )
        rows = [measure(case, environment, options.repeat, Path(scratch)) for case in cases]
    print(
        f"machine: {platform.machine()}, {os.cpu_count()} cores, {platform.system()};"
        f" python {platform.python_version()}; medians of {options.repeat} paired runs\n"
    )
    header = f"{'case':<24}{'featcheck':>11}{'compared with':>26}{'ratio':>8}{'goal':>8}{'RSS':>9}"
    print(header)
    print("-" * len(header))
    for row in rows:
        versus = f"{row['cargo_label']} {row['cargo']:.3f}s"
        goal = float(row["goal"])  # type: ignore[arg-type]
        verdict = "" if not goal else "ok" if float(row["ratio"]) <= goal else "MISSED"  # type: ignore[arg-type]
        shown = "<=" + format(goal, ".1f") + "x" if goal else "-"
        print(
            f"{row['case']:<24}{row['featcheck']:>10.3f}s{versus:>26}{row['ratio']:>7.2f}x"
            f"{shown:>8}{row['rss']:>6.0f} MB  {verdict}"
        )


if __name__ == "__main__":
    main()
