#!/usr/bin/env python3
"""Benchmark: the whole `featcheck` process as a user waits for it, beside the cargo call a user
compares it with.

Every case times the full command line (interpreter start, imports, cargo, resolution, rules,
fixes, rendering) and, paired with it in the same loop (A B A B), the cargo call a user would
compare it with: `cargo metadata` for a workspace, `cargo tree -e normal -i burn-flex` for a
single crate. Medians over `--repeat` pairs; the ratio is median over median. Each case runs in
three situations, as users meet them:

- after an edit: a manifest's `description` is changed before each run, so cargo's answer differs
  from the last one (the pre-commit hook, a new commit in CI); the user cache keeps the rest
  (rustc's answers). Goal <= 1.3x (500 members: <= 2x, peak RSS under 300 MB);
- first run: an empty user cache each run (XDG_CACHE_HOME on an empty folder: a fresh CI
  runner). Goal <= 1.5x;
- unchanged: run again on what the last run saw (cargo's kept answer stands, and cargo does
  not run: docs/speed.md). Goal <= 1.2x.

Cases: generated workspaces of 100 and 500 members (40% flagged) and `crates/pitb-exec-cpu`
(a finding and its fix) on the stub registry of fixtures/registry (offline CARGO_HOME), the same
crate on the real registry (the user's own cargo home: its crates must be downloaded),
`--no-exec` on the real registry (goal <= 1.0x, its first run <= 1.5x), and burn_p2p's 28
members and lockfile (benchmarks/burn_p2p.py) on the real registry. `--no-exec` on the stub
registry reads the unpacked stub crates. The cargo call of each pair runs after the same edit.
The 100 members also run with `--format json` after an edit ("100 members, json"), the report CI
and editors read, beside the text report.

`--workspace PATH` (repeatable) adds a case per real checkout (uv, gpc_rs, jsonschema, oxc,
nushell...) on the real registry, labelled by its folder's name, beside `cargo metadata`. It runs
on a copy (without `target/` and `.git`), so the checkout is never changed; after an edit means
after a member's `version` changed (given as `PATH::crates/x/Cargo.toml`, else the first member
with a literal version, else the root's `[workspace.package]`), as a release does. The checkout's
`rust-toolchain.toml` is obeyed by both commands, as for its user (RUSTUP_TOOLCHAIN overrides).
Crates the first cargo call downloads fall in the warm-up run, outside the timing.

`--probe` adds one run of `featcheck probe crates/pitb-exec-cpu --yes` on an empty user cache
(so the probe's target directory starts empty) on the real registry: its wall and CPU seconds
(the process and all it waited for: cargo, rustc) beside the goal of <= 120 s to the first
verdict on a quiet 2-core machine; there is no cargo counterpart. `--probe --only probe` runs it
alone.

    .venv/bin/python benchmarks/bench_cli.py [--repeat 5] [--sizes 100 500]
        [--situations edit first unchanged] [--only 100 --only real] [--no-real]
        [--workspace ~/src/uv --workspace ~/src/oxc::crates/oxc/Cargo.toml] [--probe]

featcheck runs from compiled bytecode, as after `pip install`. Nothing here asserts; the goals
are printed next to the numbers with MET or MISSED, with the load average before and after: on a
shared machine, compare ratios from one run, not times across runs. The CPU column is the same
ratio in CPU seconds (user and system, featcheck's with the cargo and rustc it waited for, over
cargo's): it moves less with other processes' load, and tells a change in work from a busier
minute. Peak RSS is the featcheck process's own (ru_maxrss of the child, which covers the cargo
it waited for). The floor column is the ratio featcheck cannot go below: the `cargo metadata` it
waits for, timed in the same loop, over the command it is compared with (1.00x where that is
`cargo metadata` itself; none for `--no-exec`, which starts no cargo). Beside `cargo tree`, a
goal at or below the floor cannot be met by any work of featcheck's own. The Python column is the
same for the least a Python program can do there: start, run `cargo metadata`, parse its answer
with `json`, exit (`PYTHON_FLOOR`, through the `cargo` on PATH as the other columns); what
featcheck takes beyond it is its own imports and work. In a first run the floors' cargo gets an
empty target directory, as featcheck's cargo does (its target directory lies in the empty user
cache): cargo then asks rustc again before it answers. Where the row is compared with `cargo
metadata` itself, that floor is 1.00x by definition and not run.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

from burn_p2p import materialise
from real_workspaces import edit_version, workspace_copy
from stub_registry import REPO, offline_environment, write_workspace

BURN = 'version = "=0.22.1"'
FEATCHECK = [sys.executable, "-m", "featcheck"]
TREE = ["cargo", "tree", "-e", "normal", "-i", "burn-flex", "-f", "{p} [{f}]"]
METADATA = ["cargo", "metadata", "--format-version", "1"]
PYTHON_FLOOR = [
    sys.executable,
    "-c",
    f"import json, subprocess; json.loads(subprocess.run({METADATA!r}, stdout=-1).stdout)",
]
"""The least a Python program that waits for `cargo metadata` and reads its answer takes."""
SITUATIONS = ("edit", "first", "unchanged")
GOALS = {"edit": 1.3, "first": 1.5, "unchanged": 1.2}
EDITS = itertools.count()


def _member(index: int, library: str) -> tuple[str, str]:
    """(Cargo.toml, source file) of member `index`: five patterns, two of them flagged."""
    name = f"m{index:03d}"
    header = f'[package]\nname = "{name}"\nversion = "0.1.0"\nedition = "2024"\n'
    header += 'description = "member"\n\n[dependencies]\n'
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
    cpu_seconds: float
    """User and system time of the process and of the children it waited for (cargo, rustc)."""


def run(command: list[str], cwd: Path, environment: dict[str, str]) -> Run:
    """Wall time, exit code, output and peak RSS of one process (Linux: KiB; macOS: bytes)."""
    start = time.perf_counter()
    process = subprocess.Popen(
        command, cwd=cwd, env=environment, stdout=subprocess.PIPE, stderr=subprocess.STDOUT
    )
    output = process.stdout.read() if process.stdout is not None else b""
    _, status, usage = os.wait4(process.pid, 0)
    seconds = time.perf_counter() - start
    process.returncode = os.waitstatus_to_exitcode(status)
    divisor = 2**20 if sys.platform == "darwin" else 1024
    return Run(
        seconds,
        process.returncode,
        usage.ru_maxrss / divisor,
        output.decode(errors="replace"),
        usage.ru_utime + usage.ru_stime,
    )


def edit_description(manifest: Path) -> None:
    """Change the package's description: `cargo metadata` prints it, the lockfile does not."""
    text = manifest.read_text()
    manifest.write_text(
        re.sub(
            r'^description = ".*"$',
            f'description = "edit {next(EDITS)}"',
            text,
            count=1,
            flags=re.M,
        )
    )


@dataclass(frozen=True)
class Case:
    label: str
    featcheck: list[str]
    cargo: list[str]
    cwd: Path
    edited: Path
    """The manifest that each run of the "edit" situation changes."""
    environment: dict[str, str]
    goals: dict[str, float]
    edit: Callable[[Path], None] = edit_description
    situations: tuple[str, ...] = SITUATIONS


def measure(case: Case, situation: str, repeat: int, scratch: Path) -> dict[str, object]:
    """Paired runs, cargo then featcheck, `repeat` times after one warm-up of each."""
    caches = itertools.count()

    def featcheck_run() -> Run:
        environment = case.environment
        if situation == "edit":
            case.edit(case.edited)
        if situation == "first":
            cache = scratch / f"cache-{case.label}-{next(caches)}"
            environment = {**environment, "XDG_CACHE_HOME": str(cache)}
        return run(case.featcheck, case.cwd, environment)

    def cargo_run() -> Run:
        if situation == "edit":
            case.edit(case.edited)
        return run(case.cargo, case.cwd, case.environment)

    def floor_run(command: list[str]) -> Run | None:
        # The `cargo metadata` featcheck itself waits for (`command` is that, or a Python
        # program waiting for it): the least ratio it can reach (`--no-exec` waits for no cargo).
        if "--no-exec" in case.featcheck or (command is METADATA and case.cargo is METADATA):
            return None
        environment = case.environment
        if situation == "edit":
            case.edit(case.edited)
        if situation == "first":  # as featcheck's cargo on an empty user cache
            target = scratch / f"target-{case.label}-{next(caches)}"
            environment = {**environment, "CARGO_TARGET_DIR": str(target)}
        return run(command, case.cwd, environment)

    warm_cargo, warm_featcheck = cargo_run(), featcheck_run()
    if warm_cargo.returncode != 0:
        raise SystemExit(f"{case.cargo} failed in {case.cwd}:\n{warm_cargo.output}")
    if warm_featcheck.returncode not in (0, 1):
        raise SystemExit(
            f"{case.label}: featcheck exited {warm_featcheck.returncode}:\n{warm_featcheck.output}"
        )
    pairs = [
        (cargo_run(), featcheck_run(), floor_run(METADATA), floor_run(PYTHON_FLOOR))
        for _ in range(repeat)
    ]
    cargo_median = statistics.median(pair[0].seconds for pair in pairs)
    featcheck_median = statistics.median(pair[1].seconds for pair in pairs)

    def floor(position: int) -> float | None:
        seconds = [timed.seconds for pair in pairs if (timed := pair[position]) is not None]
        return statistics.median(seconds) / cargo_median if seconds else None

    metadata_floor = 1.0 if case.cargo is METADATA else floor(2)
    return {
        "case": case.label,
        "situation": situation,
        "featcheck": featcheck_median,
        "cargo": cargo_median,
        "cargo_label": case.cargo[1],
        "ratio": featcheck_median / cargo_median,
        "floor": metadata_floor,
        "python_floor": floor(3),
        # CPU seconds (cargo's included) move less with the load of a shared machine than wall
        # seconds do: beside the ratio, they tell a change in work from a busier minute.
        "cpu_ratio": statistics.median(pair[1].cpu_seconds for pair in pairs)
        / statistics.median(pair[0].cpu_seconds for pair in pairs),
        "goal": case.goals.get(situation, GOALS[situation]),
        "rss": max(pair[1].peak_rss_mb for pair in pairs),
        "exit": warm_featcheck.returncode,
    }


def compile_package() -> None:
    """Byte-compile featcheck where it is installed, as pip does when it installs a wheel."""
    import compileall

    import featcheck

    compileall.compile_dir(Path(featcheck.__file__).parent, quiet=1)


def copy_crate(crate: Path, destination: Path) -> Path:
    shutil.copytree(crate, destination, ignore=shutil.ignore_patterns("target"))
    return destination


def real_environment(cache: Path) -> dict[str, str]:
    """The user's own cargo home and registry, as a user runs featcheck; the user cache of
    its own (on a shared machine, others' audits would evict what featcheck kept)."""
    environment = {key: value for key, value in os.environ.items() if not key.startswith("GITHUB_")}
    return {
        **environment,
        "CARGO_TERM_COLOR": "never",
        "NO_COLOR": "1",
        "XDG_CACHE_HOME": str(cache),
    }


def stub_cases(sizes: list[int], scratch: Path) -> list[Case]:
    stub = offline_environment(scratch / "cargo-home", unpacked=True)
    # The user cache of the stub cases lies in the scratch folder, apart from the user's own.
    stub = {**stub, "XDG_CACHE_HOME": str(scratch / "user-cache")}
    cases: list[Case] = []
    for size in sizes:
        workspace = generate_workspace(scratch / f"ws{size}", size, stub)
        manifest = workspace / "m000" / "Cargo.toml"
        audit = Case(f"{size} members", [*FEATCHECK, "."], METADATA, workspace, manifest, stub, {})
        if size > 100:
            situations = ("edit",) if size >= 500 else SITUATIONS
            cases.append(replace(audit, goals={"edit": 2.0}, situations=situations))
            continue
        # What CI and editors read: the JSON report of the same audit, after an edit.
        json_report = [*FEATCHECK, "--format", "json", "."]
        label = f"{size} members, json"
        cases += [audit, replace(audit, label=label, featcheck=json_report, situations=("edit",))]
    crate = REPO / "crates" / "pitb-exec-cpu"
    stub_crate = copy_crate(crate, scratch / "stub" / crate.name)
    cases.append(
        Case(
            "crate, stub", [*FEATCHECK, "."], TREE, stub_crate, stub_crate / "Cargo.toml", stub, {}
        )
    )
    return cases


def real_cases(workspaces: list[str], scratch: Path) -> list[Case]:
    real = real_environment(scratch / "real-cache")
    crate = REPO / "crates" / "pitb-exec-cpu"
    real_crate = copy_crate(crate, scratch / "real" / crate.name)
    manifest = real_crate / "Cargo.toml"
    cases = [Case("crate, real", [*FEATCHECK, "."], TREE, real_crate, manifest, real, {})]
    no_exec = [*FEATCHECK, "--no-exec", "."]
    goals = {"edit": 1.0, "unchanged": 1.0}
    cases.append(Case("--no-exec, real", no_exec, TREE, real_crate, manifest, real, goals))
    # A real large workspace: burn_p2p's 28 members and lockfile, on the real registry.
    p2p = materialise(scratch / "burn_p2p")
    core = p2p / "crates" / "burn_p2p_core" / "Cargo.toml"
    cases.append(Case("burn_p2p, real", [*FEATCHECK, "."], METADATA, p2p, core, real, {}))
    # The user's own checkouts, copied; a member's version is what a release edits.
    for spec in workspaces:
        copy, member = workspace_copy(spec, scratch, real)
        label = f"{copy.name}, real"
        cases.append(
            Case(label, [*FEATCHECK, "."], METADATA, copy, member, real, {}, edit=edit_version)
        )
    return cases


def build_cases(options: argparse.Namespace, scratch: Path) -> list[Case]:
    cases = stub_cases(options.sizes, scratch)
    if not options.no_real:
        cases += real_cases(options.workspace or [], scratch)
    return [
        case for case in cases if not options.only or any(o in case.label for o in options.only)
    ]


def probe_row(scratch: Path) -> dict[str, object]:
    """The probe's first verdict: one run on an empty user cache, so its target directory
    (under $XDG_CACHE_HOME/featcheck/probe/) starts empty and every crate is compiled."""
    crate = REPO / "crates" / "pitb-exec-cpu"
    root = scratch / "probe"
    copy_crate(crate, root / "crates" / crate.name)
    environment = real_environment(scratch / "probe-cache")
    command = [*FEATCHECK, "probe", f"crates/{crate.name}", "--yes"]
    result = run(command, root, environment)
    if result.returncode not in (0, 1):
        raise SystemExit(f"probe: featcheck exited {result.returncode}:\n{result.output}")
    return {"wall": result.seconds, "cpu": result.cpu_seconds, "exit": result.returncode}


def load() -> str:
    return " ".join(f"{value:.1f}" for value in os.getloadavg())


PROBE_GOAL = 120.0
"""Seconds to the probe's first verdict on a quiet 2-core machine."""


def print_rows(rows: list[dict[str, object]], probe: dict[str, object] | None) -> None:
    header = (
        f"{'case':<18}{'situation':<11}{'featcheck':>10}{'compared with':>24}{'ratio':>8}"
        f"{'floor':>7}{'Python':>8}{'goal':>8}{'CPU':>7}{'RSS':>8}"
    )
    print(header)
    print("-" * (len(header) + 8))
    for row in rows:
        ratio, goal = float(row["ratio"]), float(row["goal"])  # type: ignore[arg-type]
        missed = ratio > goal or (row["case"] == "500 members" and float(row["rss"]) >= 300)  # type: ignore[arg-type]
        print(
            f"{row['case']:<18}{row['situation']:<11}{row['featcheck']:>9.3f}s"
            f"{row['cargo_label'] + ' ' + format(row['cargo'], '.3f') + 's':>24}{ratio:>7.2f}x"
            f"{'' if row['floor'] is None else format(row['floor'], '.2f') + 'x':>7}"
            f"{'' if row['python_floor'] is None else format(row['python_floor'], '.2f') + 'x':>8}"
            f"{'<=' + format(goal, '.1f') + 'x':>8}"
            f"{row['cpu_ratio']:>6.2f}x{row['rss']:>5.0f} MB  "
            f"{'MISSED' if missed else 'MET'}"
        )
    if probe is not None:
        wall, cpu = float(probe["wall"]), float(probe["cpu"])  # type: ignore[arg-type]
        print(
            f"{'probe, real':<18}{'first':<11}{wall:>9.1f}s{'CPU ' + format(cpu, '.1f') + 's':>24}"
            f"{'':>23}{'<=' + format(PROBE_GOAL, '.0f') + 's':>8}{'':>15}  "
            f"{'MISSED' if wall > PROBE_GOAL else 'MET'}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--sizes", type=int, nargs="*", default=[100, 500])
    parser.add_argument("--situations", nargs="*", choices=SITUATIONS, default=list(SITUATIONS))
    parser.add_argument("--only", action="append", help="cases whose label contains this")
    parser.add_argument("--no-real", action="store_true", help="skip the real registry's cases")
    parser.add_argument(
        "--workspace",
        action="append",
        metavar="PATH[::MEMBER/Cargo.toml]",
        help="a checkout to time on the real registry (a copy; its member's version is edited)",
    )
    parser.add_argument(
        "--probe", action="store_true", help="time `featcheck probe`'s first verdict, once"
    )
    options = parser.parse_args()
    compile_package()
    before = load()
    with tempfile.TemporaryDirectory() as directory:
        scratch = Path(directory)
        cases = build_cases(options, scratch)
        rows = [
            measure(case, situation, options.repeat, scratch)
            for case in cases
            for situation in options.situations
            if situation in case.situations
        ]
        probe = probe_row(scratch) if options.probe else None
    print(
        f"machine: {platform.machine()}, {os.cpu_count()} cores, {platform.system()};"
        f" python {platform.python_version()}; medians of {options.repeat} paired runs;"
        f" load average {before} before, {load()} after\n"
    )
    for case in cases:
        if case.edit is edit_version:
            edited = case.edited.relative_to(case.cwd)
            print(f"{case.label}: each edit changes the version in {edited}\n")
    print_rows(rows, probe)


if __name__ == "__main__":
    main()
