#!/usr/bin/env python3
"""Benchmark: featcheck's own feature resolution against one `cargo tree` per member.

Generates workspaces of 10, 100 and 500 members over the offline stub registry in
fixtures/registry, using burn 0.22.1 the ways projects do (the template with default features off
plus flex, burn's defaults, `burn.workspace = true` inheritance, and library members that the
binaries depend on), generates their lockfiles offline, and reports, as medians over a few runs:

* one `cargo metadata --format-version 1` call;
* featcheck's resolver over that metadata for every member on the host target (Python time:
  JSON parsing, indexing, resolving and building the graphs), and the total with the metadata
  call, which is what an audit would spend;
* the per-member `cargo tree -e normal -p MEMBER --target HOST` approach (with many members a
  sample of calls is timed and multiplied out; marked `~`);
* peak memory: Python allocations during parse + resolve (tracemalloc) and the process's peak
  RSS (getrusage), which includes the interpreter and the JSON text.

Plus the single-crate case (crates/pitb-exec-cpu): metadata + resolver against one cargo tree.
Nothing here asserts; the goals are printed next to the numbers.

    .venv/bin/python benchmarks/bench_resolve.py [--sizes 10 100 500] [--repeat 3]
"""

from __future__ import annotations

import argparse
import gc
import json
import statistics
import subprocess
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any

from stub_registry import REPO, offline_environment, write_workspace

from featcheck.resolution import resolve_builds, resolver_version
from featcheck.semantics.cfg import TargetCfg
from featcheck.workspace.cargo_metadata import workspace_from_metadata

SINGLE_CRATE = REPO / "crates" / "pitb-exec-cpu"
BURN = 'version = "=0.22.1"'
TREE_SAMPLE = 8
"""How many `cargo tree` calls to time for a workspace before multiplying out."""


def write_cargo_home(home: Path) -> dict[str, str]:
    """An offline CARGO_HOME over the stub registry; returns the environment to run cargo in."""
    return offline_environment(home)


def _member_manifest(index: int, library: str | None) -> tuple[str, str]:
    """(Cargo.toml, source file name) of member `index`: the four patterns in turn."""
    name = f"m{index:03d}"
    pattern = index % 4
    header = f'[package]\nname = "{name}"\nversion = "0.1.0"\nedition = "2024"\n\n[dependencies]\n'
    if pattern == 0:  # the template: default features off, flex without rayon, and a library
        body = f'burn = {{ {BURN}, default-features = false, features = ["std", "flex"] }}\n'
        if library is not None:
            body += f'{library} = {{ path = "../{library}" }}\n'
        return header + body, "main.rs"
    if pattern == 1:  # burn's defaults plus the CPU backend
        return header + f'burn = {{ {BURN}, features = ["flex", "autodiff"] }}\n', "main.rs"
    if pattern == 2:  # workspace inheritance
        return header + 'burn = { workspace = true, features = ["flex"] }\n', "main.rs"
    # a library: backend-agnostic, std only
    return header + f'burn = {{ {BURN}, default-features = false, features = ["std"] }}\n', "lib.rs"


def generate_workspace(directory: Path, members: int, env: dict[str, str]) -> Path:
    """Write a workspace of `members` members and generate its lockfile offline."""
    names = [f"m{i:03d}" for i in range(members)]
    library = names[3] if members > 3 else None
    root = (
        '[workspace]\nresolver = "3"\nmembers = ['
        + ", ".join(json.dumps(n) for n in names)
        + "]\n\n[workspace.dependencies]\n"
        + f'burn = {{ {BURN}, default-features = false, features = ["std"] }}\n'
    )
    written = {
        name: _member_manifest(index, library if index != 3 else None)
        for index, name in enumerate(names)
    }
    return write_workspace(directory, root, written, env)


def _cargo(args: list[str], workspace: Path, env: dict[str, str]) -> str:
    done = subprocess.run(
        ["cargo", *args], cwd=workspace, env=env, capture_output=True, text=True, check=False
    )
    if done.returncode != 0:
        raise SystemExit(f"cargo {' '.join(args)} failed in {workspace}:\n{done.stderr}")
    return done.stdout


def _timed(action: Callable[[], Any], repeat: int) -> tuple[float, Any]:
    """Median wall time of `action` over `repeat` runs, and its last result."""
    times: list[float] = []
    result: Any = None
    for _ in range(repeat):
        gc.collect()
        start = time.perf_counter()
        result = action()
        times.append(time.perf_counter() - start)
    return statistics.median(times), result


def host_cfg(env: dict[str, str]) -> TargetCfg:
    """The host's cfg, as the audit gets it (`rustc --print cfg`)."""
    version = subprocess.run(["rustc", "-vV"], env=env, capture_output=True, text=True).stdout
    triple = next(
        line.split(":", 1)[1].strip()
        for line in version.splitlines()
        if ":" in line and line.startswith("host")
    )
    cfg = subprocess.run(
        ["rustc", "--print", "cfg", "--target", triple], env=env, capture_output=True, text=True
    )
    return TargetCfg.parse(triple, cfg.stdout)


def _read_toml(path: Path) -> dict[str, Any]:
    if sys.version_info >= (3, 11):
        import tomllib

        return tomllib.loads(path.read_text())
    import tomlkit

    data: dict[str, Any] = tomlkit.parse(path.read_text()).unwrap()
    return data


def resolve_all(text: str, workspace: Path, host: TargetCfg) -> int:
    """What an audit does after `cargo metadata`: parse it, pick the resolver, resolve all."""
    data = json.loads(text)
    root_manifest = workspace / "Cargo.toml"
    root = [p for p in data["packages"] if Path(p["manifest_path"]) == root_manifest]
    resolver = resolver_version(_read_toml(root_manifest), root[0]["edition"] if root else None)
    metadata = workspace_from_metadata(data)
    graphs = resolve_builds(metadata, data["workspace_members"], [host], resolver, host=host)
    return len(graphs)


def _child_rss(text_file: Path, workspace: Path) -> float:
    """Peak RSS (MB) of a fresh interpreter that parses and resolves the metadata."""
    code = (
        "import resource, sys; from pathlib import Path; sys.path.insert(0, sys.argv[3]);"
        "import bench_resolve as b; env = b.write_cargo_home(Path(sys.argv[4]));"
        "b.resolve_all(Path(sys.argv[1]).read_text(), Path(sys.argv[2]), b.host_cfg(env));"
        "print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)"
    )
    with tempfile.TemporaryDirectory() as home:
        args = [str(text_file), str(workspace), str(Path(__file__).parent), home]
        done = subprocess.run(
            [sys.executable, "-c", code, *args], capture_output=True, text=True, check=True
        )
    # ru_maxrss is in KiB on Linux, in bytes on macOS.
    return int(done.stdout.strip()) / (2**20 if sys.platform == "darwin" else 1024)


def _time_tree(member: str, workspace: Path, env: dict[str, str], host: TargetCfg) -> float:
    """Wall time of the `cargo tree` call featcheck makes today for one member."""
    args = ["tree", "-e", "normal", "-p", member, "--target", host.triple]
    args += ["-f", "{p} [{f}]", "--prefix", "depth", "--charset", "ascii"]
    start = time.perf_counter()
    _cargo(args, workspace, env)
    return time.perf_counter() - start


def measure(
    label: str, workspace: Path, env: dict[str, str], host: TargetCfg, repeat: int
) -> dict[str, Any]:
    """Every number of one table row."""
    metadata_args = ["metadata", "--format-version", "1"]
    _cargo(metadata_args, workspace, env)  # warm-up: file system caches, rustc info
    t_metadata, text = _timed(lambda: _cargo(metadata_args, workspace, env), repeat)
    t_python, count = _timed(lambda: resolve_all(text, workspace, host), repeat)
    t_total, _ = _timed(
        lambda: resolve_all(_cargo(metadata_args, workspace, env), workspace, host), repeat
    )
    members = json.loads(text)["workspace_members"]
    sample = members if len(members) <= TREE_SAMPLE else members[:: len(members) // TREE_SAMPLE]
    tree_times = [_time_tree(member, workspace, env, host) for member in sample[:TREE_SAMPLE]]
    t_tree = statistics.mean(tree_times) * len(members)
    tracemalloc.start()
    resolve_all(text, workspace, host)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    with tempfile.TemporaryDirectory() as scratch:
        text_file = Path(scratch) / "metadata.json"
        text_file.write_text(text)
        rss = _child_rss(text_file, workspace)
    return {
        "case": label,
        "members": count,
        "packages": len(json.loads(text)["packages"]),
        "metadata": t_metadata,
        "python": t_python,
        "total": t_total,
        "tree": t_tree,
        "tree_estimated": len(tree_times) < len(members),
        "tree_one": statistics.median(tree_times),
        "peak_mb": peak / 2**20,
        "rss_mb": rss,
    }


def print_table(rows: list[dict[str, Any]]) -> None:
    header = (
        f"{'case':<14}{'members':>8}{'pkgs':>6}{'metadata':>10}{'resolver':>10}{'meta+res':>10}"
        f"{'ratio':>7}{'trees':>10}{'speedup':>9}{'py peak':>9}{'RSS':>8}"
    )
    print(header)
    print("-" * len(header))
    for row in rows:
        trees = ("~" if row["tree_estimated"] else "") + f"{row['tree']:.2f}s"
        print(
            f"{row['case']:<14}{row['members']:>8}{row['packages']:>6}"
            f"{row['metadata']:>9.3f}s{row['python']:>9.3f}s{row['total']:>9.3f}s"
            f"{row['total'] / row['metadata']:>6.2f}x{trees:>10}"
            f"{row['tree'] / row['total']:>8.1f}x{row['peak_mb']:>7.1f}MB{row['rss_mb']:>6.0f}MB"
        )
    print(
        "\nratio = (metadata + resolver) / metadata; trees = one `cargo tree` per member"
        " (~: sampled and multiplied out); speedup = trees / (metadata + resolver);"
        " py peak = tracemalloc peak of parse + resolve; RSS = peak RSS of a fresh interpreter"
        " doing parse + resolve."
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10, 100, 500])
    parser.add_argument("--repeat", type=int, default=5)
    options = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        env = write_cargo_home(Path(scratch) / "cargo-home")
        host = host_cfg(env)
        rows = [measure("single crate", SINGLE_CRATE, env, host, options.repeat)]
        for size in options.sizes:
            workspace = generate_workspace(Path(scratch) / f"ws{size}", size, env)
            rows.append(measure(f"{size} members", workspace, env, host, options.repeat))
    print_table(rows)
    single = rows[0]
    print("\nGoals:")
    print(
        f"  single crate: metadata + resolver {single['total']:.3f}s vs one cargo tree"
        f" {single['tree_one']:.3f}s = {single['total'] / single['tree_one']:.2f}x (goal <= 2x)"
    )
    for row in rows[1:]:
        goal = {100: 1.5, 500: 2.0}.get(row["members"])
        if goal is not None:
            print(
                f"  {row['members']} members: {row['total'] / row['metadata']:.2f}x one cargo"
                f" metadata (goal <= {goal}x); RSS {row['rss_mb']:.0f} MB"
                + (" (goal < 300 MB)" if row["members"] == 500 else "")
            )


if __name__ == "__main__":
    main()
