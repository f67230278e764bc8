"""cargo as the oracle of the differential tests: the CLI run as a user runs it, with each
build asked of `cargo tree -e normal -p MEMBER --target T` instead of featcheck's resolver.

No flag asks for that (a user gets featcheck's resolver, proven equal to cargo's by these
tests): the run sets `AuditOptions.resolver` before the command line is read."""

from __future__ import annotations

import os
import subprocess
import sys

from support import run_featcheck

_ASK_CARGO = """\
import functools, sys
import featcheck.cli.lazy as lazy
from featcheck.cli import main
from featcheck.options import AuditOptions, Resolver
lazy.audit_options = lambda: functools.partial(AuditOptions, resolver=Resolver.CARGO)
sys.argv[0] = "featcheck"
main()
"""


def run_featcheck_resolved_by(resolver: str, *args: str) -> subprocess.CompletedProcess[str]:
    """`run_featcheck(*args)` with every build resolved by `resolver`: "featcheck" (what a user
    runs) or "cargo" (cargo tree, the oracle)."""
    if resolver == "featcheck":
        return run_featcheck(*args)
    assert resolver == "cargo", resolver
    return subprocess.run(
        [sys.executable, "-c", _ASK_CARGO, *args],
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, "NO_COLOR": "1", "COLUMNS": "200"},
    )
