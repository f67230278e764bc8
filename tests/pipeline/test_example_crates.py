"""The example crates of the published measurement: four builds of one program."""

from __future__ import annotations

import tomlkit
from support import CRATES


def test_the_four_example_crates_share_one_program() -> None:
    """One src/main.rs, in pitb-exec-cpu; the other three build it under their own name."""
    crates = sorted(CRATES.glob("pitb-exec-cpu*/Cargo.toml"))
    assert len(crates) == 4
    assert sorted(CRATES.glob("pitb-exec-cpu*/src/main.rs")) == [
        CRATES / "pitb-exec-cpu" / "src" / "main.rs"
    ]
    for manifest in crates:
        if manifest.parent.name != "pitb-exec-cpu":
            bins = tomlkit.parse(manifest.read_text()).unwrap()["bin"]
            assert bins == [{"name": manifest.parent.name, "path": "../pitb-exec-cpu/src/main.rs"}]


def test_each_example_crate_is_standalone_with_its_lockfile() -> None:
    for crate in CRATES.glob("pitb-exec-cpu*"):
        assert (crate / "Cargo.lock").is_file()
        assert 'burn = { version = "=0.22.1"' in (crate / "Cargo.toml").read_text()
