#!/usr/bin/env python3
"""Benchmark: `featcheck probe` on each rule's `bad` fixture, as a user runs it.

Each rule featcheck can time is probed on its own fixture (`fixtures/rules/fcNNN/bad`): the
fixture is copied to a scratch directory, resolved against crates.io (`cargo
generate-lockfile`: the fixtures' own registry is synthetic and has no sources), and probed.
Rules whose crate has a program: `featcheck probe . --rule CODE --yes --format json`, which
builds and times the crate as the fixture resolves it and as featcheck's fix leaves it. burn's
CPU rules (FC001 rayon, FC003 simd, FC007 x86-v4 on x86_64): `featcheck probe . --compare-fix
--yes --format json`, the matmul and MLP step of the fixture's burn-flex and of the fixed one
(each fixture's fix adds the rule's feature to what the one before had). The table printed
holds, per rule, both builds' features, the timings and the ratio, and the probe's exit code;
the JSON reports are kept in `--out`. It needs the network and a C toolchain (mimalloc), and
takes minutes per rule on a first run (a burn build: 10-20 minutes on 2 cores; later runs
reuse the probe's cache). Nothing here asserts.

    .venv/bin/python benchmarks/probe_rules.py [--rules FC012 FC013] [--out DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
RULE_FIXTURES = REPO / "fixtures" / "rules"
FEATCHECK = [sys.executable, "-m", "featcheck"]
BURN_RULES = ("FC001", "FC003", "FC007")
"""Timed by the matmul probe with `--compare-fix` (FC006, apple-amx, only on Apple silicon)."""


def probed_rules() -> list[str]:
    """The codes of the built-in rules whose crate has a probe program, but for hints about a
    crate itself (FC024), which claim no number."""
    from featcheck.probe.programs import PROGRAMS
    from featcheck.rules import builtin_rules
    from featcheck.workspace.model import crate_key

    return [*BURN_RULES] + [
        rule.code
        for rule in builtin_rules()
        if rule.code != "FC024"
        and any(crate_key(crate.name) in PROGRAMS for crate in rule.crates)
        and (RULE_FIXTURES / rule.code.lower() / "bad").is_dir()
    ]


def probe(code: str, scratch: Path, out: Path) -> dict[str, object]:
    """Copy, resolve and probe one rule's fixture; its JSON report (or why there is none)."""
    case = scratch / code.lower()
    shutil.copytree(RULE_FIXTURES / code.lower() / "bad", case)
    (case / "Cargo.lock").unlink(missing_ok=True)
    subprocess.run(["cargo", "generate-lockfile", "-q"], cwd=case, check=True)
    started = time.monotonic()
    how = ["--compare-fix"] if code in BURN_RULES else ["--rule", code]
    done = subprocess.run(
        [*FEATCHECK, "probe", str(case), *how, "--yes", "--format", "json"],
        capture_output=True,
        text=True,
        check=False,
    )
    seconds = time.monotonic() - started
    (out / f"{code}.json").write_text(done.stdout)
    (out / f"{code}.stderr").write_text(done.stderr)
    try:
        report: dict[str, object] = json.loads(done.stdout)
    except ValueError:
        return {"exit": done.returncode, "error": done.stderr.strip()[-300:], "seconds": seconds}
    return {"exit": done.returncode, "report": report, "seconds": seconds}


def print_burn_rows(code: str, outcome: dict[str, object], report: dict[str, Any]) -> None:
    variants = report.get("variants") or []
    print(
        f"{code} burn-flex {report['crate_version']} (exit {outcome['exit']}, "
        f"{outcome['seconds']:.0f} s, {report['cores']} cores)"
    )
    for variant in variants:
        every = variant["runs"][1] if "runs" in variant else variant
        mlp = every.get("mlp") or {}
        print(
            f"    {variant['label']:<22} {variant.get('features', '')}: matmul "
            f"{every['min_ms']:.2f} / {every['median_ms']:.2f} ms, mlp "
            f"{mlp.get('min_ms', 0):.2f} / {mlp.get('median_ms', 0):.2f} ms (min / median), "
            f"{variant['vs_current']:.2f}x, verdict {variant.get('verdict', '-')}"
        )


def print_rows(code: str, outcome: dict[str, object]) -> None:
    report = outcome.get("report")
    if isinstance(report, dict) and code in BURN_RULES:
        print_burn_rows(code, outcome, report)
        return
    if not isinstance(report, dict) or not report.get("probes"):
        print(f"{code}: exit {outcome['exit']}, no probe: {outcome.get('error', '')}")
        return
    for found in report["probes"]:
        print(
            f"{code} {found['crate']} {found['crate_version']} `{found['feature']}` "
            f"({found['clock']}, exit {outcome['exit']}, {outcome['seconds']:.0f} s)"
        )
        print(f"    current: {found['current_features']}")
        print(f"    fixed:   {found['fixed_features']}")
        for work in found["workloads"]:
            print(
                f"    {work['name']:<28} {work['current_ms']:>10.3f} ms "
                f"{work['fixed_ms']:>10.3f} ms {work['ratio']:>8.2f}x"
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rules", nargs="*", help="rule codes (default: every probed rule)")
    parser.add_argument("--out", type=Path, help="keep the JSON reports here")
    arguments = parser.parse_args()
    codes = arguments.rules or probed_rules()
    out = arguments.out or Path(tempfile.mkdtemp(prefix="probe-rules-"))
    out.mkdir(parents=True, exist_ok=True)
    print(f"{platform.machine()}, {os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}")
    with tempfile.TemporaryDirectory(prefix="probe-rules-") as scratch:
        for code in codes:
            print_rows(code, probe(code, Path(scratch), out))
            sys.stdout.flush()
    print(f"reports: {out}")


if __name__ == "__main__":
    main()
