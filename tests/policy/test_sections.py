"""Strict configuration: each error at the offending key or value."""

from __future__ import annotations

from pathlib import Path

from policy_support import config_error, error_place, write_workspace


def test_unknown_key_in_workspace_metadata(tmp_path: Path) -> None:
    members = write_workspace(tmp_path, '\n[workspace.metadata.featcheck]\nfail_on = "error"\n')
    error = config_error(tmp_path, members)
    assert error_place(error) == (tmp_path / "Cargo.toml", 6, 1)
    assert "unknown key `fail_on` in [workspace.metadata.featcheck]" in error.message
    assert "did you mean `fail-on`?" in error.message


def test_unknown_key_in_featcheck_toml(tmp_path: Path) -> None:
    (tmp_path / "featcheck.toml").write_text('targets = []\n  colour = "red"\n')
    error = config_error(tmp_path)
    assert error_place(error) == (tmp_path / "featcheck.toml", 2, 3)
    assert "unknown key `colour` in featcheck.toml" in error.message
    assert str(error).endswith(":2:3: " + error.message)


def test_unknown_key_in_member_metadata_and_in_an_allow_entry(tmp_path: Path) -> None:
    members = write_workspace(tmp_path, app='\n[package.metadata.featcheck]\nselekt = ["FC006"]\n')
    assert error_place(config_error(tmp_path, members)) == (members["app"], 7, 1)
    (tmp_path / "featcheck.toml").write_text(
        '[[allow]]\ncode = "FC001"\nreason = "r"\ncrates = "burn"\n'
    )
    error = config_error(tmp_path)
    assert error_place(error) == (tmp_path / "featcheck.toml", 4, 1)
    assert "did you mean `crate`?" in error.message


def test_unknown_rule_in_select_points_at_the_array_item(tmp_path: Path) -> None:
    members = write_workspace(
        tmp_path, '\n[workspace.metadata.featcheck]\nselect = ["FC006", "FC099"]\n'
    )
    error = config_error(tmp_path, members)
    assert error_place(error) == (tmp_path / "Cargo.toml", 6, 20)
    assert "unknown rule `FC099` in `select`" in error.message


def test_unknown_rule_in_a_multiline_ignore_array(tmp_path: Path) -> None:
    (tmp_path / "featcheck.toml").write_text('ignore = [\n  "FC001",\n    "no-such-rule",\n]\n')
    assert error_place(config_error(tmp_path)) == (tmp_path / "featcheck.toml", 3, 5)


def test_fc900_cannot_be_selected(tmp_path: Path) -> None:
    (tmp_path / "featcheck.toml").write_text('select = ["FC900"]\n')
    assert error_place(config_error(tmp_path)) == (tmp_path / "featcheck.toml", 1, 11)


def test_allow_without_reason_points_at_the_entry(tmp_path: Path) -> None:
    members = write_workspace(
        tmp_path,
        '\n[[workspace.metadata.featcheck.allow]]\ncode = "FC001"\ncrate = "burn-flex"\n',
    )
    error = config_error(tmp_path, members)
    assert error_place(error) == (tmp_path / "Cargo.toml", 5, 1)
    assert "needs a non-empty `reason`" in error.message


def test_allow_with_empty_reason_points_at_the_reason(tmp_path: Path) -> None:
    (tmp_path / "featcheck.toml").write_text(
        'allow = [\n  { code = "FC001", reason = "" },\n  { code = "FC002", reason = "  " },\n]\n'
    )
    assert error_place(config_error(tmp_path)) == (tmp_path / "featcheck.toml", 2, 30)


def test_allow_inline_table_without_reason_points_at_the_item(tmp_path: Path) -> None:
    (tmp_path / "featcheck.toml").write_text('allow = [{ code = "FC001" }]\n')
    assert error_place(config_error(tmp_path)) == (tmp_path / "featcheck.toml", 1, 10)


def test_allow_without_code_and_with_unknown_code(tmp_path: Path) -> None:
    (tmp_path / "featcheck.toml").write_text('[[allow]]\nreason = "r"\n')
    error = config_error(tmp_path)
    assert error_place(error) == (tmp_path / "featcheck.toml", 1, 1)
    assert "needs `code`" in error.message
    (tmp_path / "featcheck.toml").write_text('[[allow]]\ncode = "FC42"\nreason = "r"\n')
    assert error_place(config_error(tmp_path)) == (tmp_path / "featcheck.toml", 2, 8)


def test_allow_in_a_member_for_another_member(tmp_path: Path) -> None:
    members = write_workspace(
        tmp_path,
        app='\n[package.metadata.featcheck]\nallow = [{ code = "FC001", member = "lib", '
        'reason = "x" }]\n',
    )
    error = config_error(tmp_path, members)
    assert error_place(error) == (members["app"], 7, 37)
    assert "applies only to app" in error.message


def test_wrong_type_for_fail_on(tmp_path: Path) -> None:
    members = write_workspace(tmp_path, "\n[workspace.metadata.featcheck]\nfail-on = 1\n")
    error = config_error(tmp_path, members)
    assert error_place(error) == (tmp_path / "Cargo.toml", 6, 11)
    assert '`fail-on` must be one of "error", "warning", "info", "never"' in error.message


def test_unknown_fail_on_level(tmp_path: Path) -> None:
    (tmp_path / "featcheck.toml").write_text('fail-on = "fatal"\n')
    assert error_place(config_error(tmp_path)) == (tmp_path / "featcheck.toml", 1, 11)


def test_bad_severity_name(tmp_path: Path) -> None:
    members = write_workspace(
        tmp_path,
        "\n[workspace.metadata.featcheck.severity]\n"
        'FC001 = "error"\n'
        'flex-without-simd = "critical"\n',
    )
    error = config_error(tmp_path, members)
    assert error_place(error) == (tmp_path / "Cargo.toml", 7, 21)
    assert "unknown severity 'critical'" in error.message


def test_severity_for_an_unknown_rule_points_at_the_key(tmp_path: Path) -> None:
    (tmp_path / "featcheck.toml").write_text('severity = { FC001 = "info", FC777 = "info" }\n')
    error = config_error(tmp_path)
    assert error_place(error) == (tmp_path / "featcheck.toml", 1, 30)
    assert "unknown rule `FC777` in `severity`" in error.message


def test_severity_set_twice_by_code_and_name(tmp_path: Path) -> None:
    (tmp_path / "featcheck.toml").write_text(
        'severity = { FC001 = "info", flex-without-rayon = "error" }\n'
    )
    assert "sets FC001 twice" in config_error(tmp_path).message


def test_wrong_types(tmp_path: Path) -> None:
    cases = {
        'select = "FC006"\n': (1, 10),
        "targets = [1]\n": (1, 12),
        'severity = "error"\n': (1, 12),
        "severity = { FC001 = 3 }\n": (1, 22),
        'allow = { code = "FC001", reason = "r" }\n': (1, 9),
        'allow = ["FC001"]\n': (1, 10),
        'allow = [{ code = "FC001", reason = "r", crate = 3 }]\n': (1, 50),
    }
    for text, place in cases.items():
        (tmp_path / "featcheck.toml").write_text(text)
        assert error_place(config_error(tmp_path))[1:] == place, text


def test_featcheck_section_that_is_not_a_table(tmp_path: Path) -> None:
    members = write_workspace(tmp_path, '\n[workspace.metadata]\nfeatcheck = "on"\n')
    assert error_place(config_error(tmp_path, members)) == (tmp_path / "Cargo.toml", 6, 13)


def test_invalid_featcheck_toml(tmp_path: Path) -> None:
    (tmp_path / "featcheck.toml").write_text("fail-on = \n")
    error = config_error(tmp_path)
    assert error.path == tmp_path / "featcheck.toml"
    assert error.message.startswith("invalid TOML")
