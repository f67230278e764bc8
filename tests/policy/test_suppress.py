"""Suppressions: config allow entries and `# featcheck: allow` comments hide findings."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from policy_support import configured_workspace, make_finding, write_app

from featcheck.errors import FeatcheckError
from featcheck.manifest.document import read_manifest
from featcheck.policy.load import load_config
from featcheck.policy.settings import Config, inline_allows
from featcheck.policy.suppress import apply_suppressions
from featcheck.report import Location


def test_a_malformed_comment_stops_apply_suppressions(tmp_path: Path) -> None:
    manifest = write_app(tmp_path, 'burn = "0.22"  # featcheck: allow(FC001)\n')
    with pytest.raises(FeatcheckError) as caught:
        apply_suppressions([], Config(), tmp_path, [manifest])
    assert (caught.value.path, caught.value.line, caught.value.column) == (manifest, 7, 16)


# --- inline comments suppress findings on their declaration -----------------------------------


def test_comment_at_the_end_of_an_inline_declaration(tmp_path: Path) -> None:
    write_app(
        tmp_path,
        'burn = { version = "0.22", features = ["flex"] }  # featcheck: allow(FC001) wasm\n',
    )
    finding = make_finding(lines=(7, 7))
    other = make_finding("FC003", lines=(7, 7))
    result = apply_suppressions([finding, other], Config(), tmp_path)
    assert result.kept == [other]
    [suppressed] = result.suppressed
    assert suppressed.finding == finding
    assert suppressed.by.reason == "wasm"
    assert suppressed.by.inline
    assert result.unused == []
    assert result.suppressed_counts() == {"FC001": 1}


def test_comment_on_its_own_line_inside_a_dependency_table(tmp_path: Path) -> None:
    (tmp_path / "app").mkdir()
    (tmp_path / "app" / "Cargo.toml").write_text(
        '[package]\nname = "app"\nversion = "0.1.0"\n'
        "\n[dependencies.burn]\n"
        'version = "0.22"\n'
        "# featcheck: allow(flex-without-rayon) measured slower on 4 cores\n"
        'features = ["flex"]\n'
        "\n[dependencies.serde]\n"
        'version = "1"\n'
    )
    inside = make_finding(lines=(5, 8))
    elsewhere = make_finding(crate="gemm", lines=(10, 11))
    result = apply_suppressions([inside, elsewhere], Config(), tmp_path)
    assert [s.finding for s in result.suppressed] == [inside]
    assert result.kept == [elsewhere]


def test_comment_inside_a_multiline_features_array(tmp_path: Path) -> None:
    write_app(
        tmp_path,
        "burn = { version = \"0.22\", default-features = false, features = ['std', 'flex'] }\n"
        "\n[dependencies.ndarray]\n"
        'version = "0.16"\n'
        "features = [\n"
        '  "std", # featcheck: allow(FC002) single-threaded by design\n'
        "]\n",
    )
    finding = make_finding("FC002", crate="ndarray", lines=(9, 12))
    result = apply_suppressions([finding], Config(), tmp_path)
    assert [s.by.reason for s in result.suppressed] == ["single-threaded by design"]


def test_directive_after_other_comment_text(tmp_path: Path) -> None:
    (tmp_path / "app").mkdir()
    (tmp_path / "app" / "Cargo.toml").write_text(
        '[package]\nname = "app"\nversion = "0.1.0"\n'
        "\n[dependencies.burn]\n"
        'version = "=0.22.1"\n'
        "features = [\n"
        '    "flex",   # the CPU backend\n'
        '    # "rayon",  # featcheck: allow(FC001) wasm only\n'
        "]\n"
    )
    result = apply_suppressions([make_finding(lines=(5, 10))], Config(), tmp_path)
    assert [s.by.reason for s in result.suppressed] == ["wasm only"]
    assert result.suppressed[0].by.origin is not None
    assert result.suppressed[0].by.origin.column == 36


def test_the_members_inheriting_declaration_counts_too(tmp_path: Path) -> None:
    (tmp_path / "Cargo.toml").write_text(
        '[workspace]\nmembers = ["app"]\n\n[workspace.dependencies]\n'
        'burn = { version = "0.22", default-features = false }\n'
    )
    write_app(tmp_path, "burn = { workspace = true }  # featcheck: allow(FC001) app is wasm\n")
    finding = make_finding(file="Cargo.toml", lines=(5, 5))  # the workspace entry
    assert apply_suppressions([finding], Config(), tmp_path).kept == [finding]

    inherited = replace(finding, inherited_by=Location("app/Cargo.toml", 7, 1, 7, 28))
    result = apply_suppressions([inherited], Config(), tmp_path)
    assert [s.by.reason for s in result.suppressed] == ["app is wasm"]
    assert result.unused == []


def test_falls_back_to_the_location_without_a_declaration(tmp_path: Path) -> None:
    write_app(tmp_path, 'burn = "0.22"  # featcheck: allow(*) not ours to fix\n')
    finding = make_finding("FC005", lines=(7, 7), location_only=True)
    result = apply_suppressions([finding], Config(), tmp_path)
    assert [s.finding for s in result.suppressed] == [finding]


def test_a_hash_inside_a_string_is_not_a_suppression(tmp_path: Path) -> None:
    manifest = write_app(
        tmp_path,
        "[dependencies.burn]\n"
        'version = "# featcheck: allow(FC001) x"\n'
        "path = '# featcheck: allow(FC001) y'\n",
    )
    assert inline_allows(read_manifest(manifest)) == []
    finding = make_finding(lines=(8, 10))
    result = apply_suppressions([finding], Config(), tmp_path, [manifest])
    assert result.kept == [finding]
    assert result.suppressed == [] and result.unused == []


def test_comment_only_covers_its_own_declaration_and_file(tmp_path: Path) -> None:
    write_app(
        tmp_path,
        # gemm is on line 8
        'burn = "0.22"  # featcheck: allow(FC001) wasm\ngemm = "0.17"\n',
    )
    other_line = make_finding(crate="gemm", lines=(8, 8))
    other_file = make_finding(file="lib/Cargo.toml", lines=(7, 7))
    result = apply_suppressions([other_line, other_file], Config(), tmp_path)
    assert result.kept == [other_line, other_file]
    [unused] = result.unused
    assert unused.location is not None
    assert (unused.location.file, unused.location.line) == ("app/Cargo.toml", 7)


# --- config allow entries --------------------------------------------------------------------


def test_allow_entries_match_by_crate_member_target_and_star(tmp_path: Path) -> None:
    (tmp_path / "featcheck.toml").write_text(
        '[[allow]]\ncode = "FC001"\ncrate = "burn_flex"\nreason = "by crate"\n'
        '[[allow]]\ncode = "FC002"\nmember = "lib"\nreason = "by member"\n'
        '[[allow]]\ncode = "FC003"\ntarget = "wasm32-unknown-unknown"\nreason = "by target"\n'
        '[[allow]]\ncode = "*"\ncrate = "faer"\nreason = "everything about faer"\n'
    )
    config = load_config(tmp_path, {})
    by_crate = make_finding("FC001")
    not_crate = make_finding("FC001", crate="gemm")
    by_member = make_finding("FC002", member="lib")
    not_member = make_finding("FC002", member="app")
    by_target = make_finding("FC003", target="wasm32-unknown-unknown")
    not_target = make_finding("FC003")
    star = make_finding("FC010", crate="faer")
    result = apply_suppressions(
        [by_crate, not_crate, by_member, not_member, by_target, not_target, star],
        config,
        tmp_path,
    )
    assert result.kept == [not_crate, not_member, not_target]
    assert [s.by.reason for s in result.suppressed] == [
        "by crate",
        "by member",
        "by target",
        "everything about faer",
    ]
    assert result.unused == []


# --- per member ------------------------------------------------------------------------------


def test_member_configuration_applies_only_to_that_member(tmp_path: Path) -> None:
    """Severities are not changed here: a finding is made with its configured one
    (tests/pipeline/test_configured_severity.py)."""
    config = configured_workspace(
        tmp_path,
        '\n[workspace.metadata.featcheck]\nseverity = { FC002 = "info" }\n',
        app_meta="\n[package.metadata.featcheck]\n"
        'severity = { FC001 = "error" }\n'
        'allow = [{ code = "FC003", reason = "app only" }]\n',
    )
    app_fc001 = make_finding("FC001", member="app")
    lib_fc001 = make_finding("FC001", member="lib")
    app_fc002 = make_finding("FC002", member="app")
    app_fc003 = make_finding("FC003", member="app")
    lib_fc003 = make_finding("FC003", member="lib")
    unknown_member = make_finding("FC003", member=None)
    result = apply_suppressions(
        [app_fc001, lib_fc001, app_fc002, app_fc003, lib_fc003, unknown_member], config, tmp_path
    )
    assert result.kept == [app_fc001, lib_fc001, app_fc002, lib_fc003, unknown_member]
    assert [s.finding for s in result.suppressed] == [app_fc003]
    assert result.unused == []
