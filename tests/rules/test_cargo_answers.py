"""The rule fixtures' recorded cargo answers (fixtures/rules/<code>/cargo/, which
test_rule_fixtures.py replays) are what real cargo answers today: each case audited with real
cargo over the synthetic registry, in process as the snapshot test does, asks the same questions,
gets the same answers and prints its snapshots. Re-record with scripts/record_cargo_answers.py.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from cargo_answers import Recording
from rule_fixtures import (
    OUTPUTS,
    case_id,
    recorded_outputs,
    recording_path,
    rule_cases,
    snapshot_path,
)


def _comparable(recording: Recording, host: str | None) -> dict[str, Any]:
    """The recording as compared: the host's answers only on a machine of the recorded host
    (the snapshots pin their targets, so any host's cfg prints them)."""
    document = recording.document()
    if host != recording.host:
        document.pop("host")
        document.pop("host_cfg")
    return document


@pytest.mark.parametrize("case", rule_cases(), ids=case_id)
def test_recorded_answers_are_real_cargos(
    case: Path, tmp_path: Path, synthetic_registry: Path, synthetic_cargo: Path
) -> None:
    fresh, outputs = recorded_outputs(case, tmp_path, synthetic_registry)
    kept = Recording.load(recording_path(case))
    stale = "recorded answers differ from cargo's: run scripts/record_cargo_answers.py"
    assert _comparable(kept, fresh.host) == _comparable(fresh, fresh.host), stale
    for kind in OUTPUTS:
        assert outputs[kind] == snapshot_path(case, kind).read_text(encoding="utf-8"), kind
