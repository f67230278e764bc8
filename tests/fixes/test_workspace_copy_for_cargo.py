"""The copy a fix is resolved on holds what `cargo metadata` reads and nothing else: real cargo
lists the same packages, targets and features there as in the workspace, on a layout that uses
every way cargo infers a target, while the sources, data and documents cargo never reads stay
behind (a checkout's thousands of files took seconds to write before cargo could start)."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from featcheck.fixes.workspace_copy import WorkspaceCopy

pytestmark = pytest.mark.cargo

FILES = {
    "Cargo.toml": '[workspace]\nmembers = ["crates/*"]\nexclude = ["crates/skipped"]\n',
    ".cargo/config.toml": "[net]\noffline = true\n",
    ".cargo/flags": "-Cdebuginfo=0\n",
    "crates/a/Cargo.toml": (
        '[package]\nname = "a"\nversion = "0.1.0"\nedition = "2021"\nreadme = "README.md"\n\n'
        '[features]\nextra = []\n\n[[bin]]\nname = "named"\n\n'
        '[[example]]\nname = "told"\npath = "elsewhere/told.rs"\n'
    ),
    "crates/a/README.md": "# a\n",
    "crates/a/build.rs": "fn main() {}\n",
    "crates/a/src/lib.rs": "mod util;\n",
    "crates/a/src/util/mod.rs": "",
    "crates/a/src/bin/tool.rs": "fn main() {}\n",
    "crates/a/src/bin/named.rs": "fn main() {}\n",
    "crates/a/src/bin/multi/main.rs": "fn main() {}\n",
    "crates/a/src/bin/multi/part.rs": "",
    "crates/a/examples/ex.rs": "fn main() {}\n",
    "crates/a/examples/big/main.rs": "fn main() {}\n",
    "crates/a/tests/t.rs": "",
    "crates/a/tests/common/mod.rs": "",
    "crates/a/benches/b.rs": "fn main() {}\n",
    "crates/a/data/weights.bin": "\0" * 4096,
    "crates/b/Cargo.toml": (
        '[package]\nname = "b"\nversion = "0.1.0"\nedition = "2021"\n\n'
        '[dependencies]\na = { path = "../a" }\n'
    ),
    "crates/b/src/main.rs": "fn main() {}\n",
    "crates/skipped/notes.txt": "not a member\n",
    "docs/guide.md": "# guide\n",
}


def _metadata(workspace: Path) -> list[dict[str, Any]]:
    output = subprocess.run(
        ["cargo", "metadata", "--format-version", "1", "--no-deps", "--offline"],
        cwd=workspace,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    packages = json.loads(output)["packages"]
    return [
        {
            "name": package["name"],
            "features": package["features"],
            "targets": sorted(
                (target["name"], target["kind"], os.path.relpath(target["src_path"], workspace))
                for target in package["targets"]
            ),
        }
        for package in sorted(packages, key=lambda p: p["name"])
    ]


def test_cargo_reads_the_same_workspace_in_the_copy(tmp_path: Path) -> None:
    workspace = tmp_path / "workspace"
    for name, text in FILES.items():
        (workspace / name).parent.mkdir(parents=True, exist_ok=True)
        (workspace / name).write_text(text)
    expected = _metadata(workspace)
    (a,) = [p for p in expected if p["name"] == "a"]
    assert len(a["targets"]) == 10  # lib, build script, 3 bins, 3 examples, a test, a bench

    with contextlib.closing(WorkspaceCopy(workspace, for_cargo=True)) as copy:
        assert _metadata(copy.path) == expected
        copied = {
            path.relative_to(copy.path).as_posix()
            for path in copy.path.rglob("*")
            if path.is_file()
        }
        assert not (copy.path / "crates" / "skipped").exists()  # holds nothing cargo reads
    assert ".cargo/flags" in copied and "crates/a/src/bin/multi/main.rs" in copied
    left = {"src/util/mod.rs", "src/bin/multi/part.rs", "tests/common/mod.rs", "README.md"}
    assert not {f"crates/a/{name}" for name in left} & copied
    assert not {"crates/a/data/weights.bin", "docs/guide.md"} & copied


def test_a_copy_for_an_audit_holds_the_whole_workspace(tmp_path: Path) -> None:
    """`--fix` audits its copy again (its baseline and settings files are read there)."""
    workspace = tmp_path / "workspace"
    for name, text in FILES.items():
        (workspace / name).parent.mkdir(parents=True, exist_ok=True)
        (workspace / name).write_text(text)
    with contextlib.closing(WorkspaceCopy(workspace)) as copy:
        assert (copy.path / "docs" / "guide.md").read_text() == FILES["docs/guide.md"]
        assert (copy.path / "crates" / "a" / "src" / "util" / "mod.rs").is_file()


NESTED = {
    "Cargo.toml": (
        '[workspace]\nmembers = ["crates/sdk"]\nexclude = ["crates/inner"]\n\n'
        '[workspace.dependencies]\nextra = { path = "crates/extra" }\n'
    ),
    "crates/extra/Cargo.toml": '[package]\nname = "extra"\nversion = "0.1.0"\nedition = "2021"\n',
    "crates/extra/src/lib.rs": "",
    "crates/sdk/Cargo.toml": (
        '[package]\nname = "sdk"\nversion = "0.1.0"\nedition = "2021"\n\n'
        "[dependencies]\nextra = { workspace = true }\n"
    ),
    "crates/sdk/src/lib.rs": "",
    "crates/inner/Cargo.toml": '[workspace]\nmembers = ["app"]\n',
    "crates/inner/app/Cargo.toml": (
        '[package]\nname = "app"\nversion = "0.1.0"\nedition = "2021"\n\n'
        '[dependencies]\nsdk = { path = "../../sdk" }\n'
    ),
    "crates/inner/app/src/main.rs": "fn main() {}\n",
}


def test_a_package_beside_the_workspace_finds_the_workspace_it_inherits_from(
    tmp_path: Path,
) -> None:
    # crates/inner is a workspace of its own; its app uses ../../sdk, which inherits from the
    # repository's workspace above both: the copy holds that root too, or cargo finds none.
    checkout = tmp_path / "checkout"
    for name, text in NESTED.items():
        (checkout / name).parent.mkdir(parents=True, exist_ok=True)
        (checkout / name).write_text(text)
    inner = checkout / "crates" / "inner"
    beside = [checkout / "crates" / "sdk", checkout / "crates" / "extra"]
    with contextlib.closing(WorkspaceCopy(inner, beside, checkout, for_cargo=True)) as copy:
        assert (copy.tree / "Cargo.toml").read_text() == NESTED["Cargo.toml"]
        resolved = subprocess.run(
            ["cargo", "metadata", "--format-version", "1", "--offline"],
            cwd=copy.path,
            capture_output=True,
            text=True,
        )
    assert resolved.returncode == 0, resolved.stderr
    names = sorted(p["name"] for p in json.loads(resolved.stdout)["packages"])
    assert names == ["app", "extra", "sdk"]


@pytest.mark.parametrize("for_cargo", [True, False], ids=["for-cargo", "for-an-audit"])
def test_special_and_huge_files_of_a_checkout_are_not_copied_as_they_are(
    tmp_path: Path, for_cargo: bool
) -> None:
    # A FIFO made the copy fail with a traceback; a sparse 3 GiB file under `.cargo` (no space
    # in the checkout) became 3 GiB written; a cargo home kept in the checkout (a CI cache) was
    # copied whole.
    workspace = tmp_path / "workspace"
    for name, text in FILES.items():
        (workspace / name).parent.mkdir(parents=True, exist_ok=True)
        (workspace / name).write_text(text)
    os.mkfifo(workspace / ".cargo" / "fifo")
    (workspace / "crates" / "b" / "src" / "main.rs").unlink()
    os.mkfifo(workspace / "crates" / "b" / "src" / "main.rs")
    with (workspace / ".cargo" / "blob.bin").open("wb") as blob:
        blob.truncate(3 << 30)
    with (workspace / "crates" / "a" / "data" / "weights.bin").open("r+b") as weights:
        weights.truncate(1 << 30)  # a model's weights: cargo and featcheck never read them
    cached = workspace / ".cargo" / "registry" / "src" / "index" / "memchr-2.8.0"
    cached.mkdir(parents=True)
    (cached / "Cargo.toml").write_text("[package]\n")
    expected = _metadata(workspace)
    with contextlib.closing(WorkspaceCopy(workspace, for_cargo=for_cargo)) as copy:
        assert _metadata(copy.path) == expected
        main = copy.path / "crates" / "b" / "src" / "main.rs"
        assert main.is_file() and main.read_bytes() == b""
        assert (copy.path / ".cargo" / "fifo").read_bytes() == b""
        assert not (copy.path / ".cargo" / "blob.bin").exists()
        assert not (copy.path / ".cargo" / "registry").exists()
        assert (copy.path / ".cargo" / "config.toml").read_text() == FILES[".cargo/config.toml"]
        weights = copy.path / "crates" / "a" / "data" / "weights.bin"
        assert not weights.exists() or weights.stat().st_size == 0
