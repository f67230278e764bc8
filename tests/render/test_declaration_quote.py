"""The quoted manifest line names the crate: a finding on `default-features = false` inside a
`[dependencies.burn]` table quotes the table's header above it."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from cli_in_process import run_in_process
from support import WORKSPACES

pytestmark = pytest.mark.usefixtures("remembered_cargo")


def test_a_table_declaration_is_quoted_with_its_header(
    tmp_path: Path, offline_cargo_for: Callable[..., Path]
) -> None:
    offline_cargo_for(WORKSPACES / "table-form")
    project = tmp_path / "table-form"
    shutil.copytree(WORKSPACES / "table-form", project)
    done = run_in_process(str(project), "--target", "x86_64-unknown-linux-gnu", columns=100)
    assert done.returncode == 1, done.stderr
    lines = done.stdout.splitlines()
    at = lines.index("  --> Cargo.toml:9:1")
    assert lines[at + 1 : at + 6] == [
        "    |",
        "  7 | [dependencies.burn]",
        "  ...",
        "  9 | default-features = false",
        "    | ^^^^^^^^^^^^^^^^^^^^^^^^",
    ]


def test_a_multi_line_inline_table_is_quoted_from_its_first_line(
    tmp_path: Path, offline_cargo_for: Callable[..., Path]
) -> None:
    offline_cargo_for(WORKSPACES / "table-form")
    project = tmp_path / "table-form"
    shutil.copytree(WORKSPACES / "table-form", project)
    manifest = project / "Cargo.toml"
    text = manifest.read_text()
    manifest.write_text(
        text[: text.index("[dependencies.burn]")]
        + "[dependencies]\n"
        + "burn = {\n"
        + '    version = "=0.22.1",\n'
        + "    default-features = false,\n"
        + '    features = ["std", "flex"],\n'
        + "}\n"
    )
    done = run_in_process(str(project), "--target", "x86_64-unknown-linux-gnu", columns=100)
    assert done.returncode == 1, done.stderr
    lines = done.stdout.splitlines()
    at = lines.index("  --> Cargo.toml:10:5")
    assert lines[at + 1 : at + 6] == [
        "     |",
        "   8 | burn = {",
        "  ...",
        "  10 |     default-features = false,",
        "     |     ^^^^^^^^^^^^^^^^^^^^^^^^",
    ]
