#!/usr/bin/env python3
"""Record what real cargo and rustc answer for each rule fixture, into
``fixtures/rules/<code>/cargo/<case>.json``.

The rule fixtures' snapshot tests (tests/rules/test_rule_fixtures.py) replay these answers in
process instead of starting cargo four times per case; tests/rules/test_cargo_answers.py checks
with real cargo that they are still what cargo answers. Re-record after changing a fixture's
files, fixtures/rules/registry.toml or the Rust toolchain (a replayed audit of a changed fixture
stops with "no cargo metadata recorded ...: re-record it").

Each case is audited once as the snapshot test does, with real cargo offline over the synthetic
registry (tests/synthetic_registry.py), and every answer the audit asked for is written down. The
printed outputs are compared with the case's snapshots; a difference is reported (and the
recording still written): the snapshots are the tests' to judge.

Usage:
    .venv/bin/python scripts/record_cargo_answers.py [fc001/bad ...]
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

TESTS = Path(__file__).resolve().parent.parent / "tests"
sys.path.insert(0, str(TESTS))

from rule_fixtures import (  # noqa: E402
    OUTPUTS,
    case_id,
    recorded_outputs,
    recording_path,
    rule_cases,
    snapshot_path,
)
from support import cargo_environment  # noqa: E402
from synthetic_registry import write_cargo_home, write_registry  # noqa: E402


def main(selected: list[str]) -> int:
    cases = [case for case in rule_cases() if not selected or case_id(case) in selected]
    if selected and len(cases) != len(selected):
        print(f"unknown case among {selected}", file=sys.stderr)
        return 2
    differing = 0
    with tempfile.TemporaryDirectory(prefix="record-cargo-") as scratch:
        base = Path(scratch)
        registry = write_registry(base / "registry")
        home = write_cargo_home(base / "cargo-home", registry)
        # A user cache of its own: no answer kept by an earlier audit stands in for cargo's.
        os.environ.update(cargo_environment(home), XDG_CACHE_HOME=str(base / "cache"))
        for case in cases:
            recording, outputs = recorded_outputs(case, base / "runs" / case_id(case), registry)
            recording.save(recording_path(case))
            for kind in OUTPUTS:
                snapshot = snapshot_path(case, kind)
                if not snapshot.exists() or snapshot.read_text(encoding="utf-8") != outputs[kind]:
                    differing += 1
                    print(f"{case_id(case)}: differs from {snapshot.name}", file=sys.stderr)
            print(f"recorded {case_id(case)}")
    return 1 if differing else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
