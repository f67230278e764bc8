"""A real large workspace for the benchmarks: burn_p2p's manifests and lockfile, materialised.

`benchmarks/workspaces/burn_p2p/` holds the 28 members' manifests, the root manifest and the
lockfile of aberration-technology/burn_p2p at 8d289c995ebf; `materialise` copies them into a
folder and writes an empty stub for each target cargo must find, so `cargo metadata` and
featcheck see the workspace as they would in the real checkout.
"""

from __future__ import annotations

import shutil
from pathlib import Path

COPY = Path(__file__).resolve().parent / "workspaces" / "burn_p2p"


def materialise(destination: Path) -> Path:
    """The workspace in `destination`, with a stub for every target; returns `destination`."""
    shutil.copytree(COPY, destination, ignore=shutil.ignore_patterns("README.md", "targets.txt"))
    for manifest in destination.glob("*/*/Cargo.toml"):
        _stub(manifest.parent / "src" / "lib.rs", "")
    for manifest in destination.glob("xtask/Cargo.toml"):
        _stub(manifest.parent / "src" / "lib.rs", "")
    for target in (COPY / "targets.txt").read_text().split():
        _stub(destination / target, "fn main() {}\n")
    return destination


def _stub(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
