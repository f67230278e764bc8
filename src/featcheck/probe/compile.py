"""The cargo, rustc and environment every probe command runs with (`Toolset`); a build's
progress as it goes, and why cargo failed, in one line that says what to do.

Living with builds: cargo's status lines (`   Compiling burn-core v0.22.1`) are counted against
the number of packages in the probe's dependency graph. On a terminal one line is rewritten in
place; in a log (CI, a pipe) a line is printed every few crates or every half minute, never a
flood.
"""

from __future__ import annotations

import os
import re
import shutil
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from featcheck.cargo.argv_gate import word
from featcheck.cargo.process import NEUTRAL_DIRECTORY, start_process
from featcheck.errors import FeatcheckError
from featcheck.severity import plural

if TYPE_CHECKING:
    from featcheck.cargo.runner import CargoRunner


@dataclass(frozen=True)
class Toolset:
    cargo: str
    environment: dict[str, str]
    rustc_version: str
    """`rustc -vV`, part of the cache key."""


def find_toolset(runner: CargoRunner, target_dir: Path, timeout: float) -> Toolset:
    """cargo and rustc as the probe's `runner` picks them (the user's toolchain, not one the
    checkout names), plus a C linker; a clear one-line error when one is missing."""
    if shutil.which("cargo") is None:
        raise FeatcheckError(
            "cargo not found on PATH: the probe compiles with cargo; install Rust "
            "(https://rustup.rs) or add it to PATH"
        )
    # The runner's environment: rustflags through the allow-list, and featcheck's own
    # CARGO_HOME where the user's lies inside the checkout (its registry sources are the
    # checkout's files, and the probe would compile them).
    environment = dict(runner.prepared_setup().environment)
    toolchain = runner.toolchain
    cargo, rustc = (str(toolchain.cargo), str(toolchain.rustc)) if toolchain else ("cargo", "rustc")
    # A C linker on PATH (`$CC`, else `cc`), which Rust links programs with (not on Windows).
    linker = environment.get("CC") or "cc"
    if os.name != "nt" and shutil.which(linker.split()[0] if linker.split() else "cc") is None:
        raise FeatcheckError(
            f"no C toolchain: `{linker}` is not on PATH, and Rust links programs with it; "
            "install one (Debian/Ubuntu: build-essential; macOS: xcode-select --install)"
        )
    environment["CARGO_TARGET_DIR"] = str(target_dir)
    environment["CARGO_TERM_COLOR"] = "never"
    environment["CARGO_TERM_PROGRESS_WHEN"] = "never"
    environment.pop("CARGO_BUILD_TARGET", None)  # the probe runs here: build for the host
    environment.pop("CARGO_BUILD_BUILD_DIR", None)  # the audit's: the probe builds in its own
    output = start_process(
        rustc,
        [word("-vV")],
        trust=runner.trust,
        cwd=NEUTRAL_DIRECTORY,
        env=environment,
        timeout=min(timeout, 60.0),
        what="`rustc -vV`",
    ).wait()
    if output.returncode != 0:
        raise FeatcheckError(f"could not run `rustc -vV`: {output.stderr.strip()[:200]}")
    return Toolset(cargo, environment, output.stdout)


_NETWORK_SIGNS = (
    "failed to download",
    "could not resolve host",
    "couldn't resolve host",
    "failed to query replaced source",
    "network failure",
    "spurious network error",
    "failed to get `",
    "unable to update registry",
    "failed to update registry",
    "download of ",
)
_OFFLINE_SIGNS = (
    "--offline was specified",
    "attempting to make an http request, but --offline",
    "offline mode",
)


def classify_build_failure(stderr: str, *, offline: bool) -> str:
    """One line saying why cargo failed, with what to do."""
    lowered = stderr.lower()
    first = next(
        (line.strip() for line in stderr.splitlines() if line.strip().startswith("error")),
        (stderr.strip().splitlines() or ["no message"])[-1].strip(),
    )
    if "linker `" in lowered and "not found" in lowered:
        return (
            f"no C toolchain: cargo could not find the linker ({first}); install one "
            "(Debian/Ubuntu: build-essential; macOS: xcode-select --install)"
        )
    if any(sign in lowered for sign in _OFFLINE_SIGNS) or (
        offline and "failed to get `" in lowered
    ):
        return (
            "the local registry cache lacks crates the probe needs, and --offline keeps cargo "
            f"off the network ({first}); run once with network access"
        )
    if any(sign in lowered for sign in _NETWORK_SIGNS):
        return (
            "cargo could not download crates the probe needs: no network? "
            f"({first}); with a filled registry cache, --offline works without one"
        )
    if "error[e" in lowered or "could not compile `featcheck-probe`" in lowered:
        return f"the probe program does not compile against these crate versions: {first}"
    return f"cargo failed: {first}"


_STATUS = re.compile(
    r"^\s*(?P<verb>Compiling|Blocking|Downloading|Updating)\s+"
    r"(?:(?P<name>[A-Za-z0-9_][A-Za-z0-9_-]*) v(?P<version>\S+))?"
)
"""The status lines of cargo the progress shows (`   Compiling gemm v0.19.0`)."""


class BuildProgress:
    """While another cargo holds a lock the build needs (another probe building in the same
    cache), cargo says `Blocking waiting for file lock on ...`, once per lock and attempt: it
    is shown once, and the time until cargo goes on is kept apart (`waited`), so that a build's
    time is its own."""

    LOG_EVERY_CRATES = 25
    LOG_EVERY_SECONDS = 30.0

    def __init__(
        self,
        total: int,
        stream: TextIO | None = None,
        *,
        live: bool | None = None,
        clock: Callable[[], float] = time.monotonic,
    ):
        self.total = max(total, 1)
        self.stream = stream if stream is not None else sys.stderr
        self.live = self.stream.isatty() if live is None else live
        self.clock = clock
        self.compiled = 0
        self.started = clock()
        self.waited = 0.0
        self._waiting_since: float | None = None
        self._said_waiting = False
        self._last_log = self.started
        self._logged_at = 0
        self._width = 0
        self._partial = b""

    def feed(self, chunk: bytes) -> None:
        """A chunk of cargo's stderr: each line it completes."""
        lines = (self._partial + chunk).split(b"\n")
        self._partial = lines.pop()[-4096:]  # a line still being written (bounded)
        for raw in lines:
            self.line(raw.decode("utf-8", errors="replace"))

    def line(self, raw: str) -> None:
        status = _STATUS.match(raw.rstrip())
        if status is not None and status["verb"] == "Blocking":
            if self._waiting_since is None:
                self._waiting_since = self.clock()
            if not self._said_waiting:
                self._said_waiting = True
                self._say(
                    f"waiting for another build in the probe's cache (cargo: {raw.strip()}); "
                    "the wait is not counted as build time"
                )
            return
        if self._waiting_since is not None and raw.strip():  # cargo has the lock: it goes on
            self.waited += self.clock() - self._waiting_since
            self._waiting_since = None
        if status is None:
            return
        if status["verb"] == "Compiling":
            self.compiled += 1
            self._show(f"{status['name']} v{status['version']}" if status["name"] else "")
        else:
            self._say(raw.strip())

    def _counter(self) -> str:
        return f"{min(self.compiled, self.total)}/{plural(self.total, 'crate')}"

    def _show(self, package: str) -> None:
        if self.live:
            text = f"featcheck: building the probe: {self._counter()} ({package})"
            padding = " " * max(0, self._width - len(text))
            self._width = len(text)
            self.stream.write("\r" + text + padding)
            self.stream.flush()
            return
        now = self.clock()
        if (
            self.compiled - self._logged_at >= self.LOG_EVERY_CRATES
            or now - self._last_log >= self.LOG_EVERY_SECONDS
        ):
            self._logged_at = self.compiled
            self._last_log = now
            self._say(
                f"building the probe: {self._counter()} compiled "
                f"({now - self.started - self.waited:.0f} s, now {package})"
            )

    def _say(self, text: str) -> None:
        self.clear()
        self.stream.write(f"featcheck: {text}\n")
        self.stream.flush()

    def clear(self) -> None:
        """Erase the live line: before a message, and where the build fails."""
        if self.live and self._width:
            self.stream.write("\r" + " " * self._width + "\r")
            self._width = 0
        self.stream.flush()

    def done(self) -> None:
        elapsed = self.clock() - self.started - self.waited
        fresh = max(0, self.total - self.compiled)
        if self.waited >= 0.5:
            self._say(f"waited {self.waited:.0f} s for another build")
        self._say(
            f"built the probe in {elapsed:.0f} s ({plural(self.compiled, 'crate')} compiled"
            + (f", {fresh} up to date" if fresh else "")
            + ")"
        )
