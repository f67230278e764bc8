#!/usr/bin/env python3
"""Capture real ``cargo tree`` output into ``fixtures/trees/``.

A developer tool. Every capture runs the real cargo offline against the stub
registry in ``fixtures/registry/`` (see ``fixtures/README.md``), so it needs no
network and gives the same bytes on every machine. The absolute path of this
repository is replaced by ``/home/user/project`` in everything written (path
sources in ``cargo tree`` output, paths in error messages), keeping the rest of
the path.

It writes one ``.txt`` file per stdout capture, a ``.stderr.txt`` file where the
command is expected to print something on stderr (errors, warnings), and
``fixtures/trees/README.md``, which lists for every file the exact command,
the workspace it ran in and its exit code.

Usage:
    .venv/bin/python scripts/capture_fixture_trees.py
"""

from __future__ import annotations

import shlex
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from verify_fixture_registry import REGISTRY, REPO_ROOT, offline_env

OUT = REPO_ROOT / "fixtures" / "trees"
SANITIZED_ROOT = "/home/user/project"
F = ["-f", "{p} [{f}]"]


@dataclass(frozen=True)
class Capture:
    name: str  # file stem under fixtures/trees/
    workspace: str  # relative to the repository root
    args: tuple[str, ...]  # arguments after `cargo tree`
    note: str
    stderr: bool = False  # also write <name>.stderr.txt


CAPTURES = (
    Capture(
        "pitb-exec-cpu.normal.indent",
        "crates/pitb-exec-cpu",
        ("-e", "normal", *F),
        "Full normal-edge tree, default `--prefix indent` and box-drawing characters.",
    ),
    Capture(
        "pitb-exec-cpu.normal.depth",
        "crates/pitb-exec-cpu",
        ("-e", "normal", *F, "--prefix", "depth"),
        "Same tree, `--prefix depth` (depth number glued to the package name).",
    ),
    Capture(
        "pitb-exec-cpu.normal.none",
        "crates/pitb-exec-cpu",
        ("-e", "normal", *F, "--prefix", "none"),
        "Same tree, `--prefix none` (flat list, duplicates marked `(*)`).",
    ),
    Capture(
        "pitb-exec-cpu.normal.ascii",
        "crates/pitb-exec-cpu",
        ("-e", "normal", *F, "--charset", "ascii"),
        "Same tree, `--charset ascii` (`|--`, `` `-- ``).",
    ),
    Capture(
        "pitb-exec-cpu.invert-burn-flex",
        "crates/pitb-exec-cpu",
        ("-e", "normal", *F, "-i", "burn-flex"),
        "Inverted tree for burn-flex (who pulls it in), box-drawing characters.",
    ),
    Capture(
        "pitb-exec-cpu.invert-burn-flex.ascii",
        "crates/pitb-exec-cpu",
        ("-e", "normal", *F, "-i", "burn-flex", "--charset", "ascii"),
        "Inverted tree for burn-flex, `--charset ascii`.",
    ),
    Capture(
        "pitb-exec-cpu.invert-burn-flex.depth0",
        "crates/pitb-exec-cpu",
        ("-e", "normal", *F, "-i", "burn-flex", "--depth", "0"),
        "Only the burn-flex line itself, with its resolved features.",
    ),
    Capture(
        "pitb-exec-cpu-simd.invert-burn-flex",
        "crates/pitb-exec-cpu-simd",
        ("-i", "burn-flex", "-e", "normal", *F),
        "Inverted tree for burn-flex where rayon and simd are on.",
    ),
    Capture(
        "dev-only-rayon.all-edges",
        "fixtures/workspaces/dev-only-rayon",
        (*F,),
        "Default edges (normal, build, dev): dev-dependency features are unified into the "
        "whole tree, so burn and burn-flex show `rayon` from the top; the trailing "
        "`[dev-dependencies]` section repeats burn as `(*)`.",
    ),
    Capture(
        "dev-only-rayon.normal",
        "fixtures/workspaces/dev-only-rayon",
        ("-e", "normal", *F),
        "Normal edges only (what a `cargo build` of the binary gets): burn-flex without `rayon`.",
    ),
    Capture(
        "build-dependency.all-edges",
        "fixtures/workspaces/build-dependency",
        (*F,),
        "Default edges: a `[build-dependencies]` section with burn-flex `rayon` on "
        "(host build), normal burn-flex without it.",
    ),
    Capture(
        "workspace-unification.root",
        "fixtures/workspaces/workspace-unification",
        ("-e", "normal", *F),
        "Virtual workspace root without `-p`: one tree per member (app, bench); features "
        "are unified across the selected members, so app's burn-flex shows `rayon` too.",
    ),
    Capture(
        "workspace-unification.root.invert-burn-flex",
        "fixtures/workspaces/workspace-unification",
        ("-e", "normal", *F, "-i", "burn-flex"),
        "The README's check run at the workspace root: one inverted tree that reaches both "
        "members, with the features unified across them (`rayon` although app's own build "
        "lacks it).",
    ),
    Capture(
        "workspace-unification.p-app",
        "fixtures/workspaces/workspace-unification",
        ("-e", "normal", *F, "-p", "app"),
        "Only member app: burn-flex without `rayon`.",
    ),
    Capture(
        "two-versions.invert-burn-flex",
        "fixtures/workspaces/two-versions",
        ("-e", "normal", *F, "-i", "burn-flex"),
        "Ambiguous package spec (burn-flex 0.21.0 and 0.22.1 both present): an error.",
        stderr=True,
    ),
    Capture(
        "two-versions.invert-burn-flex-0.22.1",
        "fixtures/workspaces/two-versions",
        ("-e", "normal", *F, "-i", "burn-flex@0.22.1"),
        "Inverted tree for the 0.22.1 burn-flex only.",
    ),
    Capture(
        "pitb-exec-cpu.p-does-not-exist",
        "crates/pitb-exec-cpu",
        ("-p", "does-not-exist"),
        "`-p` naming a package that is not in the graph: an error.",
        stderr=True,
    ),
    Capture(
        "target-specific.invert-burn-flex.apple-darwin",
        "fixtures/workspaces/target-specific",
        ("-e", "normal", "-i", "burn-flex", "--target", "x86_64-apple-darwin"),
        'Neither `cfg(target_os = "linux")` nor `cfg(windows)` matches the target, '
        "so burn-flex is not in the graph: `warning: nothing to print.`, exit status 0.",
        stderr=True,
    ),
)


def sanitize(text: str, cargo_home: Path) -> str:
    text = text.replace(str(cargo_home), "$CARGO_HOME")
    return text.replace(str(REPO_ROOT), SANITIZED_ROOT)


def command_line(capture: Capture) -> str:
    return shlex.join(["cargo", "tree", *capture.args])


def main() -> int:
    OUT.mkdir(parents=True, exist_ok=True)
    rows: list[str] = []
    with tempfile.TemporaryDirectory(prefix="featcheck-capture-") as tmp:
        cargo_home = Path(tmp) / "cargo-home"
        env = offline_env(REGISTRY, cargo_home)
        for cap in CAPTURES:
            proc = subprocess.run(
                ["cargo", "tree", *cap.args],
                cwd=REPO_ROOT / cap.workspace,
                env=env,
                capture_output=True,
                text=True,
                check=False,
            )
            files = [f"`{cap.name}.txt`"]
            (OUT / f"{cap.name}.txt").write_text(sanitize(proc.stdout, cargo_home), "utf-8")
            if cap.stderr:
                (OUT / f"{cap.name}.stderr.txt").write_text(
                    sanitize(proc.stderr, cargo_home), "utf-8"
                )
                files.append(f"`{cap.name}.stderr.txt`")
            elif proc.returncode != 0 or proc.stderr.strip():
                print(f"unexpected stderr/exit for {cap.name}:\n{proc.stderr}", file=sys.stderr)
                return 1
            note = cap.note.replace("|", "\\|")
            rows.append(
                f"| {'<br>'.join(files)} | `{cap.workspace}` | `{command_line(cap)}` "
                f"| {proc.returncode} | {note} |"
            )
            print(f"{cap.name}: exit {proc.returncode}", file=sys.stderr)
    (OUT / "README.md").write_text(README_HEAD + "\n".join(rows) + "\n", "utf-8")
    return 0


README_HEAD = """\
# Captured `cargo tree` output

Real cargo output for parser and rendering tests. Generated by
`scripts/capture_fixture_trees.py`; do not edit by hand, rerun the script.

Every capture ran the real cargo (1.95) **offline against the stub registry**
in `fixtures/registry/` (a temporary `CARGO_HOME` whose `config.toml` replaces
crates-io with that directory source, see `fixtures/README.md`), in the
workspace named below, with the committed `Cargo.lock`. The absolute path of
the repository has been replaced by `/home/user/project` (the rest of each path
is kept), so path sources read e.g.
`app v0.1.0 (/home/user/project/fixtures/workspaces/dev-only-rayon)`.

`X.txt` is the command's stdout; `X.stderr.txt` (only where listed) is its
stderr. The exit code is the command's exit status. Commands are shown as they
were run (`cargo tree` followed by the arguments, shell-quoted). Tree output
has `-f '{p} [{f}]'` unless the command says otherwise: package, version,
`(path)` for path packages, `(*)` for an already-printed subtree, then the
comma-separated resolved features in brackets (`[]` for none).

| File(s) | Workspace (cwd) | Command | Exit code | What it shows |
|---|---|---|---|---|
"""


if __name__ == "__main__":
    sys.exit(main())
