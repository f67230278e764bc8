"""FC900: a finding for each suppression that matched nothing."""

from __future__ import annotations

from pathlib import Path

from policy_support import configured_workspace, make_finding, write_app

from featcheck.policy.load import load_config
from featcheck.policy.settings import Config
from featcheck.policy.suppress import apply_suppressions
from featcheck.report import Location
from featcheck.severity import Severity


def test_unused_allow_entry_becomes_fc900_at_the_entry(tmp_path: Path) -> None:
    config = configured_workspace(
        tmp_path,
        "\n[workspace.metadata.featcheck]\n"
        'allow = [\n  { code = "FC004", crate = "burn-cuda", reason = "kernel debugging" },\n]\n',
    )
    result = apply_suppressions([make_finding()], config, tmp_path)
    assert len(result.kept) == 1
    [unused] = result.unused
    assert unused.code == "FC900"
    assert unused.rule == "unused-suppression"
    assert unused.severity is Severity.WARNING
    assert unused.member is None and unused.target is None
    assert (unused.crate, unused.crate_version, unused.feature) == ("burn-cuda", "", "")
    assert unused.message == (
        "this suppression of FC004 for crate burn-cuda (reason: kernel debugging) "
        "matches no finding"
    )
    assert unused.location == Location(
        "Cargo.toml",
        7,
        3,
        7,
        71,
        '  { code = "FC004", crate = "burn-cuda", reason = "kernel debugging" },',
    )


def test_fc900_paths_are_relative_to_the_audited_root(tmp_path: Path) -> None:
    (tmp_path / "featcheck.toml").write_text('[[allow]]\ncode = "FC001"\nreason = "r"\n')
    config = load_config(tmp_path, {})
    result = apply_suppressions([], config, tmp_path / "app")
    [unused] = result.unused
    assert unused.location is not None
    assert (unused.location.file, unused.location.line, unused.location.column) == (
        "../featcheck.toml",
        1,
        1,
    )


def test_unused_inline_comment_becomes_fc900_at_its_code(tmp_path: Path) -> None:
    manifest = write_app(
        tmp_path,
        'burn = "0.22"  # featcheck: allow(FC001, FC003) wasm build\n',
    )
    result = apply_suppressions(
        [make_finding("FC001", lines=(7, 7))], Config(), tmp_path, [manifest]
    )
    assert [s.finding.code for s in result.suppressed] == ["FC001"]
    [unused] = result.unused
    assert unused.code == "FC900"
    assert unused.message == "this suppression of FC003 (reason: wasm build) matches no finding"
    assert unused.location == Location(
        "app/Cargo.toml", 7, 42, 7, 47, 'burn = "0.22"  # featcheck: allow(FC001, FC003) wasm build'
    )
    assert "comment" in unused.suggestion


def test_unused_inline_comment_in_a_manifest_without_findings(tmp_path: Path) -> None:
    manifest = write_app(tmp_path, 'burn = "0.22"  # featcheck: allow(FC001) wasm\n')
    assert apply_suppressions([], Config(), tmp_path).unused == []  # not asked to read it
    [unused] = apply_suppressions([], Config(), tmp_path, [manifest]).unused
    assert unused.location is not None and unused.location.file == "app/Cargo.toml"


def test_entries_the_audit_could_not_match_are_not_reported(tmp_path: Path) -> None:
    (tmp_path / "featcheck.toml").write_text(
        'allow = [\n  { code = "FC001", member = "lib", reason = "a" },\n'
        '  { code = "FC001", target = "wasm32-unknown-unknown", reason = "b" },\n'
        '  { code = "FC006", reason = "c" },\n'
        '  { code = "*", crate = "faer", reason = "d" },\n]\n'
    )
    config = load_config(tmp_path, {})
    manifest = write_app(tmp_path, 'burn = "0.22"  # featcheck: allow(FC006) opt-in hint\n')
    result = apply_suppressions(
        [],
        config,
        tmp_path,
        [manifest],
        members=["app"],
        targets=["x86_64-unknown-linux-gnu"],
        rules=["FC001", "FC002"],
    )
    assert [f.message.split(" (")[0] for f in result.unused] == [
        "this suppression of all rules for crate faer"
    ]
    everything = apply_suppressions([], config, tmp_path, [manifest])
    assert len(everything.unused) == 5


def test_ignoring_fc900_and_its_severity(tmp_path: Path) -> None:
    (tmp_path / "featcheck.toml").write_text(
        'ignore = ["FC900"]\nallow = [{ code = "FC001", reason = "r" }]\n'
    )
    assert apply_suppressions([], load_config(tmp_path, {}), tmp_path).unused == []
    (tmp_path / "featcheck.toml").write_text(
        'severity = { unused-suppression = "error" }\nallow = [{ code = "FC001", reason = "r" }]\n'
    )
    [unused] = apply_suppressions([], load_config(tmp_path, {}), tmp_path).unused
    assert unused.severity is Severity.ERROR


def test_unused_member_allow_is_reported_only_when_that_member_was_audited(
    tmp_path: Path,
) -> None:
    config = configured_workspace(
        tmp_path,
        app_meta='\n[package.metadata.featcheck]\nallow = [{ code = "FC003", reason = "x" }]\n',
    )
    assert apply_suppressions([], config, tmp_path, members=["lib"]).unused == []
    [unused] = apply_suppressions([], config, tmp_path, members=["app"]).unused
    assert "FC003 for member app" in unused.message
    assert unused.location is not None and unused.location.file == "app/Cargo.toml"
