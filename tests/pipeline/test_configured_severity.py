"""A rule's severity as the project configures it, per member: the finding is made with it."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

from cli_in_process import run_in_process
from support import WORKSPACES


def _severities(project: Path) -> dict[str, str]:
    result = run_in_process(str(project), "--format", "json", "--root", str(project))
    assert result.returncode in (0, 1), result.stderr
    return {f["member"]: f["severity"] for f in json.loads(result.stdout)["findings"]}


def test_each_member_gets_its_configured_severity(
    tmp_path: Path, offline_cargo_for: Callable[..., Path]
) -> None:
    project = tmp_path / "lib-chain"
    shutil.copytree(WORKSPACES / "lib-chain", project, ignore=shutil.ignore_patterns("target"))
    offline_cargo_for(project)
    # As shipped: the binary's finding is an error, the library's (built alone) is info.
    assert _severities(project) == {"cli": "error", "model": "info"}
    # The workspace says warning; the library says error for itself, which wins over the
    # `info` a library's finding gets.
    with (project / "Cargo.toml").open("a") as manifest:
        manifest.write('\n[workspace.metadata.featcheck]\nseverity = { FC001 = "warning" }\n')
    with (project / "model" / "Cargo.toml").open("a") as manifest:
        manifest.write('\n[package.metadata.featcheck]\nseverity = { FC001 = "error" }\n')
    assert _severities(project) == {"cli": "warning", "model": "error"}
