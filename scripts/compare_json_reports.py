#!/usr/bin/env python3
"""Compare the JSON reports of two revisions of featcheck on every fixture workspace.

A developer tool for changes meant to keep behaviour: it runs ``featcheck --format json`` from
two source trees (a git revision, and another revision or the working tree) over every
``fixtures/workspaces/*`` and ``crates/*`` root, once with cargo on the offline stub registry
and once with ``--no-exec``, and prints which reports are byte-identical and, for the others,
which fields differ (list positions folded into ``[]``), counted over all reports. With
``--format text`` it compares the text reports (a change to what a terminal or hook shows) and
prints a diff of each that differs.

Both runs audit the same copies of the roots, in one temporary directory, each revision with a
user cache of its own, so a report differs only where the code does.

Usage:
    .venv/bin/python scripts/compare_json_reports.py OLD_REV [NEW_REV]   # NEW_REV: working tree
    .venv/bin/python scripts/compare_json_reports.py --format text OLD_REV
"""

from __future__ import annotations

import argparse
import collections
import difflib
import io
import json
import shutil
import subprocess
import sys
import tarfile
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "benchmarks"))
from stub_registry import offline_environment  # noqa: E402

MODES = {"cargo": [], "no-exec": ["--no-exec"]}


def source_tree(revision: str | None, into: Path) -> Path:
    """`src/` of `revision` (the working tree's where None), written under `into`."""
    if revision is None:
        shutil.copytree(REPO / "src", into / "src", ignore=shutil.ignore_patterns("__pycache__"))
    else:
        commit = subprocess.run(
            ["git", "rev-parse", "--verify", "--end-of-options", f"{revision}^{{commit}}"],
            cwd=REPO,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        archive = subprocess.run(
            ["git", "archive", commit, "src"], cwd=REPO, capture_output=True, check=True
        ).stdout
        with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
            tar.extractall(into, filter="data")
        # The build writes _version.py and git ignores it: without it every run of the revision
        # fails alike (an import error, no report), which would read as "identical".
        version = REPO / "src" / "featcheck" / "_version.py"
        shutil.copy(version, into / "src" / "featcheck" / "_version.py")
    return into / "src"


def reports(
    source: Path, roots: list[Path], env: dict[str, str], output: str
) -> dict[str, tuple[int, str]]:
    """Exit code and standard output of each root's audit, by `ROOT MODE`."""
    found = {}
    for root in roots:
        for mode, flags in MODES.items():
            command = [sys.executable, "-m", "featcheck", "--format", output, *flags, str(root)]
            run = subprocess.run(
                command, env={**env, "PYTHONPATH": str(source)}, capture_output=True, text=True
            )
            found[f"{root.name} {mode}"] = (run.returncode, run.stdout)
    return found


def differing(old: Any, new: Any, path: str = "") -> Iterator[str]:
    """The paths of the fields in which `old` and `new` differ."""
    if isinstance(old, dict) and isinstance(new, dict):
        for key in old.keys() | new.keys():
            if key not in old:
                yield f"{path}.{key} (added)"
            elif key not in new:
                yield f"{path}.{key} (removed)"
            else:
                yield from differing(old[key], new[key], f"{path}.{key}")
    elif isinstance(old, list) and isinstance(new, list) and len(old) == len(new):
        for old_item, new_item in zip(old, new, strict=True):
            yield from differing(old_item, new_item, f"{path}[]")
    elif old != new:
        yield path or "."


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("old", help="the revision compared with")
    parser.add_argument("new", nargs="?", help="the other revision (default: the working tree)")
    parser.add_argument("--format", choices=("json", "text"), default="json")
    arguments = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        base = Path(scratch)
        roots = []
        for parent in (REPO / "fixtures" / "workspaces", REPO / "crates"):
            for root in sorted(parent.iterdir()):
                if (root / "Cargo.toml").is_file():
                    # Not a developer's build output: gigabytes, and what rustc answered cargo.
                    skip = shutil.ignore_patterns("target")
                    roots.append(
                        Path(shutil.copytree(root, base / "roots" / root.name, ignore=skip))
                    )
        env = offline_environment(base / "home", unpacked=True)
        runs = {}
        for side, revision in (("old", arguments.old), ("new", arguments.new)):
            source = source_tree(revision, base / side)
            cache = {"XDG_CACHE_HOME": str(base / f"cache-{side}")}
            runs[side] = reports(source, roots, {**env, **cache}, arguments.format)
    counts: collections.Counter[str] = collections.Counter()
    identical = 0
    for name, (old_code, old_text) in runs["old"].items():
        new_code, new_text = runs["new"][name]
        if (old_code, old_text) == (new_code, new_text):
            identical += 1
            continue
        if arguments.format == "text":
            lines = (text.splitlines(keepends=True) for text in (old_text, new_text))
            print(f"{name}: exit code {old_code} -> {new_code}")
            sys.stdout.writelines(difflib.unified_diff(*lines, "old", "new"))
            counts["text"] += 1
            continue
        old_report, new_report = (json.loads(text or "null") for text in (old_text, new_text))
        fields = sorted(set(differing(old_report, new_report)))
        if old_code != new_code:
            fields.insert(0, f"exit code {old_code} -> {new_code}")
        print(f"{name}: {', '.join(fields)}")
        counts.update(fields)
    print(f"\n{identical} of {len(runs['old'])} reports byte-identical; fields differing:")
    for field, count in counts.most_common():
        print(f"  {count:4}  {field}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
