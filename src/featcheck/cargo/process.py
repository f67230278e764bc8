"""Where every cargo, rustc and rustup process of an audit starts: gated, timed, killed whole."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from featcheck.cargo.argv_gate import Argument, GateError, refuse_unsafe
from featcheck.errors import FeatcheckError


@dataclass(frozen=True)
class ProcessOutput:
    """What one command printed, and how it ended."""

    returncode: int
    stdout: str
    stderr: str


def run_process(
    executable: Path | str,
    arguments: Sequence[Argument],
    *,
    cwd: Path,
    env: dict[str, str],
    timeout: float,
    what: str,
) -> ProcessOutput:
    """Run one command and wait at most `timeout` seconds for it and everything it started.

    The arguments went through the gate (argv_gate.py) when they were built; they are checked
    once more here, so that nothing reaches a process as an argument file. On timeout (or
    Ctrl-C) the whole process group is killed, not only the command itself.
    """
    try:
        refuse_unsafe(arguments)
    except GateError as error:
        raise FeatcheckError(f"{what}: {error}") from None
    argv = [str(executable), *arguments]
    try:
        process = subprocess.Popen(
            argv,
            cwd=cwd,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            # Its own process group, so a timeout also ends the programs it started (which
            # would otherwise hold the pipes open and keep featcheck waiting).
            start_new_session=os.name == "posix",
        )
    except OSError as error:
        raise FeatcheckError(
            f"could not run {Path(argv[0]).name}: {error.strerror or error}"
        ) from None
    try:
        stdout, stderr = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        _end(process)
        raise FeatcheckError(
            f"{what} did not finish within {timeout:g} s"
            " (raise --timeout, or check for a lock held by another cargo)"
        ) from None
    except BaseException:
        _end(process)
        raise
    return ProcessOutput(
        process.returncode,
        stdout.decode("utf-8", errors="replace"),
        stderr.decode("utf-8", errors="replace"),
    )


def _end(process: subprocess.Popen[bytes]) -> None:
    """Kill the process group, reap the process and close its pipes."""
    if os.name == "posix":
        with contextlib.suppress(OSError):
            os.killpg(process.pid, signal.SIGKILL)
    process.kill()
    try:
        process.communicate(timeout=5)
    except subprocess.TimeoutExpired:  # something left the group and holds a pipe open
        pass
    finally:
        for stream in (process.stdout, process.stderr):
            if stream is not None:
                stream.close()
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.wait(timeout=5)
