"""Which cargo and rustc an audit runs, chosen without running anything from the checkout.

Running `cargo` in someone else's checkout can run their programs before cargo reads a single
manifest: the rustup proxy obeys the checkout's `rust-toolchain.toml` (a `path` toolchain is
the checkout's own `bin/cargo`). featcheck therefore reads the toolchain file itself (it is
data: TOML, or one line naming a channel), refuses a `path` toolchain unless the user trusts the
checkout, asks rustup (from a neutral directory, its settings file read as data where it can
be) for the real binaries of the named toolchain, and runs those directly. Without rustup, the
cargo and rustc on PATH are used.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import re
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import NamedTuple

from featcheck.boundary import (
    MAX_CONFIG_BYTES,
    TrustContext,
    decode_text,
    default_home,
    read_checkout_file,
    read_regular_file,
    refuse_checkout_program,
)
from featcheck.cargo.argv_gate import TOOLCHAIN, Argument, GateError, option, word
from featcheck.cargo.process import NEUTRAL_DIRECTORY, RunningProcess, start_process
from featcheck.errors import FeatcheckError
from featcheck.manifest.document import parse_text
from featcheck.toml_read import toml_data

if sys.platform == "win32":
    import shutil


class Toolchain(NamedTuple):
    cargo: Path
    rustc: Path
    rustup_name: str | None
    """The rustup toolchain to pin with RUSTUP_TOOLCHAIN; None without rustup."""


def which(name: str) -> str | None:
    """`shutil.which(name)`, without importing shutil before cargo starts (it brings the zlib,
    bz2 and lzma modules: 2 ms of every audit). The same search: PATH (else the system's
    default), each directory once, the first executable file."""
    if sys.platform == "win32":
        return shutil.which(name)
    if (path := os.environ.get("PATH")) is None:
        path = os.confstr("CS_PATH") or os.defpath
    directories = dict.fromkeys(path.split(os.pathsep))  # each once, in order
    candidates = (os.path.join(directory, name) for directory in directories)
    return next((c for c in candidates if os.access(c, os.X_OK) and not os.path.isdir(c)), None)


def installed(name: str) -> str:
    if (found := which(name)) is None:
        raise FeatcheckError(
            f"{name} not found on PATH: install Rust (https://rustup.rs) or add it to PATH"
        )
    return found


def resolve_toolchain(workdir: Path, timeout: float, *, trust: TrustContext) -> Toolchain:
    """No program of the checkout or of a tree made from it (`trust`) is run, whether PATH finds
    it there or it is a toolchain of a rustup home that lies there, and the toolchain files may
    not link out of the tree. `timeout`: the seconds rustup is given a call."""
    cargo = installed("cargo")
    refuse_checkout_program(cargo, trust, "cargo")
    rustup = which("rustup")
    proxy = Path(os.path.realpath(cargo)).stem in ("rustup", "rustup-init")
    with contextlib.suppress(OSError):
        proxy = proxy or (rustup is not None and os.path.samefile(cargo, rustup))
    if not proxy:
        # No rustup: the cargo on PATH, and the rustc next to it (else the one on PATH).
        sibling = Path(cargo).parent / ("rustc" + (".exe" if Path(cargo).suffix == ".exe" else ""))
        rustc = Path(str(sibling) if os.access(sibling, os.X_OK) else installed("rustc"))
        refuse_checkout_program(rustc, trust, "rustc")
        return Toolchain(Path(cargo), rustc, None)
    if rustup is None:
        raise FeatcheckError(
            f"{cargo} is a rustup proxy but rustup is not on PATH; add it, "
            "or put the toolchain's own bin directory first on PATH"
        )
    refuse_checkout_program(rustup, trust, "rustup")
    if (home := default_home(os.environ, "RUSTUP_HOME")) is None:
        raise FeatcheckError("no home directory to find rustup's toolchains in: set RUSTUP_HOME")
    if os.path.exists(home) and trust.is_untrusted(home):
        # A rustup home inside the checkout (or a tree made from it) holds the checkout's own
        # toolchains: running any of them runs the checkout's programs.
        raise FeatcheckError(
            "RUSTUP_HOME lies inside the audited checkout: its toolchains are checkout "
            "content, and featcheck runs none of the checkout's programs; set RUSTUP_HOME "
            "outside it, use --no-exec, or pass --trust-checkout",
            path=home,
        )
    # RUSTUP_TOOLCHAIN, else the toolchain rustup finds for `workdir` and its recorded default.
    pinned, default = os.environ.get("RUSTUP_TOOLCHAIN"), None
    if not pinned:
        overrides, default = rustup_settings(str(home))
        request = find_toolchain_request(workdir, overrides, trust.root)
    else:
        try:
            request = ToolchainRequest(TOOLCHAIN.check(pinned), why="RUSTUP_TOOLCHAIN")
        except GateError as error:
            raise FeatcheckError(
                f"RUSTUP_TOOLCHAIN: {error}; featcheck asks rustup for a named toolchain "
                "(or put the toolchain's bin directory first on PATH)"
            ) from None
    if request.path is not None:
        raise FeatcheckError(
            f"toolchain `path = {json.dumps(request.path)}` would make rustup run cargo and "
            "rustc from the checkout itself; featcheck runs no code from the project "
            "(pass --trust-checkout if you trust it)",
            path=request.origin,
            line=request.line,
        )
    return _rustup_toolchain(rustup, request, default, str(home), trust, timeout)


def _rustup_toolchain(
    rustup: str,
    request: ToolchainRequest,
    default: str | None,
    home: str,
    trust: TrustContext,
    timeout: float,
) -> Toolchain:
    try:
        # rustup's settings file records its default; asking rustup costs a process start.
        name = request.name or default or rustup_default(rustup, home, trust, timeout)
        real_cargo, real_rustc = rustup_binaries(rustup, name, home, trust, timeout)
    except RustupError as error:
        why = "" if request.origin is not None else f" ({request.why})"
        message = f"rustup cannot provide the toolchain{why}: {error}"
        if "not installed" in str(error) and request.name:
            message += f" (run `rustup toolchain install {request.name}`)"
        raise FeatcheckError(message, path=request.origin, line=request.line) from None
    except GateError as error:  # rustup's recorded default, which no one else has checked
        raise FeatcheckError(
            f"rustup's default toolchain: {error} (`rustup default stable` sets a plain one)"
        ) from None
    return Toolchain(real_cargo, real_rustc, name)


TOOLCHAIN_FILES = ("rust-toolchain", "rust-toolchain.toml")  # in rustup's order (below)


class ToolchainRequest(NamedTuple):
    name: str | None
    """A toolchain name (channel or custom name); None means rustup's default."""
    path: str | None = None
    """`[toolchain] path`: a toolchain directory the checkout supplies."""
    origin: Path | None = None
    """The toolchain file (or settings file) that said so."""
    line: int | None = None
    """The line of `channel`/`path` in `origin`."""
    why: str = "rustup's default toolchain"


def _line_of(text: str, key: str) -> int:
    pattern = re.compile(rf"^\s*(?:{re.escape(key)}|\"{re.escape(key)}\"|'{re.escape(key)}')\s*=")
    lines = enumerate(text.splitlines(), 1)
    return next((number for number, line in lines if pattern.match(line)), 1)


def parse_toolchain_file(path: Path, root: Path | None = None) -> ToolchainRequest:
    """Read a toolchain file as rustup does: a one-line `rust-toolchain` is a legacy channel
    name; anything else is TOML with a `[toolchain]` table holding `channel` or `path`."""
    text = decode_text(read_checkout_file(path, "toolchain file", MAX_CONFIG_BYTES, root), path)
    found = ToolchainRequest(None, origin=path, line=1)
    if not text.strip():
        raise FeatcheckError("empty toolchain file", path=path, line=1)
    if path.name == "rust-toolchain" and len(text.splitlines()) == 1:
        return found._replace(name=_checked_name(text.strip(), path, 1))
    document = parse_text(path, text).data
    if not isinstance(table := document.get("toolchain"), dict):
        raise FeatcheckError("toolchain file without a [toolchain] table", path=path, line=1)
    channel, directory = table.get("channel"), table.get("path")
    if channel is not None and directory is not None:
        raise FeatcheckError(
            "toolchain file names both a channel and a path", path=path, line=_line_of(text, "path")
        )
    key, value = ("path", directory) if directory is not None else ("channel", channel)
    if value is None:  # only components/targets/profile: rustup uses its default toolchain
        return found
    line = _line_of(text, key)
    if not isinstance(value, str):
        raise FeatcheckError(f"toolchain `{key}` is not a string", path=path, line=line)
    if key == "path":
        return found._replace(path=value, line=line)
    return found._replace(name=_checked_name(value, path, line), line=line)


def _checked_name(name: str, origin: Path, line: int) -> str:
    """A toolchain name, never a path (RUSTUP_TOOLCHAIN accepts paths) nor an option."""
    try:
        return TOOLCHAIN.check(name)
    except GateError as error:
        raise FeatcheckError(f"toolchain: {error}", path=origin, line=line) from None


def find_toolchain_request(
    start: Path, overrides: Mapping[Path, str], root: Path | None = None
) -> ToolchainRequest:
    """The nearest directory override or toolchain file from `start` upward: at each
    directory rustup checks its overrides, then `rust-toolchain`, then `rust-toolchain.toml`."""
    directory = start.absolute()
    with contextlib.suppress(OSError):
        directory = directory.resolve()
    for candidate in (directory, *directory.parents):
        if candidate in overrides:
            return ToolchainRequest(
                _checked_name(overrides[candidate], Path("settings.toml"), 1),
                why=f"rustup override for {candidate}",
            )
        for name in TOOLCHAIN_FILES:
            if os.path.exists(file := candidate / name):  # False where it cannot be looked at
                return parse_toolchain_file(file, root)
    return ToolchainRequest(None)


def rustup_settings(home: str) -> tuple[dict[Path, str], str | None]:
    """The `rustup override set` entries and the recorded `rustup default` of the user's
    RUSTUP_HOME/settings.toml (absent or unreadable: nothing is known)."""
    settings = Path(home) / "settings.toml"
    try:
        text = read_regular_file(settings, "rustup settings file", MAX_CONFIG_BYTES).decode()
        document = toml_data(text)
    except Exception:
        return {}, None
    table = document.get("overrides")
    overrides = {
        Path(k): v
        for k, v in (table.items() if isinstance(table, dict) else ())
        if isinstance(k, str) and isinstance(v, str)
    }
    default = document.get("default_toolchain")
    return overrides, default if isinstance(default, str) and default else None


def _start_rustup(
    rustup: str, trust: TrustContext, timeout: float, *args: Argument
) -> RunningProcess:
    env = {k: v for k, v in os.environ.items() if k != "RUSTUP_TOOLCHAIN"}
    return start_process(
        rustup,
        args,
        trust=trust,
        cwd=NEUTRAL_DIRECTORY,
        env=env,
        timeout=timeout,
        what=f"`rustup {' '.join(args)}`",
    )


def _answer(running: RunningProcess) -> str:
    done = running.wait()
    if done.returncode != 0:
        message = done.stderr.strip().splitlines()
        reason = next((m for m in message if m.startswith("error")), message[0] if message else "")
        raise RustupError(reason.removeprefix("error:").strip() or "no message")
    return done.stdout.strip()


class RustupError(Exception): ...


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
    cargo = _start_rustup(rustup, trust, timeout, word("which"), word("cargo"), toolchain)
    try:
        rustc = _start_rustup(rustup, trust, timeout, word("which"), word("rustc"), toolchain)
    except BaseException:
        cargo.cancel()
        raise
    try:
        return Path(_answer(cargo)), Path(_answer(rustc))
    finally:
        rustc.cancel()  # ended already, unless cargo's question failed: nothing is left running


@functools.lru_cache(maxsize=4)
def rustup_default(rustup: str, rustup_home: str, trust: TrustContext, timeout: float) -> str:
    del rustup_home
    answer = _answer(_start_rustup(rustup, trust, timeout, word("default"))).split()
    if not answer or answer[0] in ("no", "error:"):
        raise RustupError("no default toolchain is configured (`rustup default stable`)")
    return answer[0]
