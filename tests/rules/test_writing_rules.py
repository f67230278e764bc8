"""docs/writing-rules.md, "Adding a built-in rule", followed step by step on copies: a copy of
the package gets one spec, a copy of the synthetic registry one crate, and a rule tree two
fixtures and their snapshots; the new rule fires on `bad` and not on `ok`.

The crate is `parking_lot`, spelled with `_` as cargo spells it: crates.io treats `-` and `_`
as one character, and a rule must find the crate whichever way a name is written.
"""

from __future__ import annotations

import compileall
import shutil
from pathlib import Path

import pytest
from rule_fixtures import (
    OUTPUTS,
    case_outputs,
    check_case,
    check_documented,
    findings_of,
    rule_cases,
    snapshot_path,
)
from snapshots import UPDATE_VARIABLE, assert_snapshot
from support import REPO
from synthetic_registry import REGISTRY_SPEC, write_cargo_home, write_registry

from featcheck.rules import builtin_rules
from featcheck.rules.load import parse_rule
from featcheck.toml_read import toml_data

SPEC = """\
code = "{code}"
name = "parking-lot-without-elision"
severity = "warning"
summary = "parking_lot is built without `hardware-lock-elision`"
crates = ["parking_lot"]
feature = "hardware-lock-elision"
consequence = "its locks take the slow path under contention"
used-when = {{ direct-dependency = true }}

[doc]
what = "Flags parking_lot built without `hardware-lock-elision` where a crate of yours uses it."
why = "A rule written for this test: the feature elides locks with TSX where the CPU has it."
example = 'parking_lot = {{ version = "0.12", features = [] }}'
fix = "Add `hardware-lock-elision` to the features of parking_lot."
fix-example = 'parking_lot = {{ version = "0.12", features = ["hardware-lock-elision"] }}'
fix-safety = "The feature changes no API: cargo unifies it into the one build of the crate."
ignore = "Where the locks are never contended, or the CPUs have no TSX. Say why in a suppression."
references = ["https://docs.rs/crate/parking_lot/latest/features"]
"""

REGISTRY_LINES = """
[parking_lot."0.12.5"]
features = { default = [], hardware-lock-elision = [], nightly = [] }
"""

MANIFEST = """\
[package]
name = "{name}"
version = "0.1.0"
edition = "2021"

[workspace]

[dependencies]
parking_lot = {{ version = "0.12", features = [{features}] }}
"""


def _next_code() -> str:
    return f"FC{max(int(rule.code[2:]) for rule in builtin_rules()) + 1:03d}"


@pytest.fixture
def package(tmp_path: Path) -> Path:
    """Step 1: a copy of the package with the new spec in its `builtin/`."""
    source = tmp_path / "src"
    ignore = shutil.ignore_patterns("__pycache__")
    shutil.copytree(REPO / "src" / "featcheck", source / "featcheck", ignore=ignore)
    code = _next_code()
    spec = SPEC.format(code=code)
    rule = parse_rule(toml_data(spec), builtin=True)
    check_documented(rule)
    builtin = source / "featcheck" / "rules" / "builtin"
    (builtin / f"{rule.code.lower()}-{rule.name}.toml").write_text(spec)
    # Compiled once, as `pip install` compiles a package (conftest.py does it for the real
    # one): each of the test's featcheck processes then loads it instead of compiling it again.
    compileall.compile_dir(source / "featcheck", quiet=1)
    return source


@pytest.fixture
def registry(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Step 2: the synthetic registry with the crate the fixtures need."""
    spec = toml_data(REGISTRY_SPEC.read_text(encoding="utf-8") + REGISTRY_LINES)
    base = tmp_path / "registry"
    home = write_cargo_home(base / "home", write_registry(base / "crates", spec))
    monkeypatch.setenv("CARGO_HOME", str(home))


def _fixtures(root: Path, code: str) -> None:
    """Step 3: `bad` (the finding, at line 9 of its Cargo.toml) and `ok`."""
    for case, features in (("bad", ""), ("ok", '"hardware-lock-elision"')):
        directory = root / code.lower() / case
        (directory / "src").mkdir(parents=True)
        (directory / "src" / "main.rs").write_text("fn main() {}\n")
        name = f"{code.lower()}-{case}"
        (directory / "Cargo.toml").write_text(MANIFEST.format(name=name, features=features))


@pytest.mark.cargo
def test_a_rule_added_as_the_doc_says_fires_on_bad_and_not_on_ok(
    package: Path, registry: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    code = _next_code()
    rules = tmp_path / "fixtures" / "rules"
    _fixtures(rules, code)
    cases = rule_cases(rules)
    assert [case.name for case in cases] == ["bad", "ok"]
    runs = tmp_path / "runs"
    # Step 5: the snapshots are missing until the tests run with the update variable...
    monkeypatch.delenv(UPDATE_VARIABLE, raising=False)
    outputs = {case.name: case_outputs(case, runs / case.name, package) for case in cases}
    with pytest.raises(pytest.fail.Exception, match=UPDATE_VARIABLE):
        assert_snapshot(snapshot_path(cases[0], "text"), outputs["bad"]["text"])
    monkeypatch.setenv(UPDATE_VARIABLE, "1")
    for case in cases:
        for kind in OUTPUTS:
            assert_snapshot(snapshot_path(case, kind), outputs[case.name][kind])
    # ...and then hold what a second run prints.
    monkeypatch.delenv(UPDATE_VARIABLE)
    for case in cases:
        again = case_outputs(case, runs / f"{case.name}-again", package)
        check_case(case, again["json"])
        for kind in OUTPUTS:
            assert_snapshot(snapshot_path(case, kind), again[kind])
    [finding] = [f for f in findings_of(outputs["bad"]["json"]) if f["code"] == code]
    assert (finding["crate"], finding["rule"]) == ("parking_lot", "parking-lot-without-elision")
    assert "parking_lot 0.12.5 is built without `hardware-lock-elision`" in outputs["bad"]["text"]
    assert '"hardware-lock-elision"' in outputs["bad"]["diff"]
