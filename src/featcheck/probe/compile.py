"""`cargo build` of the probe: its progress shown as it goes, killed whole when it overruns."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import threading
from collections import deque
from collections.abc import Callable
from pathlib import Path

from featcheck.cargo.argv_gate import Argument, refuse_unsafe
from featcheck.cargo.process import open_process
from featcheck.errors import FeatcheckError
from featcheck.probe.failure import classify_build_failure
from featcheck.probe.progress import BuildProgress
from featcheck.probe.toolset import Toolset


def compile_probe(
    toolset: Toolset,
    arguments: list[Argument],
    directory: Path,
    *,
    total: int,
    timeout: float,
    offline: bool,
    on_command: Callable[[list[str]], None] | None = None,
) -> float:
    """Run `cargo ARGUMENTS` in `directory`, showing progress over `total` crates; a
    FeatcheckError saying why when it fails or runs past `timeout` seconds. Returns the seconds
    cargo waited for another build's lock (not this build's time)."""
    refuse_unsafe(arguments)
    if on_command is not None:
        on_command(["cargo", *arguments])
    progress = BuildProgress(total)
    tail: deque[str] = deque(maxlen=200)
    process = _start(toolset, arguments, directory)
    timed_out = threading.Event()

    def expire() -> None:
        timed_out.set()
        _kill(process)

    timer = threading.Timer(timeout, expire)
    timer.daemon = True
    timer.start()
    try:
        assert process.stderr is not None
        for raw in process.stderr:
            line = raw.decode("utf-8", errors="replace")
            tail.append(line)
            progress.line(line)
        process.wait()
    except BaseException:
        progress.abandon()
        _kill(process)
        raise
    finally:
        timer.cancel()
    if timed_out.is_set():
        progress.abandon()
        raise FeatcheckError(
            f"building the probe did not finish within {timeout:g} s (raise --timeout)"
        )
    if process.returncode != 0:
        progress.abandon()
        raise FeatcheckError(classify_build_failure("".join(tail), offline=offline))
    progress.done()
    return progress.waited


def _start(toolset: Toolset, arguments: list[Argument], directory: Path) -> subprocess.Popen[bytes]:
    return open_process(
        [toolset.cargo, *arguments],
        trust=toolset.trust,
        cwd=directory,
        env=toolset.environment,
        stdout=subprocess.DEVNULL,
    )


def _kill(process: subprocess.Popen[bytes]) -> None:
    if os.name == "posix":
        with contextlib.suppress(OSError):
            os.killpg(process.pid, signal.SIGKILL)
    with contextlib.suppress(OSError):
        process.kill()
    with contextlib.suppress(subprocess.TimeoutExpired):
        process.wait(timeout=10)
