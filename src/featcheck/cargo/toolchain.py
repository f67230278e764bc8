"""Which cargo and rustc an audit runs, chosen without running anything from the checkout.

Running `cargo` in someone else's checkout can run their programs before cargo reads a single
manifest: the rustup proxy obeys the checkout's `rust-toolchain.toml` (a `path` toolchain is
the checkout's own `bin/cargo`). featcheck therefore reads the toolchain file itself (it is
data: TOML, or one line naming a channel), refuses a `path` toolchain unless the user trusts the
checkout, asks rustup for the real binaries of the named toolchain from a neutral directory,
and runs those binaries directly. Without rustup, the cargo and rustc on PATH are used.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import NamedTuple

from featcheck.boundary import (
    TrustContext,
    refuse_checkout_program,
    refuse_untrusted_rustup_home,
)
from featcheck.cargo.argv_gate import TOOLCHAIN, GateError
from featcheck.cargo.rustup import (
    RustupError,
    RustupSettings,
    is_rustup_proxy,
    rustup_binaries,
    rustup_default,
    rustup_home,
    rustup_settings,
)
from featcheck.cargo.toolchain_file import ToolchainRequest, find_toolchain_request
from featcheck.errors import FeatcheckError

if sys.platform == "win32":
    import shutil


# A NamedTuple, not a dataclass: made before cargo starts (see audit.py).
class Toolchain(NamedTuple):
    """The real binaries an audit runs."""

    cargo: Path
    rustc: Path
    rustup_name: str | None
    """The rustup toolchain to pin with RUSTUP_TOOLCHAIN; None without rustup."""
    why: str


def which(name: str) -> str | None:
    """`shutil.which(name)`, without importing shutil before cargo starts (it brings the zlib,
    bz2 and lzma modules: 2 ms of every audit). The same search: PATH (else the system's
    default), each directory once, the first executable file."""
    if sys.platform == "win32":
        return shutil.which(name)
    path = os.environ.get("PATH")
    if path is None:
        path = os.confstr("CS_PATH") or os.defpath
    seen: set[str] = set()
    for directory in path.split(os.pathsep):
        if directory in seen:
            continue
        seen.add(directory)
        candidate = os.path.join(directory, name)
        if os.access(candidate, os.X_OK) and not os.path.isdir(candidate):
            return candidate
    return None


def resolve_toolchain(workdir: Path, timeout: float, *, trust: TrustContext) -> Toolchain:
    """The real cargo and rustc for auditing `workdir`, without running anything it supplies.

    rustup, when asked, gets at most `timeout` seconds per call (--timeout). No program of the
    checkout or of a tree made from it (`trust`) is run, whether PATH finds it there or it is a
    toolchain of a rustup home that lies there, and the toolchain files may not link out of
    the tree.

    Raises FeatcheckError for a `path` toolchain (the checkout's own binaries), a program of
    the checkout, an invalid toolchain file, or a toolchain that is not installed.
    """
    cargo = which("cargo")
    if cargo is None:
        raise FeatcheckError(
            "cargo not found on PATH: install Rust (https://rustup.rs) or add it to PATH"
        )
    refuse_checkout_program(cargo, trust, "cargo")
    rustup = which("rustup")
    if not is_rustup_proxy(cargo, rustup):
        toolchain = _plain_toolchain(Path(cargo))
        refuse_checkout_program(toolchain.rustc, trust, "rustc")
        return toolchain
    if rustup is None:
        raise FeatcheckError(
            f"{cargo} is a rustup proxy but rustup is not on PATH; add it, "
            "or put the toolchain's own bin directory first on PATH"
        )
    refuse_checkout_program(rustup, trust, "rustup")
    refuse_untrusted_rustup_home(os.environ, trust)
    request, settings = _requested_toolchain(workdir, trust.root)
    if request.path is not None:
        raise FeatcheckError(
            f"toolchain `path = {json.dumps(request.path)}` would make rustup run cargo and "
            "rustc from the checkout itself; featcheck runs no code from the project "
            "(pass --trust-checkout if you trust it)",
            path=request.origin,
            line=request.line,
        )
    return _rustup_toolchain(rustup, request, settings, trust, timeout)


def _requested_toolchain(workdir: Path, root: Path) -> tuple[ToolchainRequest, RustupSettings]:
    """The toolchain RUSTUP_TOOLCHAIN names, else the one rustup finds for `workdir`; with
    rustup's settings where they were read."""
    pinned = os.environ.get("RUSTUP_TOOLCHAIN")
    if not pinned:
        settings = rustup_settings()
        return find_toolchain_request(workdir, settings.overrides, root), settings
    try:
        request = ToolchainRequest(TOOLCHAIN.check(pinned), why="RUSTUP_TOOLCHAIN")
    except GateError as error:
        raise FeatcheckError(
            f"RUSTUP_TOOLCHAIN: {error}; featcheck asks rustup for a named toolchain "
            "(or put the toolchain's bin directory first on PATH)"
        ) from None
    return request, RustupSettings({}, None)


def _rustup_toolchain(
    rustup: str,
    request: ToolchainRequest,
    settings: RustupSettings,
    trust: TrustContext,
    timeout: float,
) -> Toolchain:
    """The real binaries of the toolchain `request` names (else rustup's default)."""
    home = str(rustup_home())
    try:
        # rustup's settings file records its default; asking rustup costs a process start.
        name = request.name or settings.default or rustup_default(rustup, home, trust, timeout)
        real_cargo, real_rustc = rustup_binaries(rustup, name, home, trust, timeout)
    except RustupError as error:
        message = f"rustup cannot provide the toolchain: {error}"
        if request.origin is None:
            message = f"rustup cannot provide the toolchain ({request.why}): {error}"
        if "not installed" in str(error) and request.name:
            message += f" (run `rustup toolchain install {request.name}`)"
        raise FeatcheckError(message, path=request.origin, line=request.line) from None
    except GateError as error:  # rustup's recorded default, which no one else has checked
        raise FeatcheckError(
            f"rustup's default toolchain: {error} (`rustup default stable` sets a plain one)"
        ) from None
    return Toolchain(real_cargo, real_rustc, name, request.why)


def _plain_toolchain(cargo: Path) -> Toolchain:
    """No rustup: the cargo on PATH, and the rustc next to it (else the one on PATH)."""
    sibling = cargo.parent / ("rustc" + (".exe" if cargo.suffix == ".exe" else ""))
    rustc: str | None = str(sibling) if os.access(sibling, os.X_OK) else which("rustc")
    if rustc is None:
        raise FeatcheckError(
            "rustc not found on PATH: install Rust (https://rustup.rs) or add it to PATH"
        )
    return Toolchain(cargo, Path(rustc), None, "cargo and rustc on PATH")
