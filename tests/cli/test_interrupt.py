"""Ctrl-C: one line, exit 130, the cargo it started ended, and every file as it was.

featcheck runs with a cargo on PATH that runs the real one, except for the call a test waits in
(the audit's `cargo metadata`, or the resolution of `--fix`'s copy), where it notes its process
id and sleeps. The test then interrupts featcheck as a terminal's Ctrl-C does (SIGINT to
featcheck; cargo runs in a session of its own, which the terminal's interrupt does not reach).
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from support import WORKSPACES, trust_of

import featcheck.cli
from featcheck.cargo.runner import CargoRunner

pytestmark = pytest.mark.skipif(os.name != "posix", reason="SIGINT as a terminal sends it")


def _cargo_that_waits(tmp_path: Path) -> Path:
    """A cargo on PATH that sleeps in the call whose arguments hold $WAIT_IN."""
    toolchain = CargoRunner(tmp_path, trust=trust_of(tmp_path)).toolchain
    assert toolchain is not None
    bin_dir = tmp_path / "waiting-bin"
    bin_dir.mkdir()
    script = bin_dir / "cargo"
    script.write_text(
        "#!/bin/sh\n"
        'case "$*" in *"$WAIT_IN"*) echo $$ > "$WAITING"; exec sleep 120 ;; esac\n'
        f'exec "{toolchain.cargo}" "$@"\n'
    )
    script.chmod(0o755)
    (bin_dir / "rustc").symlink_to(toolchain.rustc)
    return bin_dir


def _running(pid: int) -> bool:
    """Whether the process runs (a zombie nobody reaped yet does not)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(") ", 1)[1][0] != "Z"
    except FileNotFoundError:
        return False
    except OSError:  # no /proc: ask the kernel
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        return True


def _files(root: Path) -> dict[Path, bytes]:
    return {p.relative_to(root): p.read_bytes() for p in root.rglob("*") if p.is_file()}


@pytest.mark.parametrize(
    ("wait_in", "flags"),
    [("metadata", ()), ("featcheck-fix-", ("--fix",))],
    ids=["audit", "fix"],
)
def test_ctrl_c_prints_one_line_exits_130_and_leaves_every_file(
    wait_in: str,
    flags: tuple[str, ...],
    tmp_path: Path,
    offline_cargo_for: Callable[..., Path],
) -> None:
    project = tmp_path / "memchr-without-std"  # one safe fix: --fix resolves it on a copy
    shutil.copytree(WORKSPACES / "memchr-without-std", project)
    offline_cargo_for(project)
    temporary, waiting = tmp_path / "tmp", tmp_path / "cargo.pid"
    temporary.mkdir()
    environment = {key: value for key, value in os.environ.items() if key != "RUSTUP_TOOLCHAIN"}
    environment.update(
        PATH=os.pathsep.join([str(_cargo_that_waits(tmp_path)), environment.get("PATH", "")]),
        WAIT_IN=wait_in,
        WAITING=str(waiting),
        TMPDIR=str(temporary),
        XDG_CACHE_HOME=str(tmp_path / "cache"),
        NO_COLOR="1",
    )
    before = _files(project)
    # Started as from a terminal, Ctrl-C not ignored: a suite run as a background job (`pytest &`
    # in a script) has SIGINT ignored and passes that on, and featcheck keeps an ignored SIGINT
    # ignored, as for `featcheck &`. A handler of this process is not inherited: the child
    # starts with SIGINT at its default.
    inherited = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        featcheck = subprocess.Popen(
            [sys.executable, "-m", "featcheck", str(project), *flags],
            env=environment,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
    finally:
        signal.signal(signal.SIGINT, inherited)
    try:
        deadline = time.monotonic() + 120
        while not (waiting.exists() and waiting.read_text().strip()):
            assert featcheck.poll() is None, featcheck.communicate()
            assert time.monotonic() < deadline, "cargo was never called"
            time.sleep(0.05)
        featcheck.send_signal(signal.SIGINT)
        stdout, stderr = featcheck.communicate(timeout=60)
    finally:
        if featcheck.poll() is None:
            featcheck.kill()
    # The whole stderr on a failure: pytest shortens a long string in the comparison.
    assert (featcheck.returncode, stderr, stdout) == (130, "featcheck: interrupted\n", ""), stderr
    cargo = int(waiting.read_text())
    assert not _running(cargo)
    assert _files(project) == before
    assert list(temporary.iterdir()) == []  # --fix's copy of the workspace is gone


def test_what_trips_on_a_module_ctrl_c_left_half_loaded_still_ends_in_one_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Ctrl-C can land inside an import, and Python may leave that module half loaded; code
    that then runs while the run unwinds (a `finally`) can fail on it, with another error than
    KeyboardInterrupt. That is still the interrupt: one line and exit 130, no traceback."""

    def interrupted_run(args: list[str], prog: str) -> int:
        try:
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(5)  # the handler raises KeyboardInterrupt here
            raise AssertionError("no interrupt came")
        finally:
            raise ImportError("cannot import name 'DependencyGraph' from 'featcheck.graph'")

    monkeypatch.setattr(featcheck.cli, "run", interrupted_run)
    # This process lives on: ending every process would refuse the next test's cargo, and
    # the run's settings for a process that ends with it (no collector, every audit kept)
    # would stay.
    monkeypatch.setattr(featcheck.cli, "_end_processes", lambda: None)
    monkeypatch.setattr(featcheck.cli.lazy, "keep_until_exit", lambda: None)
    monkeypatch.setattr(featcheck.cli.gc, "disable", lambda: None)
    monkeypatch.setattr(featcheck.cli, "_interrupt_asked", False, raising=False)
    inherited = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        code = featcheck.cli._run_to_a_reader(["."])
    finally:
        signal.signal(signal.SIGINT, inherited)
    assert (code, capsys.readouterr().err) == (130, "featcheck: interrupted\n")
