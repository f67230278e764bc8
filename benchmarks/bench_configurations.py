#!/usr/bin/env python3
"""Benchmark: `--each-feature` on a workspace whose crate features select the backend, against
one `cargo metadata` call.

fixtures/workspaces/backend-features is a crate with three backend-selecting features
(`backend-flex`, `backend-ndarray`, `backend-wgpu`, the last one default) over burn 0.22.1:
`--each-feature` audits five configurations (the defaults, none, each backend alone). Timed side
by side in one run, interleaved, medians over `--repeat` rounds, on the offline stub registry:

* `cargo metadata --format-version 1 --all-features` alone (what the audit asks of cargo once);
* the whole `featcheck . --each-feature --format json` process, as a user runs it (includes the
  Python start, rustc's host and cfg queries, and confirming each fix);
* the same audit in this process without fix confirmation (`confirm_fixes=False`), which shows
  what the configurations themselves cost;
* the whole `featcheck .` process for the default configuration only, for comparison;
* featcheck's resolver alone over that one metadata output (already parsed): every
  configuration of `--each-feature` on the host, against the default configuration alone —
  what the configurations add to an audit.

Nothing here asserts; the goal (whole process within 2x of one `cargo metadata`) is printed next
to the numbers.

    .venv/bin/python benchmarks/bench_configurations.py [--repeat 7]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from bench_cli import compile_package
from stub_registry import REPO, offline_environment

from featcheck.boundary import TrustContext
from featcheck.featureset import AuditOptions, FeatureSelection, each_feature
from featcheck.pipeline import audit_project
from featcheck.resolution import resolve_configurations
from featcheck.semantics.cfg import TargetCfg
from featcheck.workspace.cargo_metadata import workspace_from_metadata

WORKSPACE = REPO / "fixtures" / "workspaces" / "backend-features"


def timed(action: Callable[[], object]) -> float:
    start = time.perf_counter()
    action()
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    compile_package()  # featcheck as pip installs it: from compiled bytecode
    with tempfile.TemporaryDirectory(prefix="featcheck-bench-") as scratch:
        project = Path(scratch) / "backend-features"
        shutil.copytree(WORKSPACE, project)
        env = offline_environment(Path(scratch) / "cargo-home")
        os.environ.update(env)  # the in-process audit runs cargo too

        def run(argv: list[str]) -> subprocess.CompletedProcess[str]:
            return subprocess.run(
                argv, cwd=project, env=env, capture_output=True, text=True, check=False
            )

        metadata = ["cargo", "metadata", "--format-version", "1", "--all-features"]
        featcheck = [sys.executable, "-m", "featcheck", ".", "--offline", "--format", "json"]
        report = json.loads(run([*featcheck, "--each-feature"]).stdout)
        configurations = {
            tuple(sorted(json.dumps(c, sort_keys=True) for c in f["configurations"]))
            for f in report["findings"]
        }
        print(
            f"workspace: {WORKSPACE.relative_to(REPO)}; --each-feature: "
            f"{len(report['findings'])} findings from {len(configurations)} configuration sets"
        )
        options = AuditOptions(offline=True, each_feature=True, confirm_fixes=False)
        raw = json.loads(run(metadata).stdout)
        (app,) = [p for p in raw["packages"] if p["id"] in raw["workspace_members"]]
        every = [(app["id"], s) for s in each_feature(FeatureSelection(), app["features"])]
        host = run(["rustc", "-vV"]).stdout.split("host: ")[1].split()[0]
        cfg = TargetCfg.parse(host, run(["rustc", "--print", "cfg"]).stdout)

        def resolve(jobs: list[tuple[str, FeatureSelection]]) -> object:
            return resolve_configurations(workspace_from_metadata(raw), jobs, [cfg], 3)

        rows: dict[str, list[float]] = {
            "cargo metadata --all-features (one call)": [],
            "featcheck --each-feature (whole process)": [],
            "audit --each-feature in process, fixes not confirmed": [],
            "featcheck, default configuration only (whole process)": [],
            f"resolver: {len(every)} configurations (indexing included)": [],
            "resolver: default configuration only (indexing included)": [],
        }
        actions: list[Callable[[], object]] = [
            lambda: run(metadata),
            lambda: run([*featcheck, "--each-feature"]),
            lambda: audit_project(project, options, TrustContext.of(project, os.environ)),
            lambda: run(featcheck),
            lambda: resolve(every),
            lambda: resolve(every[:1]),
        ]
        for _ in range(args.repeat):
            for times, action in zip(rows.values(), actions, strict=True):
                times.append(timed(action))
        base = statistics.median(rows["cargo metadata --all-features (one call)"])
        print(f"medians of {args.repeat} interleaved rounds:")
        for label, times in rows.items():
            median = statistics.median(times)
            print(f"  {label:<56} {median:6.3f} s  {median / base:5.2f}x metadata")
        whole = statistics.median(rows["featcheck --each-feature (whole process)"])
        print(f"goal: whole process <= 2x one cargo metadata: {whole / base:.2f}x")


if __name__ == "__main__":
    main()
