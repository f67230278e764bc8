"""What every benchmark here runs over: an offline CARGO_HOME on the stub registry.

fixtures/registry holds the real manifests of every crate the fixtures need, with empty sources,
so cargo and featcheck resolve the true feature graphs without the network, and the numbers do
not depend on the registry's latency.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
REGISTRY = REPO / "fixtures" / "registry"


def offline_environment(home: Path, *, unpacked: bool = False) -> dict[str, str]:
    """Write an offline CARGO_HOME over the stub registry and return the environment to run
    cargo and featcheck in. With `unpacked`, the registry also appears where `--no-exec` reads
    downloaded crates (`registry/src/<index>/NAME-VERSION`), as on a machine that built once."""
    home.mkdir(parents=True, exist_ok=True)
    # A copy in the home, as `cargo vendor` sources on a user's machine lie outside the project
    # audited: featcheck distrusts (and so never caches) what lies inside the checkout, and this
    # repository is the checkout of the example crates.
    stub = home / "stub-registry"
    if not stub.exists():
        shutil.copytree(REGISTRY, stub, symlinks=True)
    (home / "config.toml").write_text(
        '[source.crates-io]\nreplace-with = "stub"\n'
        f"[source.stub]\ndirectory = {json.dumps(stub.as_posix())}\n"
        "[net]\noffline = true\n"
    )
    if unpacked:
        source = home / "registry" / "src"
        source.mkdir(parents=True, exist_ok=True)
        (source / "index.crates.io-1949cf8c6b5b557f").symlink_to(stub, target_is_directory=True)
    environment = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith("GITHUB_") and key not in {"RUSTC", "RUSTC_WRAPPER"}
    }
    environment.update(
        CARGO_HOME=str(home),
        RUSTUP_HOME=os.environ.get("RUSTUP_HOME") or str(Path.home() / ".rustup"),
        CARGO_TERM_COLOR="never",
        NO_COLOR="1",
    )
    return environment


def write_workspace(
    directory: Path, root_manifest: str, members: dict[str, tuple[str, str]], env: dict[str, str]
) -> Path:
    """Write a workspace (`members`: name -> (Cargo.toml, `main.rs` or `lib.rs`)) and its
    lockfile, resolved offline."""
    directory.mkdir(parents=True)
    (directory / "Cargo.toml").write_text(root_manifest)
    for name, (manifest, source) in members.items():
        (directory / name / "src").mkdir(parents=True)
        (directory / name / "Cargo.toml").write_text(manifest)
        (directory / name / "src" / source).write_text(
            "fn main() {}\n" if source == "main.rs" else ""
        )
    subprocess.run(
        ["cargo", "generate-lockfile", "--offline"],
        cwd=directory,
        env=env,
        check=True,
        capture_output=True,
    )
    return directory
