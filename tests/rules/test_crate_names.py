"""Crate names as crates.io compares them: `-` and `_` are one character.

`parking_lot` and `aho-corasick` are spelled so by cargo; a rule, a suppression or `-p` may
write either spelling and means the same crate, and featcheck prints cargo's own. The project
resolves against a small registry of its own (both crates, as their real feature tables have
them, cut to what the rules read).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from cli_in_process import run_in_process
from synthetic_registry import use_registry

pytestmark = pytest.mark.usefixtures("remembered_cargo")

REGISTRY = {
    "parking_lot": {"0.12.5": {"features": {"default": [], "hardware-lock-elision": []}}},
    "aho-corasick": {
        "1.1.5": {"features": {"default": ["std", "perf-literal"], "std": [], "perf-literal": []}}
    },
}

MANIFEST = """\
[package]
name = "my-service"
version = "0.1.0"
edition = "2021"

[workspace]

[dependencies]
parking_lot = { version = "0.12", default-features = false }
aho-corasick = { version = "1", default-features = false, features = ["std"] }
"""
PARKING_LOT_LINE, AHO_CORASICK_LINE = 9, 10

# `parking_lot` as cargo spells it; `aho_corasick` in the other spelling.
RULES = """\
[[rule]]
code = "ACME001"
name = "parking-lot-without-elision"
severity = "error"
crates = ["parking_lot"]
feature = "hardware-lock-elision"
used-when = { direct-dependency = true }

[[rule]]
code = "ACME002"
name = "aho-corasick-without-literal"
severity = "error"
crates = ["aho_corasick"]
feature = "perf-literal"
used-when = { reachable = { avoiding = ["some_other-crate"] } }
"""


@pytest.fixture
def names_cargo(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Path]:
    """Every cargo featcheck starts resolves against this test's registry, offline."""
    yield use_registry(tmp_path_factory.mktemp("names-registry"), REGISTRY, monkeypatch)


def _project(tmp_path: Path, config: str = RULES) -> Path:
    project = tmp_path / "service"
    (project / "src").mkdir(parents=True)
    (project / "src" / "main.rs").write_text("fn main() {}\n")
    (project / "Cargo.toml").write_text(MANIFEST)
    (project / "featcheck.toml").write_text(config)
    return project


# Built-in rules kept out of these user-rule checks: FC011, as before, and FC020,
# the built-in twin of ACME002 (aho-corasick without `perf-literal` for a direct user).
BUILTIN = ("--ignore", "FC011,FC020")


def _findings(project: Path, *args: str) -> tuple[int, list[tuple[str, str, int]]]:
    done = run_in_process(str(project), "--format", "json", *BUILTIN, *args)
    assert done.returncode in (0, 1), done.stderr
    found = json.loads(done.stdout)["findings"]
    return done.returncode, [(f["code"], f["crate"], f["location"]["line"]) for f in found]


@pytest.mark.cargo
def test_user_rules_fire_whichever_spelling_they_write(names_cargo: Path, tmp_path: Path) -> None:
    project = _project(tmp_path)
    assert _findings(project) == (
        1,
        [
            ("ACME001", "parking_lot", PARKING_LOT_LINE),
            ("ACME002", "aho-corasick", AHO_CORASICK_LINE),
        ],
    )
    text = run_in_process(str(project), *BUILTIN)
    assert "parking_lot 0.12.5 is built without `hardware-lock-elision`" in text.stdout
    assert "aho-corasick 1.1.5 is built without `perf-literal`" in text.stdout
    # The other spelling of parking_lot fires too.
    swapped = RULES.replace('["parking_lot"]', '["parking-lot"]')
    assert _findings(_project(tmp_path / "b", swapped))[1][0] == (
        "ACME001",
        "parking_lot",
        PARKING_LOT_LINE,
    )


def test_rules_are_listed_with_the_names_they_write(tmp_path: Path) -> None:
    """A rule without a summary gets one from its crates, spelled as the rule spells them."""
    project = _project(tmp_path)
    listed = run_in_process("rules", str(project))
    assert listed.returncode == 0, listed.stderr
    assert "parking_lot is built without `hardware-lock-elision`" in listed.stdout
    assert "parking-lot is built" not in listed.stdout
    shown = run_in_process("rule", "ACME001", str(project))
    assert "parking_lot is built without `hardware-lock-elision`" in shown.stdout


@pytest.mark.cargo
@pytest.mark.parametrize("written", ["parking-lot", "parking_lot", "Parking_Lot"])
def test_a_suppression_in_either_spelling_suppresses(
    names_cargo: Path, tmp_path: Path, written: str
) -> None:
    allow = f'\n[[allow]]\ncode = "ACME001"\ncrate = "{written}"\nreason = "no TSX here"\n'
    assert _findings(_project(tmp_path, RULES + allow)) == (
        1,
        [("ACME002", "aho-corasick", AHO_CORASICK_LINE)],
    )


@pytest.mark.cargo
def test_a_member_is_chosen_in_either_spelling(names_cargo: Path, tmp_path: Path) -> None:
    """`-p my_service` audits `my-service` (plain cargo refuses it with a hint)."""
    project = _project(tmp_path)
    code, found = _findings(project, "-p", "my_service")
    assert code == 1 and [f[0] for f in found] == ["ACME001", "ACME002"]
    unknown = run_in_process(str(project), "-p", "my-servic")
    assert unknown.returncode == 2
    assert "no workspace member named my-servic (members: my-service)" in unknown.stderr
