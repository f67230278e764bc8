"""Asking rustup, the user's own program, for the real binaries of a named toolchain.

rustup runs from a neutral directory (where no checkout's toolchain file applies), and its
settings file is read as data where it can be: each rustup start is waited for.
"""

from __future__ import annotations

import functools
import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Generic, NamedTuple, TypeVar

from featcheck.boundary import TrustContext
from featcheck.cargo.argv_gate import TOOLCHAIN, Argument, option, word
from featcheck.cargo.process import neutral_directory, run_process
from featcheck.fileio import MAX_CONFIG_BYTES, read_regular_file
from featcheck.toml_read import toml_data


def rustup_home() -> Path:
    home = os.environ.get("RUSTUP_HOME")
    return Path(home) if home else Path.home() / ".rustup"


# A NamedTuple, not a dataclass: made before cargo starts (see audit.py).
class RustupSettings(NamedTuple):
    """What RUSTUP_HOME/settings.toml (the user's own) says."""

    overrides: dict[Path, str]
    """`rustup override set` entries."""
    default: str | None
    """`rustup default`, as recorded; None when the file does not say."""


def rustup_settings() -> RustupSettings:
    """RUSTUP_HOME/settings.toml, read as data (absent or unreadable: nothing is known)."""
    settings = rustup_home() / "settings.toml"
    try:
        text = read_regular_file(settings, "rustup settings file", MAX_CONFIG_BYTES).decode()
        document = toml_data(text)
    except Exception:
        return RustupSettings({}, None)
    table = document.get("overrides")
    overrides = {
        Path(k): v
        for k, v in (table.items() if isinstance(table, dict) else ())
        if isinstance(k, str) and isinstance(v, str)
    }
    default = document.get("default_toolchain")
    return RustupSettings(overrides, default if isinstance(default, str) and default else None)


def is_rustup_proxy(cargo: str, rustup: str | None) -> bool:
    if rustup is not None:
        try:
            if os.path.samefile(cargo, rustup):
                return True
        except OSError:
            pass
    return Path(os.path.realpath(cargo)).stem in ("rustup", "rustup-init")


def _rustup(rustup: str, trust: TrustContext, timeout: float, *args: Argument) -> str:
    """Run rustup (the user's own program) from a neutral directory; its stdout."""
    env = {k: v for k, v in os.environ.items() if k != "RUSTUP_TOOLCHAIN"}
    done = run_process(
        rustup,
        args,
        trust=trust,
        cwd=neutral_directory(),
        env=env,
        timeout=timeout,
        what=f"`rustup {' '.join(args)}`",
    )
    if done.returncode != 0:
        message = done.stderr.strip().splitlines()
        reason = next((m for m in message if m.startswith("error")), message[0] if message else "")
        raise RustupError(reason.removeprefix("error:").strip() or "no message")
    return done.stdout.strip()


class RustupError(Exception):
    pass


@functools.lru_cache(maxsize=32)
def rustup_binaries(
    rustup: str, name: str, rustup_home: str, trust: TrustContext, timeout: float
) -> tuple[Path, Path]:
    toolchain = option("--toolchain", name, TOOLCHAIN)
    # An installed toolchain keeps its binaries in RUSTUP_HOME/toolchains/NAME/bin, which is
    # what `rustup which` answers for it; rustup is asked only for anything else (a short
    # name such as `stable`, a linked toolchain without cargo). The name passed the gate: it
    # holds no path separator, so it stays inside the user's own rustup home.
    installed = Path(rustup_home) / "toolchains" / name / "bin"
    suffix = ".exe" if os.name == "nt" else ""
    cargo_file, rustc_file = installed / f"cargo{suffix}", installed / f"rustc{suffix}"
    if cargo_file.is_file() and rustc_file.is_file():
        return cargo_file, rustc_file
    # Both questions at once: a commit hook waits for each rustup start.
    rustc = Background(
        lambda: _rustup(rustup, trust, timeout, word("which"), word("rustc"), toolchain)
    )
    try:
        cargo = _rustup(rustup, trust, timeout, word("which"), word("cargo"), toolchain)
    except Exception:
        rustc.join()  # its process ends within the timeout too: nothing is left running
        raise
    return Path(cargo), Path(rustc.result())


@functools.lru_cache(maxsize=4)
def rustup_default(rustup: str, rustup_home: str, trust: TrustContext, timeout: float) -> str:
    del rustup_home
    answer = _rustup(rustup, trust, timeout, word("default")).split()
    if not answer or answer[0] in ("no", "error:"):
        raise RustupError("no default toolchain is configured (`rustup default stable`)")
    return answer[0]


T = TypeVar("T")


class Background(Generic[T]):
    """`work()` running on its own thread from the moment this is made: the few places an
    audit waits on two processes at once (cargo and rustc, two rustup questions). A plain
    thread rather than concurrent.futures: that package loads logging, which every run would
    pay for before cargo even starts."""

    def __init__(self, work: Callable[[], T]) -> None:
        self._work = work
        self._value: T | None = None
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        try:
            self._value = self._work()
        except BaseException as error:  # handed to whoever asks for the result
            self._error = error

    def join(self) -> None:
        """Wait for `work()` to end, whatever it did."""
        self._thread.join()

    def result(self) -> T:
        """What `work()` returned, once it has; what it raised is raised here."""
        self._thread.join()
        if self._error is not None:
            raise self._error
        return self._value  # type: ignore[return-value]  # set by _run before the join returns
