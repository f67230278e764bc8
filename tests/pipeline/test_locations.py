"""The manifest place of a finding, for every shape a dependency can be written in."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from cli_in_process import run_in_process
from support import CRATES

pytestmark = pytest.mark.usefixtures("remembered_cargo")

HEADER = '[package]\nname = "pitb-exec-cpu"\nversion = "0.1.0"\nedition = "2024"\n\n'
FEATURES = '["std", "flex", "autodiff", "optim"]'

SHAPES = {
    "inline": (
        f'[dependencies]\nburn = {{ version = "=0.22.1", default-features = false, '
        f"features = {FEATURES} }}\n",
        (7, 31, "default-features = false"),
    ),
    "table": (
        '# The model\'s backend.\n[dependencies.burn]\nversion = "=0.22.1"\n'
        "default-features = false  # keep the binary small\n"
        'features = [\n    "std",\n    "flex",  # CPU\n    # "rayon",\n    "autodiff",\n'
        '    "optim",\n]\n',
        (9, 1, "default-features = false"),
    ),
    "dotted": (
        '[dependencies]\nburn.version = "=0.22.1"\nburn.default-features = false\n'
        f"burn.features = {FEATURES}\n",
        (8, 6, "default-features = false"),
    ),
    "renamed": (
        '[dependencies]\nnn = { package = "burn", version = "=0.22.1", '
        f"default-features = false, features = {FEATURES} }}\n",
        (7, 47, "default-features = false"),
    ),
    "target-table": (
        "[target.'cfg(unix)'.dependencies]\n"
        f'burn = {{ version = "=0.22.1", default-features = false, features = {FEATURES} }}\n',
        (7, 31, "default-features = false"),
    ),
    "crlf-and-unicode": (
        "[dependencies] # modèle ünïcode\r\n"
        f'burn = {{ version = "=0.22.1", default-features = false, features = {FEATURES} }}\r\n',
        (7, 31, "default-features = false"),
    ),
}


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_location_points_at_the_declaration_that_cuts_the_defaults(
    shape: str, tmp_path: Path, offline_cargo_for: Callable[..., Path]
) -> None:
    offline_cargo_for(CRATES / "pitb-exec-cpu")
    body, (line, column, underlined) = SHAPES[shape]
    project = tmp_path / "project"
    shutil.copytree(CRATES / "pitb-exec-cpu", project, ignore=shutil.ignore_patterns("target"))
    (project / "Cargo.toml").write_bytes((HEADER + body).encode())
    result = run_in_process(str(project), "--format", "json")
    assert result.returncode == 1, result.stdout + result.stderr
    (finding,) = json.loads(result.stdout)["findings"]
    location = finding["location"]
    assert (location["file"], location["line"], location["column"]) == ("Cargo.toml", line, column)
    source_line = (HEADER + body).replace("\r\n", "\n").splitlines()[line - 1]
    start, end = location["column"] - 1, location["end_column"] - 1
    assert location["end_line"] == line
    assert source_line[start:end] == underlined

    text = run_in_process(str(project)).stdout
    assert f"--> Cargo.toml:{line}:{column}" in text
    assert f"{line} | {source_line}" in text
    assert " " * (column - 1) + "^" * len(underlined) in text
