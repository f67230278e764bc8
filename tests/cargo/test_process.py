"""A started command's output line is read while the command is still ending; its exit status
still decides (cargo metadata prints one line of JSON, then frees what it built and exits)."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest
from support import elsewhere, trust_of

from featcheck.cargo import process
from featcheck.cargo.process import ProcessRefused, RunningProcess, start_process
from featcheck.cargo.runner import CargoRunner
from featcheck.errors import FeatcheckError
from featcheck.workspace.cargo_metadata import parse_metadata


def _script(path: Path, body: str) -> Path:
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


def _started(command: Path, tmp_path: Path, timeout: float = 30) -> RunningProcess:
    """`command`, started as featcheck starts cargo: outside the checkout, with a timeout."""
    return start_process(
        command,
        [],
        trust=elsewhere(tmp_path),
        cwd=tmp_path,
        env=dict(os.environ),
        timeout=timeout,
        what="x",
    )


def test_the_line_is_there_before_the_command_ends(tmp_path: Path) -> None:
    command = _script(tmp_path / "slow", "echo '{\"a\": 1}'\nsleep 1\nexit 3\n")
    started = time.monotonic()
    running = _started(command, tmp_path)
    assert running.stdout_once_a_line_ends() == '{"a": 1}\n'
    assert time.monotonic() - started < 0.9, "waited for the command to end"
    output = running.wait()
    assert (output.returncode, output.stdout) == (3, '{"a": 1}\n')


def test_what_is_printed_after_the_line_counts(tmp_path: Path) -> None:
    command = _script(tmp_path / "more", "echo one\nsleep 0.2\necho two\n")
    running = _started(command, tmp_path)
    assert running.stdout_once_a_line_ends() == "one\n"
    assert running.wait().stdout == "one\ntwo\n"


def test_no_line_at_all(tmp_path: Path) -> None:
    command = _script(tmp_path / "quiet", "printf 'no newline'\nexit 1\n")
    running = _started(command, tmp_path)
    assert running.stdout_once_a_line_ends() is None
    assert running.wait() == (1, "no newline", "")


@pytest.mark.parametrize(
    ("after", "expected"),
    [
        ("exit 101", "cargo metadata failed"),  # the line read early is not the answer
        ("echo '{\"packages\": []}'", "printed something unexpected"),  # nor is a later one
    ],
    ids=["fails-after-printing", "prints-again"],
)
def test_cargo_metadata_answers_only_once_cargo_succeeds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, after: str, expected: str
) -> None:
    """A stand-in cargo (featcheck trusts the checkout here, so it runs `cargo` from PATH)
    prints valid metadata, then fails, or prints more."""
    document = {
        "packages": [],
        "workspace_members": [],
        "resolve": {"nodes": [], "root": None},
        "workspace_root": str(tmp_path),
    }
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    _script(bin_dir / "cargo", f"echo '{json.dumps(document)}'\nsleep 0.2\n{after}\n")
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    manifest = tmp_path / "Cargo.toml"
    manifest.write_text('[package]\nname = "a"\nversion = "0.1.0"\n')
    runner = CargoRunner(tmp_path, trust=trust_of(tmp_path, trust_checkout=True))
    with pytest.raises(FeatcheckError, match=expected):
        runner.start_metadata(manifest).result(parse_metadata)


def test_once_featcheck_ends_its_processes_none_starts(tmp_path: Path) -> None:
    """What another thread would start as featcheck ends (a --new-since audit's cargo) is
    ended with the rest or never started: none outlives featcheck."""
    command = _script(tmp_path / "waits", "sleep 60\n")
    running = _started(command, tmp_path, timeout=90)
    try:
        process.end_every_process()
        started = time.monotonic()
        assert running.wait().returncode != 0  # killed, not run to its end
        assert time.monotonic() - started < 30
        with pytest.raises(ProcessRefused):
            _started(command, tmp_path, timeout=90)
    finally:
        process._ENDED.clear()  # this test's process goes on: let later tests start theirs


_LEAVES_RUNNING = """
import os, sys
from pathlib import Path
from featcheck.boundary import TrustContext
from featcheck.cargo.process import start_process
tmp = Path(sys.argv[1])
trust = TrustContext.of(tmp / "the-checkout", os.environ)
running = start_process(Path(sys.argv[2]), [], trust=trust, cwd=tmp, env=dict(os.environ),
                        timeout=90, what="x")
print(running._process.pid, flush=True)
"""


def _gone(pid: int) -> bool:
    """The process has ended: no such process, or a zombie nobody reaps (a container's init)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return True
    return state in ("Z", "X")


@pytest.mark.skipif(not Path("/proc/self/stat").is_file(), reason="reads /proc")
def test_an_audit_in_process_leaves_no_process_when_the_interpreter_ends(tmp_path: Path) -> None:
    """Whoever runs featcheck in process (the tests, a caller of `featcheck.cli.run`) leaves by
    the interpreter's end, not the command line's `os._exit`: a process still running then (a
    --new-since revision's git or cargo, on a thread the failed working tree's audit left) is
    ended with the interpreter instead of outliving it in a session of its own."""
    (tmp_path / "the-checkout").mkdir()
    command = _script(tmp_path / "waits", "sleep 60\n")
    left = subprocess.run(
        [sys.executable, "-c", _LEAVES_RUNNING, str(tmp_path), str(command)],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    pid = int(left.stdout)
    deadline = time.monotonic() + 10
    while not _gone(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    if not _gone(pid):
        os.kill(pid, 9)
        pytest.fail("the process outlived the interpreter that started it")


def test_ctrl_c_inside_popen_still_ends_the_process_it_started(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Ctrl-C that lands while `subprocess.Popen` runs (after the fork: under load the child
    runs before Popen returns) is raised once the process is noted, and the process is ended:
    raised inside Popen, the interrupt lost the process, and featcheck exited leaving cargo
    running. The handler is the command line's own, called where the signal would land."""
    import signal

    from featcheck import cli

    command = _script(tmp_path / "waits", "sleep 60\n")
    children: list[subprocess.Popen[bytes]] = []

    class InterruptedAfterFork(subprocess.Popen[bytes]):
        def __init__(self, *args: object, **kwargs: object) -> None:
            super().__init__(*args, **kwargs)  # type: ignore[arg-type]
            children.append(self)
            cli._on_interrupt(signal.SIGINT, None)  # Ctrl-C, before Popen returns

    monkeypatch.setattr(process.subprocess, "Popen", InterruptedAfterFork)
    previous = signal.getsignal(signal.SIGINT)
    try:
        with pytest.raises(KeyboardInterrupt):
            _started(command, tmp_path, timeout=90)
        assert children and children[0].wait(timeout=30) != 0  # killed, not left running
    finally:
        signal.signal(signal.SIGINT, previous)
        process._ENDED.clear()  # this test's process goes on: let later tests start theirs
        process._interrupt_held.clear()
