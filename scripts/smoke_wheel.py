#!/usr/bin/env python3
"""featcheck's sdist and wheel, built as a release builds them, and the wheel tested on its own.

    python scripts/smoke_wheel.py                          # build in a temporary directory, test
    python scripts/smoke_wheel.py build DIST               # python -m build, twine check --strict
    python scripts/smoke_wheel.py test DIST [--version V]  # DIST's wheel, installed alone

.ci/run runs the first form on every change, so a packaging mistake (a rule spec or a probe program
left out of the wheel, metadata PyPI would refuse) fails before a tag does. The
release workflow builds once (`build`) and tests those very files (`test`) with the tag's version
before it publishes them.

`test` installs the wheel alone into a fresh virtual environment (its dependencies from PyPI) and
runs everything from a temporary directory with PYTHON* variables removed and `python -I`, so
nothing of a source tree is importable. The installed package must hold every file of the sdist's
package (the rule specs and the probe programs are package data), `featcheck
--version` must print the files' version, `featcheck rules` must list every rule spec,
`featcheck probe --help` must start, and the audit of the sdist's crates/pitb-exec-cpu must find
FC001 and exit 1 (cargo may download the crate's dependencies from crates.io). Then the sdist's
tests of the shipped rule specs and probe programs run against the installed wheel, offline.

Needs `build` and `twine` (the test extra has them) for `build`; pip 22.3 or later (--python) and
cargo on PATH for `test`.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tarfile
import tempfile
import time
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

ROOT = Path(__file__).resolve().parent.parent
# The offline tests that read what the wheel ships: the rule specs (the docs generated from them
# must equal the sdist's docs/rules.md and README table) and the matmul program's manifest.
TEST_SUBSET = ("tests/rules/test_rule_docs.py", "tests/probe/test_manifest.py")
# What the subset needs besides featcheck: pytest and the xdist plugin pyproject.toml requires.
TEST_TOOLS = ("pytest", "pytest-xdist")


T = TypeVar("T")


class SmokeError(Exception):
    """A step failed: its one-line reason."""


def main(argv: list[str] | None = None) -> int:
    arguments = _parser().parse_args(argv)
    started = time.perf_counter()
    try:
        if arguments.command == "build":
            build(Path(arguments.dist).resolve())
        elif arguments.command == "test":
            test(Path(arguments.dist).resolve(), arguments.version)
        else:
            with tempfile.TemporaryDirectory(prefix="featcheck-dist-") as dist:
                build(Path(dist))
                test(Path(dist), None)
    except SmokeError as error:
        print(f"smoke_wheel: {error}", file=sys.stderr)
        return 1
    print(f"smoke_wheel: done in {time.perf_counter() - started:.0f} s")
    return 0


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command")
    build_command = commands.add_parser("build", help="build the sdist and the wheel into DIST")
    build_command.add_argument("dist", metavar="DIST")
    test_command = commands.add_parser("test", help="install DIST's wheel alone and test it")
    test_command.add_argument("dist", metavar="DIST")
    test_command.add_argument("--version", help="the version the files must have (the tag's)")
    return parser


def build(dist: Path) -> None:
    """The sdist, then the wheel built from it (as `python -m build` does), checked by twine."""
    if dist.exists() and any(dist.iterdir()):
        raise SmokeError(f"{dist}: not empty; build writes into a new or empty directory")
    _step("build the sdist and the wheel", [sys.executable, "-m", "build", "--outdir", dist, ROOT])
    wheel, sdist = distributions(dist)
    _step(
        "twine check --strict", [sys.executable, "-m", "twine", "check", "--strict", wheel, sdist]
    )


def distributions(dist: Path) -> tuple[Path, Path]:
    """DIST's one wheel and one sdist."""
    wheels, sdists = sorted(dist.glob("*.whl")), sorted(dist.glob("*.tar.gz"))
    if len(wheels) != 1 or len(sdists) != 1:
        found = ", ".join(p.name for p in [*wheels, *sdists]) or "nothing"
        raise SmokeError(f"{dist}: expected one wheel and one sdist, found {found}")
    return wheels[0], sdists[0]


def version_of(wheel: Path, sdist: Path) -> str:
    """The version both files' names carry."""
    wheel_version = wheel.name.split("-")[1]
    sdist_version = sdist.name.removesuffix(".tar.gz").split("-", 1)[1]
    if wheel_version != sdist_version:
        raise SmokeError(f"the wheel is {wheel_version} but the sdist is {sdist_version}")
    return wheel_version


def test(dist: Path, expected: str | None) -> None:
    wheel, sdist = distributions(dist)
    version = version_of(wheel, sdist)
    if expected is not None and version != expected:
        raise SmokeError(
            f"the files are version {version}, not {expected}: a release tag must be v followed"
            " by the version as PEP 440 normalizes it (v0.2.0, v0.2.0rc1)"
        )
    with tempfile.TemporaryDirectory(prefix="featcheck-smoke-") as scratch:
        here = Path(scratch)
        python, installed = _install_alone(wheel, here / "venv", here)
        source = _timed("unpack the sdist", lambda: _unpack(sdist, here / "sdist"))
        _check_package_files(source / "src" / "featcheck", installed)
        featcheck = python.parent / "featcheck"
        _check_cli(featcheck, version, source, here)
        _check_audit(featcheck, source / "crates" / "pitb-exec-cpu", here)
        _run_test_subset(python, wheel, source)
    print(f"smoke_wheel: featcheck {version} works from its wheel alone")


def _install_alone(wheel: Path, venv: Path, cwd: Path) -> tuple[Path, Path]:
    """A fresh virtual environment holding the wheel and its dependencies, its python and the
    installed package; featcheck must be imported from it, not from a source tree."""
    venv_command = [sys.executable, "-I", "-m", "venv", "--without-pip", venv]
    _step("make a clean virtual environment", venv_command, cwd=cwd)
    python = venv / "bin" / "python"
    _step("install the wheel alone", [*_pip_install(python), wheel], cwd=cwd)
    where = _step("import featcheck", [python, "-I", "-c", _PRINT_PACKAGE], cwd=cwd).stdout.strip()
    if not Path(where).resolve().is_relative_to(venv.resolve()):
        raise SmokeError(f"featcheck was imported from {where}, not from the wheel in {venv}")
    return python, Path(where)


_PRINT_PACKAGE = "import featcheck, os; print(os.path.dirname(featcheck.__file__))"


def _pip_install(python: Path) -> list[object]:
    """This interpreter's pip installing into `python`'s environment, which needs no pip of its
    own (making a virtual environment without one takes a fraction of the time)."""
    return [sys.executable, "-I", "-m", "pip", "--python", python, "install", "--quiet"]


def _unpack(sdist: Path, destination: Path) -> Path:
    """The sdist's files but its fixtures: the tests run here use none of them, and they are
    nine files in ten of the sdist (cargo's offline registry for the other tests)."""
    with tarfile.open(sdist) as archive:
        members = [m for m in archive.getmembers() if m.name.split("/")[1:2] != ["fixtures"]]
        if hasattr(tarfile, "data_filter"):
            archive.extractall(destination, members, filter="data")
        else:  # Python before 3.10.12 and 3.11.4: the archive is the one just built
            archive.extractall(destination, members)
    [top] = destination.iterdir()
    return top


def _check_package_files(source: Path, installed: Path) -> None:
    """Every file of the source package is installed: the rule specs and the probe programs
    are package data, shipped only where pyproject.toml names them."""
    files = [p.relative_to(source) for p in source.rglob("*") if p.is_file()]
    missing = [
        str(f) for f in files if "__pycache__" not in f.parts and not (installed / f).is_file()
    ]
    if missing:
        raise SmokeError(f"the wheel lacks {', '.join(sorted(missing)[:10])}")
    print(f"smoke_wheel: the wheel holds all {len(files)} files of the sdist's package")


def _check_cli(featcheck: Path, version: str, source: Path, cwd: Path) -> None:
    printed = _step("featcheck --version", [featcheck, "--version"], cwd=cwd).stdout.strip()
    if printed != f"featcheck {version}":
        raise SmokeError(f"featcheck --version printed {printed!r}, not 'featcheck {version}'")
    listed = _step("featcheck rules", [featcheck, "rules"], cwd=cwd).stdout
    specs = sorted((source / "src" / "featcheck" / "rules" / "builtin").glob("fc*.toml"))
    missing = [s.name for s in specs if s.name[:5].upper() not in listed]
    if not specs or missing:
        raise SmokeError(f"featcheck rules does not list {missing or 'any rule spec'}")
    _step("featcheck probe --help", [featcheck, "probe", "--help"], cwd=cwd)


def _check_audit(featcheck: Path, crate: Path, cwd: Path) -> None:
    """The README's example: burn's minimal template without rayon is FC001, exit 1."""
    command = [featcheck, "--format", "json", crate]
    done = _step("audit crates/pitb-exec-cpu", command, cwd=cwd, expect=1)
    codes = [finding["code"] for finding in json.loads(done.stdout)["findings"]]
    if codes != ["FC001"]:
        raise SmokeError(f"the audit of {crate} found {codes}, not ['FC001']")


def _run_test_subset(python: Path, wheel: Path, source: Path) -> None:
    """The sdist's tests of what the wheel ships, run against the installed wheel, offline."""
    tools = _test_requirements(wheel)
    _step("install the test subset's tools", [*_pip_install(python), *tools], cwd=source)
    pytest = [python, "-I", "-m", "pytest", "-q", "-n", "0", "-p", "no:cacheprovider"]
    _step("the sdist's tests of the shipped files", [*pytest, *TEST_SUBSET], cwd=source)


def _test_requirements(wheel: Path) -> list[str]:
    """TEST_TOOLS as the wheel's test extra requires them (one list of versions: pyproject's)."""
    with zipfile.ZipFile(wheel) as archive:
        [metadata] = [n for n in archive.namelist() if n.endswith(".dist-info/METADATA")]
        lines = archive.read(metadata).decode().splitlines()
    requirements = {}
    for line in lines:
        match = re.fullmatch(r"Requires-Dist: ([A-Za-z0-9_.-]+)([^;]*); extra == \"test\"", line)
        if match and match.group(1).lower() in TEST_TOOLS:
            requirements[match.group(1).lower()] = match.group(1) + match.group(2).strip()
    if sorted(requirements) != sorted(TEST_TOOLS):
        raise SmokeError(
            f"the wheel's test extra lacks {sorted(set(TEST_TOOLS) - set(requirements))}"
        )
    return list(requirements.values())


def _step(
    name: str, command: list[object], *, cwd: Path | None = None, expect: int = 0
) -> subprocess.CompletedProcess[str]:
    """Run one step, timed; a different exit status fails the smoke test with its output."""
    started = time.perf_counter()
    done = subprocess.run(
        [str(part) for part in command],
        cwd=cwd,
        env=_environment(),
        capture_output=True,
        text=True,
        check=False,
    )
    print(f"smoke_wheel: {name}: exit {done.returncode} ({time.perf_counter() - started:.1f} s)")
    if done.returncode != expect:
        sys.stderr.write(done.stdout[-4000:] + done.stderr[-4000:])
        raise SmokeError(f"{name}: exit {done.returncode}, expected {expect}")
    return done


def _timed(name: str, work: Callable[[], T]) -> T:
    started = time.perf_counter()
    result = work()
    print(f"smoke_wheel: {name} ({time.perf_counter() - started:.1f} s)")
    return result


def _environment() -> dict[str, str]:
    """This environment without PYTHON* variables, so that no path of a source tree is added."""
    return {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}


if __name__ == "__main__":
    sys.exit(main())
