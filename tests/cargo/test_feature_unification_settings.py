"""When cargo honours `resolver.feature-unification`, as measured with cargo 1.97.0-nightly and
1.95.0 (cargo/pending_metadata.py): a nightly cargo (or RUSTC_BOOTSTRAP=1) with the unstable flag;
the environment's variables beat the files'. No cargo runs here."""

from __future__ import annotations

from pathlib import Path

import pytest
from hostile_support import make_checkout

from featcheck.cargo.checkout_config import read_checkout_config
from featcheck.cargo.pending_metadata import UnificationSettings, decide, nightly_release

CONFIG = Path("/w/.cargo/config.toml")
WORKSPACE = UnificationSettings(("workspace", CONFIG), (True, CONFIG))


def _show(file: Path) -> str:
    return ".cargo/config.toml" if file == CONFIG else str(file)


@pytest.mark.parametrize(
    ("release", "environment", "nightly"),
    [
        ("1.97.0-nightly", {}, True),
        ("1.98.0-dev", {}, True),
        ("1.95.0", {}, False),
        ("1.96.0-beta.3", {}, False),
        ("1.95.0", {"RUSTC_BOOTSTRAP": "1"}, True),  # measured: stable cargo then honours it
        ("1.95.0", {"RUSTC_BOOTSTRAP": "some_crate"}, False),
    ],
)
def test_which_cargo_allows_the_unstable_flag(
    release: str, environment: dict[str, str], nightly: bool
) -> None:
    assert nightly_release(release, environment) is nightly


def test_workspace_unifies_only_on_nightly_with_the_flag() -> None:
    unified = decide(WORKSPACE, {}, "1.97.0-nightly", _show)
    assert unified.workspace
    assert unified.finding_note == (
        'features unified over the whole workspace, as resolver.feature-unification = "workspace"'
        " in .cargo/config.toml asks (nightly)"
    )
    assert unified.result_note is None
    stable = decide(WORKSPACE, {}, "1.95.0", _show)
    assert not stable.workspace and stable.finding_note is None
    assert stable.result_note is not None and "not nightly (rustc 1.95.0)" in stable.result_note
    no_flag = decide(WORKSPACE._replace(unstable=None), {}, "1.97.0-nightly", _show)
    assert not no_flag.workspace
    assert no_flag.result_note is not None and "[unstable] feature-unification" in (
        no_flag.result_note
    )


@pytest.mark.parametrize("mode", ["selected", "package"])
def test_selected_and_package_resolve_each_member_alone(mode: str) -> None:
    # `cargo tree -p MEMBER` measured: the member alone, as without the key; nothing to say.
    settings = WORKSPACE._replace(mode=(mode, CONFIG))
    assert decide(settings, {}, "1.97.0-nightly", _show) == (False, None, None)
    assert decide(settings, {}, "1.95.0", _show) == (False, None, None)


def test_the_environment_beats_the_files() -> None:
    environment = {"CARGO_RESOLVER_FEATURE_UNIFICATION": "selected"}
    assert not decide(WORKSPACE, environment, "1.97.0-nightly", _show).workspace
    environment = {
        "CARGO_RESOLVER_FEATURE_UNIFICATION": "workspace",
        "CARGO_UNSTABLE_FEATURE_UNIFICATION": "true",
    }
    unified = decide(UnificationSettings(), environment, "1.97.0-nightly", _show)
    assert unified.workspace
    assert unified.finding_note is not None
    assert "CARGO_RESOLVER_FEATURE_UNIFICATION" in unified.finding_note
    off = {"CARGO_UNSTABLE_FEATURE_UNIFICATION": "false"}
    assert not decide(WORKSPACE, off, "1.97.0-nightly", _show).workspace


def test_the_keys_are_read_and_passed_on(tmp_path: Path) -> None:
    checkout = make_checkout(tmp_path)
    checkout.cargo_config(
        """\
        [resolver]
        feature-unification = "workspace"
        [unstable]
        feature-unification = true
        build-std = ["std"]
        """
    )
    config = read_checkout_config(checkout.project, {}, None)
    assert [a.removeprefix("--config=") for a in config.arguments] == [
        'resolver.feature-unification="workspace"',
        "unstable.feature-unification=true",
    ]
    assert config.unification.mode is not None and config.unification.mode[0] == "workspace"
    assert config.unification.unstable is not None and config.unification.unstable[0] is True
    # Set in the environment, the key is the environment's (cargo reads it there).
    environment = {"CARGO_RESOLVER_FEATURE_UNIFICATION": "selected"}
    config = read_checkout_config(checkout.project, environment, None)
    assert config.unification.mode is None


def test_the_users_own_unstable_flag_counts(tmp_path: Path) -> None:
    # A nightly user's CARGO_HOME often turns unstable features on for every project: cargo
    # reads it itself (nothing of it is forwarded), and the checkout's mode then counts.
    home = tmp_path / "cargo-home"
    home.mkdir()
    (home / "config.toml").write_text("[unstable]\nfeature-unification = true\n")
    checkout = make_checkout(tmp_path / "work")
    checkout.cargo_config('[resolver]\nfeature-unification = "workspace"\n')
    config = read_checkout_config(checkout.project, {}, home)
    assert [a.removeprefix("--config=") for a in config.arguments] == [
        'resolver.feature-unification="workspace"'
    ]
    assert config.unification.unstable == (True, home / "config.toml")
    assert decide(config.unification, {}, "1.97.0-nightly", _show).workspace
