#!/usr/bin/env python3
"""Builds each rule-pack benchmark with and without its feature and times both side by side.

Each member of this workspace is one program whose `fast` crate feature turns on the feature a
featcheck rule is about (see the member's Cargo.toml), or whose `costly` feature turns on the
feature a rule reports the presence of (the ratio is then with / without: how much slower). For
every member named (all by default):

1. `cargo build --release -p bench-NAME`, then again with `--features fast`, into this
   directory's shared target/ (the binaries are copied aside, since both builds write the same
   path), and prints the crate's resolved features in each build (`cargo tree -e normal`).
   A member may also declare `part-*` features (one of the sub-features `fast` turns on, e.g.
   regex's `perf-literal` alone); each is built too, and gets its own column;
2. runs the programs in turn, `--runs` times each (without, with, without, ...), so that
   load on a shared machine falls on all alike; every program times its workloads itself
   (two warm-up calls, then the median of several timed calls) and prints its result, which must
   agree between the builds;
3. prints, per workload, the median over runs of each build's medians and the ratio
   without / with.

    python3 benchmarks/rulepack/run.py [regex memchr ...] [--runs 5]

Nothing here asserts: the numbers are for the rules' documentation.
"""

from __future__ import annotations

import argparse
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
MEMBERS = (
    "regex",
    "memchr",
    "crc32fast",
    "aho-corasick",
    "rustfft",
    "flate2",
    "serde-json",
    "mimalloc",
    "regex-std",
    "flate2-detect",
    "flate2-detect-zlib-rs",
    "matrixmultiply",
    "blake3",
    "aho-corasick-literal",
    "gemm",
    "burn-ndarray",
    "simdutf8",
    "half",
    "regex-automata-literal",
    "regex-automata-std",
    "aho-corasick-std",
    "uuid",
    "lz4-flex",
    "tiny-skia",
    "zune-jpeg",
    "exr",
    "jpeg-decoder",
    "curve25519-dalek",
    "ed25519-dalek",
    "k256",
    "gemm-std",
    "p256",
    "bytecount",
    "base64-simd",
    "hex-simd",
    "simd-json",
)
WALL = frozenset({"gemm", "burn-ndarray", "gemm-std", "exr", "jpeg-decoder"})
"""Members timed by wall time (their feature spreads the work over threads; the program says
`time_wall`), not the calling thread's CPU time."""
TARGET = HERE / "target"


def costly(member: str) -> bool:
    """Whether the member's feature costs speed when on (`costly`, for the rules that report
    a feature's presence) rather than gives it (`fast`)."""
    text = (HERE / member / "Cargo.toml").read_text()
    return re.search(r"^costly *=", text, flags=re.MULTILINE) is not None


def parts(member: str) -> list[str]:
    """The member's `part-*` features: partial variants between without and with."""
    text = (HERE / member / "Cargo.toml").read_text()
    return sorted(re.findall(r"^(part-[\w-]+) *=", text, flags=re.MULTILINE))


def build(member: str, feature: str | None) -> Path:
    """Builds one variant (`feature` None: without) and returns a copy of its binary."""
    package = f"bench-{member}"
    features = ["--features", feature] if feature else []
    subprocess.run(
        ["cargo", "build", "--release", "--locked", "-p", package, *features],
        cwd=HERE,
        check=True,
    )
    tree = subprocess.run(
        [
            "cargo",
            "tree",
            "--locked",
            "-e",
            "normal",
            "-p",
            package,
            *features,
            "--depth",
            "1",
            "-f",
            "{p} [{f}]",
            "--prefix",
            "none",
        ],
        cwd=HERE,
        check=True,
        capture_output=True,
        text=True,
    ).stdout.splitlines()
    for line in tree[1:]:
        if not line.startswith("harness"):
            print(f"  {label(feature):12} {line}")
    variant = TARGET / "variants" / f"{package}-{label(feature)}"
    variant.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy2(TARGET / "release" / package, variant)
    return variant


def run_once(binary: Path) -> dict[str, tuple[float, str]]:
    """One run of a program: workload -> (median ms, result)."""
    out = subprocess.run([str(binary)], check=True, capture_output=True, text=True).stdout
    rows = (line.split("\t") for line in out.splitlines() if line)
    return {name: (float(ms), result) for name, ms, result in rows}


def measure(member: str, runs: int) -> None:
    print(f"== {member}")
    on = "costly" if costly(member) else "fast"
    features = [None, *parts(member), on]
    binaries = {label(f): build(member, f) for f in features}
    samples: dict[str, dict[str, list[float]]] = {name: {} for name in binaries}
    results: dict[str, dict[str, str]] = {name: {} for name in binaries}
    for _ in range(runs):
        for variant, binary in binaries.items():
            for name, (ms, result) in run_once(binary).items():
                samples[variant].setdefault(name, []).append(ms)
                results[variant][name] = result
    columns = list(binaries)
    slower = "with / without: the feature costs" if on == "costly" else "without / with"
    clock = "wall ms" if member in WALL else "thread CPU ms"
    print(f"  {clock}, median of {runs} runs' medians; ratio = {slower}")
    print("  " + f"{'workload':14}" + "".join(f"{c:>14}" for c in columns) + f"{'ratio':>9}")
    for name in samples["without"]:
        medians = {c: statistics.median(samples[c][name]) for c in columns}
        ratio = medians["without"] / medians["with"]
        if on == "costly":
            ratio = 1 / ratio
        differ = {results[c][name] for c in columns}
        agree = "" if len(differ) == 1 else "  RESULTS DIFFER"
        cells = "".join(f"{medians[c]:14.3f}" for c in columns)
        print(f"  {name:14}{cells}{ratio:8.2f}x{agree}")


def label(feature: str | None) -> str:
    return {None: "without", "fast": "with", "costly": "with"}.get(feature, feature or "")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("members", nargs="*", metavar="MEMBER", help=", ".join(MEMBERS))
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    unknown = sorted(set(args.members) - set(MEMBERS))
    if unknown:
        parser.error(f"unknown member {', '.join(unknown)} (one of {', '.join(MEMBERS)})")
    cpuinfo = Path("/proc/cpuinfo")
    models = (
        re.findall(r"^model name\s*: (.*)$", cpuinfo.read_text(), flags=re.MULTILINE)
        if cpuinfo.exists()
        else []
    )
    cpu = models[0] if models else "cpu ?"
    load = os.getloadavg()[0]
    print(f"{platform.machine()}, {os.cpu_count()} cores, {cpu}; load average {load:.1f}")
    for member in args.members or MEMBERS:
        measure(member, args.runs)
    return 0


if __name__ == "__main__":
    sys.exit(main())
