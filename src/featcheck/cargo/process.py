"""Where every cargo, rustc and rustup process of an audit starts: gated, timed, killed whole."""

from __future__ import annotations

import atexit
import contextlib
import os
import selectors
import signal
import subprocess
import sys
import threading
import time
import weakref
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import NamedTuple

from featcheck.boundary import TrustContext, refuse_checkout_program
from featcheck.cargo.argv_gate import Argument, GateError, refuse_unsafe
from featcheck.errors import FeatcheckError

if sys.platform != "win32":
    import fcntl  # already loaded by subprocess


NEUTRAL_DIRECTORY = Path(os.path.abspath(os.sep))
"""A working directory no checkout controls, the file system's root: cargo reads its configuration
from its working directory and every directory above it, and rustup looks for toolchain files the
same way; the root has no parent a user can write."""


class ProcessOutput(NamedTuple):
    returncode: int
    stdout: str
    stderr: str


_PIPE_BYTES = 1 << 20
"""How much of a pipe is read at once, and how much a widened pipe holds."""


class RunningProcess:
    def __init__(
        self,
        process: subprocess.Popen[bytes],
        timeout: float,
        what: str,
        on_stderr: Callable[[bytes], None] | None = None,
    ) -> None:
        self._process = process
        self._on_stderr = on_stderr  # called on the reader thread
        self._timeout = timeout
        self._what = what
        self._output: tuple[bytes, bytes] | None = None
        self._error: BaseException | None = None
        self._printed: list[bytes] = []
        self._line_ends_at: int | None = None  # N: stdout's first N chunks end with a newline
        self._early: tuple[int, str] | None = None  # `stdout_once_a_line_ends`'s N and text
        self.line_or_end = threading.Event()
        """Set once stdout so far ends a line, or the command ended: the line is there to take."""
        # Let cargo's stdout pipe hold 1 MiB (Linux; 64 KiB by default): cargo writes its
        # metadata (megabytes) in one go, and each pipeful is a wake-up of the reader and of cargo
        # (measured: 3 MB in 3.0 ms through 64 KiB, 0.7 ms through 1 MiB). Where the system
        # refuses, the pipe stays as it is.
        if sys.platform != "win32" and process.stdout and hasattr(fcntl, "F_SETPIPE_SZ"):
            with contextlib.suppress(OSError):
                fcntl.fcntl(process.stdout.fileno(), fcntl.F_SETPIPE_SZ, _PIPE_BYTES)
        # Reading both pipes while the caller works keeps the command from blocking on a full
        # pipe (cargo metadata prints megabytes) and lets it finish in the meantime.
        self._reader = threading.Thread(target=self._collect, daemon=True)
        self._reader.start()

    def _collect(self) -> None:
        try:
            if os.name == "posix":
                self._output = self._read_until_exit()
            else:  # a selector cannot wait on Windows pipes; no line is noted there
                self._output = self._process.communicate(timeout=self._timeout)
        except BaseException as error:  # handed to the caller by wait()
            self._error = error
        finally:
            self.line_or_end.set()

    def _read_until_exit(self) -> tuple[bytes, bytes]:
        """Both pipes until they close, then the exit (what `communicate` does, noting when
        stdout so far ends a line); subprocess.TimeoutExpired past the timeout."""
        deadline = time.monotonic() + self._timeout
        stdout, stderr = self._process.stdout, self._process.stderr
        assert stdout is not None and stderr is not None
        printed, complained = self._printed, list[bytes]()
        with selectors.DefaultSelector() as selector:
            selector.register(stdout, selectors.EVENT_READ, printed)
            selector.register(stderr, selectors.EVENT_READ, complained)
            while selector.get_map():
                if (left := deadline - time.monotonic()) <= 0:
                    raise subprocess.TimeoutExpired(self._process.args, self._timeout)
                for key, _ in selector.select(left):
                    if not (data := os.read(key.fd, _PIPE_BYTES)):
                        selector.unregister(key.fileobj)
                        continue
                    key.data.append(data)
                    if key.data is complained and self._on_stderr is not None:
                        self._on_stderr(data)
                    if key.data is printed and data.endswith(b"\n"):
                        self._line_ends_at = len(printed)
                        self.line_or_end.set()
        stdout.close()
        stderr.close()
        self._process.wait(timeout=max(deadline - time.monotonic(), 0.001))
        return b"".join(printed), b"".join(complained)

    def stdout_once_a_line_ends(self) -> str | None:
        """What the command printed once its output so far ends a line (cargo metadata prints
        one line of JSON, then frees what it built and exits: 10 ms in which the caller can
        read the line); None when it ended, or failed, without printing a whole line. Its exit
        status still decides: the caller calls `wait` as well."""
        self.line_or_end.wait()
        if (count := self._line_ends_at) is None:
            return None
        text = b"".join(self._printed[:count]).decode("utf-8", errors="replace")
        self._early = (count, text)
        return text

    def wait(self) -> ProcessOutput:
        try:
            self._reader.join()
        except BaseException:
            self.cancel()
            raise
        if self._error is not None:
            process = self._process
            kill_group(process)
            try:  # a timeout here: something left the group and holds a pipe open
                with contextlib.suppress(subprocess.TimeoutExpired):
                    process.communicate(timeout=5)
            finally:
                for stream in (process.stdout, process.stderr):
                    if stream is not None:
                        stream.close()
                with contextlib.suppress(subprocess.TimeoutExpired):
                    process.wait(timeout=5)
            if isinstance(self._error, subprocess.TimeoutExpired):
                raise FeatcheckError(
                    f"{self._what} did not finish within {self._timeout:g} s"
                    " (raise --timeout, or check for a lock held by another cargo)"
                ) from None
            raise self._error
        assert self._output is not None
        stdout, stderr = self._output
        if (early := self._early) is not None and early[0] == len(self._printed):
            text = early[1]  # the very text `stdout_once_a_line_ends` gave: nothing came after it
        else:
            text = stdout.decode("utf-8", "replace")
        return ProcessOutput(self._process.returncode, text, stderr.decode("utf-8", "replace"))

    def cancel(self) -> None:
        """End it now (its answer is no longer wanted): kill its process group and reap it."""
        if self._process.poll() is None:
            kill_group(self._process)
        self._reader.join(timeout=5)


class ProcessRefused(BaseException):
    """A process asked for once featcheck is ending. A BaseException, so that no handler of
    ordinary errors on the way takes it for a failure of the command."""


def start_process(
    executable: Path | str,
    arguments: Sequence[Argument],
    *,
    trust: TrustContext,
    cwd: Path,
    env: dict[str, str],
    timeout: float,
    what: str,
    on_stderr: Callable[[bytes], None] | None = None,
) -> RunningProcess:
    """Returns at once; `on_stderr` sees the command's stderr as it comes (POSIX)."""
    try:
        refuse_unsafe(arguments)
    except GateError as error:
        raise FeatcheckError(f"{what}: {error}") from None
    process = open_process([str(executable), *arguments], trust=trust, cwd=cwd, env=env)
    return RunningProcess(process, timeout, what, on_stderr)


def open_process(
    argv: Sequence[str],
    *,
    trust: TrustContext,
    cwd: Path,
    env: dict[str, str],
    stdin: int = subprocess.DEVNULL,
) -> subprocess.Popen[bytes]:
    """Every process featcheck starts starts here, in the run's trust context: no program of
    the checkout (or of a tree made from it) is run, and none runs inside it, where cargo,
    rustup and git read configuration from the working directory upward — unless the user
    trusts the checkout (`--trust-checkout`). Its stderr (and stdout) are pipes; it runs in a
    session of its own, so a timeout also ends the programs it started (which would otherwise
    hold the pipes open) and it has no terminal to open."""
    name = Path(argv[0]).name
    if not trust.trust_checkout:
        refuse_checkout_program(argv[0], trust, name)
        if trust.is_untrusted(cwd):
            raise RuntimeError(f"featcheck bug: {name} would run inside the checkout ({cwd})")
    # Started and noted as one step: a process another thread starts while featcheck ends
    # (a --new-since audit's cargo) is either ended with the others or never started.
    with _STARTING:
        if _ENDED.is_set():
            raise ProcessRefused(name)
        _starting_here.active = True
        try:
            process = subprocess.Popen(
                argv,
                cwd=cwd,
                env=env,
                stdin=stdin,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                start_new_session=os.name == "posix",
            )
            _STARTED.add(process)
        except OSError as error:
            if _interrupt_held.is_set():
                raise KeyboardInterrupt from None
            raise FeatcheckError(f"could not run {name}: {error.strerror or error}") from None
        finally:
            _starting_here.active = False
        if _ENDED.is_set():  # ended while this start held the lock too long to wait for
            kill_group(process)
            if _interrupt_held.is_set():
                raise KeyboardInterrupt
            raise ProcessRefused(name)
    return process


_STARTED: weakref.WeakSet[subprocess.Popen[bytes]] = weakref.WeakSet()
"""Every command started and not yet forgotten, for `end_every_process`."""
_STARTING = threading.Lock()
_ENDED = threading.Event()
"""Set by `end_every_process`: no process starts after it."""
_starting_here = threading.local()
"""`active` while this thread starts a process and notes it (see `hold_interrupt`)."""
_interrupt_held = threading.Event()


def hold_interrupt() -> bool:
    """For Ctrl-C's handler: True where the interrupted thread is starting a process, which
    ends every process and raises KeyboardInterrupt itself once the process is noted. Raised
    inside `subprocess.Popen`, after the fork, the interrupt would lose the process it started:
    under load the child can run (cargo, writing Cargo.lock) before Popen returns, and
    featcheck would exit leaving it behind."""
    if not getattr(_starting_here, "active", False):
        return False
    _interrupt_held.set()
    _ENDED.set()
    return True


def end_every_process() -> None:
    """Kill the process group of every command still running, and start none after (Ctrl-C,
    the process's end): each runs in its own session, so the terminal's interrupt reaches
    featcheck alone, and a cargo left running could write Cargo.lock after featcheck put it
    back. Safe to call from a signal handler: where the interrupted thread holds the lock
    (it is starting a process), what is noted so far is ended without waiting for it."""
    _ENDED.set()
    held = _STARTING.acquire(timeout=2)
    try:
        # Not reaped: its id is still its own.
        ended = [process for process in list(_STARTED) if process.returncode is None]
        for process in ended:
            kill_group(process)
    finally:
        if held:
            _STARTING.release()
    # A killed process is gone only once the kernel has ended it: featcheck's exit must not
    # race it (a second or so at most; a process that does not die is left to init).
    deadline = time.monotonic() + 1.0
    for process in ended:
        with contextlib.suppress(Exception):
            process.wait(timeout=max(0.0, deadline - time.monotonic()))


# The command line leaves by `os._exit` and calls it first (cli/__init__.py); whoever runs an
# audit in process (the tests, a caller of `featcheck.cli.run`) leaves by the interpreter's end.
# A `--new-since` revision's audit runs on a daemon thread, which stops without its `finally`
# when the working tree's audit fails first: its git or cargo, in a session of its own and
# waiting on something else than featcheck's pipes, would outlive the interpreter.
atexit.register(end_every_process)


def kill_group(process: subprocess.Popen[bytes]) -> None:
    if os.name == "posix":
        with contextlib.suppress(OSError):
            os.killpg(process.pid, signal.SIGKILL)
    with contextlib.suppress(OSError):
        process.kill()
