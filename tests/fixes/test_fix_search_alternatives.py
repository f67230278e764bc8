"""A report that shows each finding's fix alone (text without `-v`) gets the fix a report listing
the alternatives (JSON, `-v`) gets, with fewer what-if builds: a candidate that cannot come
before the best one found is not resolved."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from cli_in_process import run_in_process
from support import WORKSPACES

from featcheck.resolution.session import TargetSession


def test_the_text_report_gets_the_json_reports_fix_from_fewer_builds(
    offline_cargo_for: Callable[..., Path], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # The fix adds a feature to flate2's line; removing its `default-features = false` and
    # depending on crc32fast directly clear the finding too, and rank after it. Real cargo each
    # time (not `remembered_cargo`): only an answer cargo kept is audited ahead of its answer.
    project = WORKSPACES / "flate2-without-runtime-detection"
    offline_cargo_for(project)
    builds = 0
    graph = TargetSession.graph

    def counting_graph(session: TargetSession, *args: Any) -> Any:
        nonlocal builds
        builds += 1
        return graph(session, *args)

    monkeypatch.setattr(TargetSession, "graph", counting_graph)

    def audit(cache: str, *flags: str) -> tuple[str, int]:
        nonlocal builds
        builds = 0
        # The audit ahead of cargo's answer reads the answer kept in this cache by the last run.
        monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / cache))
        result = run_in_process(str(project), "--root", str(project), *flags)
        assert result.returncode == 0, result.stderr
        return result.stdout, builds

    text, alone = audit("text")
    report, listing = audit("json", "--format", "json")
    verbose, _ = audit("verbose", "-v")
    (finding,) = json.loads(report)["findings"]
    (edit,) = finding["fix"]["edits"]
    assert edit["action"] == "add-features"
    assert f"= fix: {finding['fix']['description']} ({edit['file']}:{edit['line']});" in text
    assert len(finding["alternatives"]) == 2
    assert verbose.count("= or: ") == 2
    assert alone < listing, (alone, listing)
    # Audited ahead over the text run's kept answer, the JSON report still lists them all.
    assert audit("text", "--format", "json")[0] == report
