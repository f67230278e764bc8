"""Configuration: [workspace.metadata.featcheck], [package.metadata.featcheck], featcheck.toml,
merged."""

from __future__ import annotations

from pathlib import Path

import pytest
from policy_support import write_workspace

from featcheck.errors import FeatcheckError
from featcheck.policy.load import load_config
from featcheck.policy.settings import Allow, Config
from featcheck.severity import Severity


def test_no_configuration_anywhere_gives_the_defaults(tmp_path: Path) -> None:
    members = write_workspace(tmp_path)
    config = load_config(tmp_path, members)
    assert config == Config()
    assert config.for_member("app") == Config()
    assert config.reports_unused
    assert [r.code for r in config.rules()] == [
        r.code for r in Config().rules() if r.enabled_by_default
    ]


def test_workspace_metadata_values(tmp_path: Path) -> None:
    members = write_workspace(
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
    assert (allow.origin.file, allow.origin.line, allow.origin.column) == (
        str(tmp_path / "Cargo.toml"),
        12,
        1,
    )
    codes = [r.code for r in config.rules()]
    assert "FC006" in codes and "FC007" in codes and "FC003" not in codes


def test_featcheck_toml_wins_for_scalars_and_adds_allows(tmp_path: Path) -> None:
    members = write_workspace(
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
    assert (Path(toml_allow.origin.file).name, toml_allow.origin.line) == ("featcheck.toml", 4)


def test_featcheck_toml_alone_without_any_manifest(tmp_path: Path) -> None:
    (tmp_path / "featcheck.toml").write_text('targets = ["aarch64-apple-darwin"]\n')
    config = load_config(tmp_path, {})
    assert config.targets == ("aarch64-apple-darwin",)


def test_member_metadata_applies_only_to_that_member(tmp_path: Path) -> None:
    members = write_workspace(
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
    members = write_workspace(
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
    assert config.rules()  # FC900 is not a rule the catalogue selects; it is left out


def test_allow_entry_in_a_member_is_scoped_to_it(tmp_path: Path) -> None:
    members = write_workspace(
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
