"""The example crates of the published measurement: four builds of one program."""

from __future__ import annotations

from conftest import CRATES


def test_the_four_example_crates_share_one_program() -> None:
    crates = sorted(CRATES.glob("pitb-exec-cpu*/src/main.rs"))
    assert len(crates) == 4
    assert len({path.read_bytes() for path in crates}) == 1, "the example crates' main.rs drifted"


def test_each_example_crate_is_standalone_with_its_lockfile() -> None:
    for crate in CRATES.glob("pitb-exec-cpu*"):
        assert (crate / "Cargo.lock").is_file()
        assert 'burn = { version = "=0.22.1"' in (crate / "Cargo.toml").read_text()
