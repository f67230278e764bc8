"""Tests that need nightly cargo: only it honours `resolver.feature-unification` (RFC 3692),
and only with the unstable flag. They are skipped, saying why, where no nightly is installed."""

from __future__ import annotations

import functools
import shutil
import subprocess

import pytest


@functools.cache
def nightly_missing() -> str | None:
    """Why `cargo +nightly` cannot run here, or None."""
    if shutil.which("rustup") is None:
        return "no rustup, so no `cargo +nightly`: only nightly cargo honours feature-unification"
    listed = subprocess.run(
        ["rustup", "toolchain", "list"], capture_output=True, text=True, check=False
    ).stdout
    if not any(line.startswith("nightly") for line in listed.splitlines()):
        return "no nightly toolchain installed (rustup toolchain install nightly --profile minimal)"
    return None


needs_nightly = pytest.mark.skipif(
    nightly_missing() is not None, reason=nightly_missing() or "nightly cargo is installed"
)
"""Skips a test where no nightly toolchain is installed, with the reason."""
