"""Configuration: [workspace.metadata.featcheck], [package.metadata.featcheck], featcheck.toml."""

from __future__ import annotations

from pathlib import Path

import pytest

from featcheck.config import Allow, Config, load_config
from featcheck.errors import FeatcheckError
from featcheck.severity import Severity

ROOT_PACKAGE = '[package]\nname = "app"\nversion = "0.1.0"\nedition = "2021"\n'
WORKSPACE = '[workspace]\nmembers = ["app", "lib"]\nresolver = "2"\n'


def _member(root: Path, name: str, extra: str = "") -> Path:
    manifest = root / name / "Cargo.toml"
    manifest.parent.mkdir(parents=True, exist_ok=True)
    manifest.write_text(
        f'[package]\nname = "{name}"\nversion = "0.1.0"\nedition = "2021"\n' + extra
    )
    return manifest


def _workspace(root: Path, extra: str = "", *, app: str = "", lib: str = "") -> dict[str, Path]:
    (root / "Cargo.toml").write_text(WORKSPACE + extra)
    return {"app": _member(root, "app", app), "lib": _member(root, "lib", lib)}


def _error(root: Path, members: dict[str, Path] | None = None) -> FeatcheckError:
    with pytest.raises(FeatcheckError) as caught:
        load_config(root, members or {})
    return caught.value


def _where(error: FeatcheckError) -> tuple[Path | str | None, int | None, int | None]:
    return error.path, error.line, error.column


# --- values and merging ----------------------------------------------------------------------


def test_no_configuration_anywhere_gives_the_defaults(tmp_path: Path) -> None:
    members = _workspace(tmp_path)
    config = load_config(tmp_path, members)
    assert config == Config()
    assert config.for_member("app") == Config()
    assert config.reports_unused
    assert [r.code for r in config.rules()] == [
        r.code for r in Config().rules() if r.enabled_by_default
    ]


def test_workspace_metadata_values(tmp_path: Path) -> None:
    members = _workspace(
        tmp_path,
        "\n[workspace.metadata.featcheck]\n"
        'select = ["FC006", "flex-x86-v4"]\n'
        'ignore = ["flex-without-simd"]\n'
        'severity = { FC001 = "error", gpu-without-fusion = "info" }\n'
        'targets = ["x86_64-unknown-linux-gnu", "wasm32-unknown-unknown"]\n'
        'fail-on = "error"\n'
        "\n[[workspace.metadata.featcheck.allow]]\n"
        'code = "FC002"\n'
        'crate = "burn-ndarray"\n'
        'reason = "single-threaded on purpose"\n',
    )
    config = load_config(tmp_path, members)
    assert config.select == ("FC006", "FC007")
    assert config.ignore == ("FC003",)
    assert config.severity == {"FC001": Severity.ERROR, "FC004": Severity.INFO}
    assert config.targets == ("x86_64-unknown-linux-gnu", "wasm32-unknown-unknown")
    assert config.fail_on == "error"
    [allow] = config.allows
    assert (allow.code, allow.crate, allow.member, allow.target, allow.reason) == (
        "FC002",
        "burn-ndarray",
        None,
        None,
        "single-threaded on purpose",
    )
    assert allow.origin is not None
    assert (allow.origin.path, allow.origin.line, allow.origin.column) == (
        tmp_path / "Cargo.toml",
        12,
        1,
    )
    codes = [r.code for r in config.rules()]
    assert "FC006" in codes and "FC007" in codes and "FC003" not in codes


def test_featcheck_toml_wins_for_scalars_and_adds_allows(tmp_path: Path) -> None:
    members = _workspace(
        tmp_path,
        "\n[workspace.metadata.featcheck]\n"
        'fail-on = "error"\n'
        'targets = ["x86_64-unknown-linux-gnu"]\n'
        'severity = { FC001 = "error", FC003 = "error" }\n'
        'ignore = ["FC003"]\n'
        'allow = [{ code = "FC001", reason = "from the workspace" }]\n',
    )
    (tmp_path / "featcheck.toml").write_text(
        'fail-on = "never"\n'
        'severity = { FC003 = "info" }\n'
        'select = ["FC003"]\n'
        "[[allow]]\n"
        'code = "*"\n'
        'member = "lib"\n'
        'reason = "from featcheck.toml"\n'
    )
    config = load_config(tmp_path, members)
    assert config.fail_on == "never"
    assert config.targets == ("x86_64-unknown-linux-gnu",)
    assert config.severity == {"FC001": Severity.ERROR, "FC003": Severity.INFO}
    # featcheck.toml selects what the workspace ignored: the later place wins.
    assert config.select == ("FC003",)
    assert config.ignore == ()
    assert [a.reason for a in config.allows] == ["from the workspace", "from featcheck.toml"]
    toml_allow = config.allows[1]
    assert toml_allow.code == "*" and toml_allow.member == "lib"
    assert toml_allow.origin is not None
    assert (toml_allow.origin.path.name, toml_allow.origin.line) == ("featcheck.toml", 4)


def test_featcheck_toml_alone_without_any_manifest(tmp_path: Path) -> None:
    (tmp_path / "featcheck.toml").write_text('targets = ["aarch64-apple-darwin"]\n')
    config = load_config(tmp_path, {})
    assert config.targets == ("aarch64-apple-darwin",)


def test_member_metadata_applies_only_to_that_member(tmp_path: Path) -> None:
    members = _workspace(
        tmp_path,
        '\n[workspace.metadata.featcheck]\nselect = ["FC006"]\nfail-on = "warning"\n'
        'allow = [{ code = "FC005", reason = "everywhere" }]\n',
        app="\n[package.metadata.featcheck]\n"
        'ignore = ["FC001", "FC006"]\n'
        'targets = ["wasm32-unknown-unknown"]\n'
        'severity = { FC002 = "error" }\n'
        'fail-on = "info"\n'
        "[[package.metadata.featcheck.allow]]\n"
        'code = "FC004"\n'
        'reason = "app debugs kernels"\n',
    )
    config = load_config(tmp_path, members)
    app = config.for_member("app")
    lib = config.for_member("lib")
    assert app.member == "app"
    assert app.ignore == ("FC001", "FC006") and app.select == ()
    assert app.targets == ("wasm32-unknown-unknown",)
    assert app.severity == {"FC002": Severity.ERROR}
    assert app.fail_on == "info"
    assert [(a.code, a.member) for a in app.allows] == [("FC005", None), ("FC004", "app")]
    # lib has no settings of its own: it gets the workspace's.
    assert lib == config
    assert lib.select == ("FC006",) and lib.ignore == () and lib.targets == ()
    assert [a.code for a in lib.allows] == ["FC005"]
    assert config.for_member(None) == config
    assert config.for_member("nobody") == config
    assert [a.code for a in config.all_allows()] == ["FC005", "FC004"]
    assert "FC001" not in [r.code for r in app.rules()]
    assert "FC001" in [r.code for r in lib.rules()]


def test_command_line_flags_win_over_the_configuration(tmp_path: Path) -> None:
    members = _workspace(
        tmp_path, '\n[workspace.metadata.featcheck]\nignore = ["FC001"]\nselect = ["FC006"]\n'
    )
    config = load_config(tmp_path, members)
    codes = [r.code for r in config.rules(select=["flex-without-rayon"], ignore=["FC006"])]
    assert "FC001" in codes and "FC006" not in codes
    with pytest.raises(FeatcheckError, match="unknown rule FC999"):
        config.rules(select=["FC999"])


def test_ignoring_fc900_turns_unused_reports_off(tmp_path: Path) -> None:
    (tmp_path / "featcheck.toml").write_text('ignore = ["unused-suppression"]\n')
    config = load_config(tmp_path, {})
    assert config.ignore == ("FC900",)
    assert not config.reports_unused
    assert config.rules()  # FC900 is not a rule select_rules knows; it is left out


def test_allow_entry_in_a_member_is_scoped_to_it(tmp_path: Path) -> None:
    members = _workspace(
        tmp_path,
        lib='\n[package.metadata.featcheck]\nallow = [{ code = "FC001", member = "lib", '
        'reason = "x" }]\n',
    )
    config = load_config(tmp_path, members)
    assert config.for_member("lib").allows == (
        Allow(
            code="FC001",
            reason="x",
            member="lib",
            origin=config.for_member("lib").allows[0].origin,
        ),
    )


def test_allow_matching_by_every_field() -> None:
    allow = Allow(code="FC001", reason="r", crate="burn_flex", member="app", target="wasm32")
    assert allow.matches("FC001", "burn-flex", "app", "wasm32")
    assert not allow.matches("FC003", "burn-flex", "app", "wasm32")
    assert not allow.matches("FC001", "burn-ndarray", "app", "wasm32")
    assert not allow.matches("FC001", "burn-flex", "lib", "wasm32")
    assert not allow.matches("FC001", "burn-flex", None, "wasm32")
    assert not allow.matches("FC001", "burn-flex", "app", "x86_64-unknown-linux-gnu")
    anything = Allow(code="*", reason="r")
    assert anything.matches("FC007", "burn-flex", None, None)
    assert allow.describe() == "FC001 for crate burn_flex, member app, target wasm32"
    assert anything.describe() == "all rules"


# --- errors, each at its place ---------------------------------------------------------------


def test_unknown_key_in_workspace_metadata(tmp_path: Path) -> None:
    members = _workspace(tmp_path, '\n[workspace.metadata.featcheck]\nfail_on = "error"\n')
    error = _error(tmp_path, members)
    assert _where(error) == (tmp_path / "Cargo.toml", 6, 1)
    assert "unknown key `fail_on` in [workspace.metadata.featcheck]" in error.message
    assert "did you mean `fail-on`?" in error.message


def test_unknown_key_in_featcheck_toml(tmp_path: Path) -> None:
    (tmp_path / "featcheck.toml").write_text('targets = []\n  colour = "red"\n')
    error = _error(tmp_path)
    assert _where(error) == (tmp_path / "featcheck.toml", 2, 3)
    assert "unknown key `colour` in featcheck.toml" in error.message
    assert str(error).endswith(":2:3: " + error.message)


def test_unknown_key_in_member_metadata_and_in_an_allow_entry(tmp_path: Path) -> None:
    members = _workspace(tmp_path, app='\n[package.metadata.featcheck]\nselekt = ["FC006"]\n')
    assert _where(_error(tmp_path, members)) == (members["app"], 7, 1)
    (tmp_path / "featcheck.toml").write_text(
        '[[allow]]\ncode = "FC001"\nreason = "r"\ncrates = "burn"\n'
    )
    error = _error(tmp_path)
    assert _where(error) == (tmp_path / "featcheck.toml", 4, 1)
    assert "did you mean `crate`?" in error.message


def test_unknown_rule_in_select_points_at_the_array_item(tmp_path: Path) -> None:
    members = _workspace(
        tmp_path, '\n[workspace.metadata.featcheck]\nselect = ["FC006", "FC099"]\n'
    )
    error = _error(tmp_path, members)
    assert _where(error) == (tmp_path / "Cargo.toml", 6, 20)
    assert "unknown rule `FC099` in `select`" in error.message


def test_unknown_rule_in_a_multiline_ignore_array(tmp_path: Path) -> None:
    (tmp_path / "featcheck.toml").write_text('ignore = [\n  "FC001",\n    "no-such-rule",\n]\n')
    assert _where(_error(tmp_path)) == (tmp_path / "featcheck.toml", 3, 5)


def test_fc900_cannot_be_selected(tmp_path: Path) -> None:
    (tmp_path / "featcheck.toml").write_text('select = ["FC900"]\n')
    assert _where(_error(tmp_path)) == (tmp_path / "featcheck.toml", 1, 11)


def test_allow_without_reason_points_at_the_entry(tmp_path: Path) -> None:
    members = _workspace(
        tmp_path,
        '\n[[workspace.metadata.featcheck.allow]]\ncode = "FC001"\ncrate = "burn-flex"\n',
    )
    error = _error(tmp_path, members)
    assert _where(error) == (tmp_path / "Cargo.toml", 5, 1)
    assert "needs a non-empty `reason`" in error.message


def test_allow_with_empty_reason_points_at_the_reason(tmp_path: Path) -> None:
    (tmp_path / "featcheck.toml").write_text(
        'allow = [\n  { code = "FC001", reason = "" },\n  { code = "FC002", reason = "  " },\n]\n'
    )
    assert _where(_error(tmp_path)) == (tmp_path / "featcheck.toml", 2, 30)


def test_allow_inline_table_without_reason_points_at_the_item(tmp_path: Path) -> None:
    (tmp_path / "featcheck.toml").write_text('allow = [{ code = "FC001" }]\n')
    assert _where(_error(tmp_path)) == (tmp_path / "featcheck.toml", 1, 10)


def test_allow_without_code_and_with_unknown_code(tmp_path: Path) -> None:
    (tmp_path / "featcheck.toml").write_text('[[allow]]\nreason = "r"\n')
    error = _error(tmp_path)
    assert _where(error) == (tmp_path / "featcheck.toml", 1, 1)
    assert "needs `code`" in error.message
    (tmp_path / "featcheck.toml").write_text('[[allow]]\ncode = "FC42"\nreason = "r"\n')
    assert _where(_error(tmp_path)) == (tmp_path / "featcheck.toml", 2, 8)


def test_allow_in_a_member_for_another_member(tmp_path: Path) -> None:
    members = _workspace(
        tmp_path,
        app='\n[package.metadata.featcheck]\nallow = [{ code = "FC001", member = "lib", '
        'reason = "x" }]\n',
    )
    error = _error(tmp_path, members)
    assert _where(error) == (members["app"], 7, 37)
    assert "applies only to app" in error.message


def test_wrong_type_for_fail_on(tmp_path: Path) -> None:
    members = _workspace(tmp_path, "\n[workspace.metadata.featcheck]\nfail-on = 1\n")
    error = _error(tmp_path, members)
    assert _where(error) == (tmp_path / "Cargo.toml", 6, 11)
    assert '`fail-on` must be one of "error", "warning", "info", "never"' in error.message


def test_unknown_fail_on_level(tmp_path: Path) -> None:
    (tmp_path / "featcheck.toml").write_text('fail-on = "fatal"\n')
    assert _where(_error(tmp_path)) == (tmp_path / "featcheck.toml", 1, 11)


def test_bad_severity_name(tmp_path: Path) -> None:
    members = _workspace(
        tmp_path,
        "\n[workspace.metadata.featcheck.severity]\n"
        'FC001 = "error"\n'
        'flex-without-simd = "critical"\n',
    )
    error = _error(tmp_path, members)
    assert _where(error) == (tmp_path / "Cargo.toml", 7, 21)
    assert "unknown severity 'critical'" in error.message


def test_severity_for_an_unknown_rule_points_at_the_key(tmp_path: Path) -> None:
    (tmp_path / "featcheck.toml").write_text('severity = { FC001 = "info", FC777 = "info" }\n')
    error = _error(tmp_path)
    assert _where(error) == (tmp_path / "featcheck.toml", 1, 30)
    assert "unknown rule `FC777` in `severity`" in error.message


def test_severity_set_twice_by_code_and_name(tmp_path: Path) -> None:
    (tmp_path / "featcheck.toml").write_text(
        'severity = { FC001 = "info", flex-without-rayon = "error" }\n'
    )
    assert "sets FC001 twice" in _error(tmp_path).message


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
        assert _where(_error(tmp_path))[1:] == place, text


def test_featcheck_section_that_is_not_a_table(tmp_path: Path) -> None:
    members = _workspace(tmp_path, '\n[workspace.metadata]\nfeatcheck = "on"\n')
    assert _where(_error(tmp_path, members)) == (tmp_path / "Cargo.toml", 6, 13)


def test_invalid_featcheck_toml(tmp_path: Path) -> None:
    (tmp_path / "featcheck.toml").write_text("fail-on = \n")
    error = _error(tmp_path)
    assert error.path == tmp_path / "featcheck.toml"
    assert error.message.startswith("invalid TOML")
