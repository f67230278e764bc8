"""Several members' findings that one manifest line fixes share the work of the fix search.

A candidate edit's what-if build of each member is the same whichever member's finding asked
for it: it is resolved once per build. Most candidates clear the finding; the rules then run
again only over builds where the crate still lacks the feature (a look at the crate's own
nodes says the rest), not over each candidate's whole new graph.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from cli_in_process import run_in_process
from support import WORKSPACES

import featcheck.stages.place
from featcheck.resolution.session import TargetSession
from featcheck.rules import BuildView, Rule
from featcheck.workspace.model import PackageRef

pytestmark = pytest.mark.usefixtures("remembered_cargo")

MEMBERS = ["api", "cli", "core-lib"]


def test_members_that_share_a_line_share_its_verdicts(
    offline_cargo_for: Callable[..., Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    project = WORKSPACES / "shape-i-library-owns-the-cut"
    offline_cargo_for(project)
    resolved: Counter[tuple[int, int]] = Counter()
    graph = TargetSession.graph

    def counting_graph(session: TargetSession, member: int, *args: Any) -> Any:
        resolved[(id(session), member)] += 1
        return graph(session, member, *args)

    rerun_over: list[BuildView] = []
    flags = featcheck.stages.place.flags

    def recording_flags(
        rule: Rule, view: BuildView, package: PackageRef, excused: frozenset[str]
    ) -> bool:
        rerun_over.append(view)
        return flags(rule, view, package, excused)

    monkeypatch.setattr(TargetSession, "graph", counting_graph)
    monkeypatch.setattr(featcheck.stages.place, "flags", recording_flags)
    result = run_in_process(str(project), "--format", "json", "--root", str(project))
    report: dict[str, Any] = json.loads(result.stdout)

    # Each member's fix and alternatives, as the search made them for each finding alone.
    assert {f["member"]: _fixes(f) for f in report["findings"]} == {
        member: [
            (True, 9, "core/Cargo.toml", "add-dependency", "burn-ndarray"),
            (False, None, "core/Cargo.toml", "remove-default-features", "burn"),
            *(
                []
                if member == "core-lib"
                else [(False, None, f"{member}/Cargo.toml", "add-dependency", "burn-ndarray")]
            ),
        ]
        for member in MEMBERS
    }
    # The library's edit is resolved once for each member's build, not once per finding.
    assert resolved and max(resolved.values()) == 1, resolved
    # The rules run again only where the crate is still built without the feature.
    delivered = [view for view in rerun_over if not _lacks_threads(view)]
    assert not delivered, f"{len(delivered)} of {len(rerun_over)} builds had it"


def _fixes(finding: dict[str, Any]) -> list[tuple[object, ...]]:
    """(confirmed, packages added, file, action, dependency) of the fix, then each alternative."""
    return [
        (
            fix["confirmed"],
            fix["added_packages"],
            edit["file"],
            edit["action"],
            edit["declaration"][1],
        )
        for fix in [finding["fix"], *finding["alternatives"]]
        for edit in fix["edits"]
    ]


def _lacks_threads(view: BuildView) -> bool:
    return any(
        n.name == "burn-ndarray" and "multi-threads" not in n.features for n in view.graph.nodes()
    )
