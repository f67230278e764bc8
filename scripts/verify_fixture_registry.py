#!/usr/bin/env python3
"""Check that the stub registry in ``fixtures/registry/`` reproduces real cargo.

A developer tool to run after ``scripts/build_fixture_registry.py``. For every
workspace root (default: ``crates/*`` and ``fixtures/workspaces/*``) and every
member package it:

1. runs ``cargo tree --locked -e normal -p MEMBER -f '{p} [{f}]' --prefix depth``
   once against the real registry (the normal ``~/.cargo``; needs the crates to
   be downloaded already, e.g. by the build script) and once offline against
   the stub registry, and compares the outputs byte for byte;
2. with ``--check``, runs ``cargo check -v --offline -p MEMBER`` against the stub
   registry in a throwaway target directory and compares the
   ``--cfg 'feature="..."'`` flags rustc receives for ``--crates`` (default
   burn-flex and burn-ndarray) with the features ``cargo tree -e normal`` shows.
   Units compiled for the host (build-dependencies, proc-macro deps: rustc
   ``--emit=dep-info,link`` under ``cargo check``) are reported separately.

The offline environment is a temporary ``CARGO_HOME`` whose ``config.toml``
replaces crates-io with the stub directory source (see ``fixtures/README.md``).
``RUSTUP_HOME`` is pinned to its current value so the rustup proxy still finds
the toolchain.

Usage:
    .venv/bin/python scripts/verify_fixture_registry.py [--check] [ROOT ...]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
REGISTRY = REPO_ROOT / "fixtures" / "registry"
DEFAULT_ROOT_PARENTS = (REPO_ROOT / "crates", REPO_ROOT / "fixtures" / "workspaces")
TREE_FORMAT = "{p} [{f}]"
_TREE_LINE = re.compile(r"^(\d+)(\S+) v(\S+)(?: \(.*?\))?(?: \(\*\))? \[(.*)\]")
_RUNNING = re.compile(r"^\s+Running `(.*)`$")


def offline_config(registry: Path) -> str:
    return (
        "[source.crates-io]\n"
        'replace-with = "featcheck-fixtures"\n'
        "\n"
        "[source.featcheck-fixtures]\n"
        f"directory = {json.dumps(str(registry))}\n"
        "\n"
        "[net]\n"
        "offline = true\n"
    )


def offline_env(registry: Path, cargo_home: Path) -> dict[str, str]:
    cargo_home.mkdir(parents=True, exist_ok=True)
    (cargo_home / "config.toml").write_text(offline_config(registry), encoding="utf-8")
    env = dict(os.environ)
    env["CARGO_HOME"] = str(cargo_home)
    env["RUSTUP_HOME"] = os.environ.get("RUSTUP_HOME") or str(Path.home() / ".rustup")
    env.pop("CARGO_TARGET_DIR", None)
    return env


def run(cmd: Sequence[str], cwd: Path, env: Mapping[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        list(cmd), cwd=cwd, env=dict(env), capture_output=True, text=True, check=False
    )


@dataclass
class Member:
    name: str
    kinds: set[str]


def members(root: Path, env: Mapping[str, str]) -> list[Member]:
    proc = run(["cargo", "metadata", "--format-version", "1", "--no-deps", "--offline"], root, env)
    if proc.returncode != 0:
        raise RuntimeError(f"{root}: cargo metadata failed:\n{proc.stderr}")
    meta = json.loads(proc.stdout)
    ids = set(meta["workspace_members"])
    out = []
    for pkg in meta["packages"]:
        if pkg["id"] in ids:
            kinds = {k for t in pkg["targets"] for k in t["kind"]}
            out.append(Member(pkg["name"], kinds))
    return sorted(out, key=lambda m: m.name)


def tree_features(tree: str, crates: Sequence[str]) -> dict[tuple[str, str], set[str]]:
    found: dict[tuple[str, str], set[str]] = {}
    for line in tree.splitlines():
        m = _TREE_LINE.match(line)
        if m and m.group(2) in crates:
            feats = {f for f in m.group(4).split(",") if f}
            found.setdefault((m.group(2), m.group(3)), set()).update(feats)
    return found


@dataclass
class Unit:
    crate: str
    version: str
    host: bool
    features: frozenset[str]


def rustc_units(stderr: str, crates: Sequence[str]) -> list[Unit]:
    wanted = {c.replace("-", "_"): c for c in crates}
    units = []
    for line in stderr.splitlines():
        m = _RUNNING.match(line)
        if not m:
            continue
        try:
            argv = shlex.split(m.group(1))
        except ValueError:
            continue
        if "--crate-name" not in argv:
            continue
        crate = argv[argv.index("--crate-name") + 1]
        if crate not in wanted:
            continue
        src = next((a for a in argv if a.endswith(".rs")), "")
        dir_name = Path(src).parent.parent.name  # <name>-<version>/src/lib.rs
        version = dir_name[len(wanted[crate]) + 1 :]
        feats = set()
        for i, arg in enumerate(argv):
            if arg == "--cfg" and argv[i + 1].startswith("feature="):
                feats.add(argv[i + 1][len('feature="') : -1])
        emit = next((a for a in argv if a.startswith("--emit=")), "")
        units.append(Unit(wanted[crate], version, "link" in emit, frozenset(feats)))
    return units


@dataclass
class Report:
    failures: list[str] = field(default_factory=list)
    timings: list[float] = field(default_factory=list)


def verify_root(root: Path, crates: Sequence[str], check: bool, tmp: Path, report: Report) -> None:
    env_off = offline_env(REGISTRY, tmp / "cargo-home")
    env_real = {k: v for k, v in os.environ.items() if k != "CARGO_TARGET_DIR"}
    rel = root.relative_to(REPO_ROOT)
    for member in members(root, env_off):
        tree_cmd = ["cargo", "tree", "--locked", "-e", "normal", "-p", member.name]
        tree_cmd += ["-f", TREE_FORMAT, "--prefix", "depth"]
        real = run(tree_cmd, root, env_real)
        start = time.perf_counter()
        off = run(tree_cmd, root, env_off)
        report.timings.append(time.perf_counter() - start)
        same = real.returncode == off.returncode == 0 and real.stdout == off.stdout
        status = "identical" if same else "DIFFERENT"
        kind = "bin" if "bin" in member.kinds else "lib"
        print(f"{rel} -p {member.name} ({kind}): cargo tree real vs stub: {status}")
        if not same:
            report.failures.append(f"{rel} -p {member.name}: tree differs")
            print(f"  real rc={real.returncode} {real.stderr.strip()[-500:]}")
            print(f"  stub rc={off.returncode} {off.stderr.strip()[-500:]}")
        want = tree_features(off.stdout, crates)
        for (crate, version), feats in sorted(want.items()):
            print(f"  tree  {crate} {version}: [{','.join(sorted(feats))}]")
        if not check:
            continue
        with tempfile.TemporaryDirectory(prefix="featcheck-verify-target-") as target_dir:
            chk = run(
                [
                    *("cargo", "check", "-v", "--offline", "--locked", "--keep-going"),
                    *("-p", member.name, "--target-dir", target_dir),
                ],
                root,
                env_off,
            )
        if chk.returncode != 0:
            failed = set(re.findall(r"could not compile `([^`]+)`", chk.stderr))
            if failed == {member.name}:
                # Real code (crates/*) uses APIs the empty stubs lack; every
                # dependency still compiled, which is all this check needs.
                print("  cargo check: dependencies OK, the member's own source needs real crates")
            else:
                report.failures.append(f"{rel} -p {member.name}: cargo check failed")
                print(f"  cargo check FAILED:\n{chk.stderr[-2000:]}")
                continue
        units = rustc_units(chk.stderr, crates)
        target_units: dict[tuple[str, str], set[frozenset[str]]] = {}
        for unit in units:
            where = "host " if unit.host else "check"
            print(
                f"  rustc {unit.crate} {unit.version} {where}: [{','.join(sorted(unit.features))}]"
            )
            if not unit.host:
                target_units.setdefault((unit.crate, unit.version), set()).add(unit.features)
        got = {k: set().union(*v) for k, v in target_units.items()}
        if {k: set(v) for k, v in want.items()} != got:
            report.failures.append(f"{rel} -p {member.name}: rustc cfg differs from cargo tree")
            print("  MISMATCH between cargo tree -e normal and rustc --cfg flags")


def default_roots() -> list[Path]:
    roots: list[Path] = []
    for parent in DEFAULT_ROOT_PARENTS:
        if parent.is_dir():
            roots += sorted(p for p in parent.iterdir() if (p / "Cargo.lock").is_file())
    return roots


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Compare stub-registry cargo with real cargo.")
    parser.add_argument("roots", nargs="*", type=Path)
    parser.add_argument("--check", action="store_true", help="also run cargo check -v")
    parser.add_argument("--crates", default="burn-flex,burn-ndarray")
    args = parser.parse_args(argv)
    crates = [c for c in args.crates.split(",") if c]
    report = Report()
    with tempfile.TemporaryDirectory(prefix="featcheck-verify-") as tmp:
        for root in args.roots or default_roots():
            verify_root(root.resolve(), crates, args.check, Path(tmp), report)
    if report.timings:
        t = sorted(report.timings)
        print(
            f"offline cargo tree: {len(t)} calls, median {t[len(t) // 2]:.3f}s, "
            f"min {t[0]:.3f}s, max {t[-1]:.3f}s"
        )
    for failure in report.failures:
        print(f"FAIL: {failure}")
    print("all identical" if not report.failures else f"{len(report.failures)} failure(s)")
    return 1 if report.failures else 0


if __name__ == "__main__":
    sys.exit(main())
