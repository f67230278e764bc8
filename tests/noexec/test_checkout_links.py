"""Files the checkout links out of itself, and registry directories a hostile audit planted.

Each attack is built as a pull request would build it: a checkout in a temporary directory
whose file (or directory) is a symlink to a file of another project next to it, the "victim",
whose text holds a marker. featcheck runs as a user runs it (its command line, in this
process: cli_in_process.run_in_process), in the default mode against real cargo (offline, the
stub registry) and with `--no-exec`. Refused: one line on stderr naming the link, exit 2, and
nothing of the victim in the output — not its text, its keys, its package name, nor its file
name.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from cli_in_process import run_in_process
from hostile_support import RUSTUP
from support import CRATES
from test_noexec_sources import honest_home, no_exec_findings

MARKER = "victim-secret-5e1d"
TARGET_NAME = "victim-target-file"
"""Part of every victim file's name: it never appears in an error either."""
LINK_OUT = "is a symlink that leads out of the checkout"


def _victim(tmp: Path) -> Path:
    """Another project's files beside the checkout, each valid of its kind, so that a reader
    that follows the link gets far enough to quote it."""
    victim = tmp / "victim"
    (victim / "src").mkdir(parents=True)
    (victim / "src" / "lib.rs").write_text("")
    manifest = f'# {MARKER}\n[package]\nname = "{MARKER}"\nversion = "0.1.0"\nedition = "2021"\n'
    (victim / f"{TARGET_NAME}.toml").write_text(manifest)
    (victim / f"{TARGET_NAME}-settings.toml").write_text(f"[{MARKER}]\nkey = 1\n")
    lock = f'version = 4\n\n[[package]]\nname = "{MARKER}"\nversion = "0.1.0"\n'
    (victim / f"{TARGET_NAME}.lock").write_text(lock)
    return victim


def _project(tmp: Path) -> Path:
    """The checkout: the template crate that loses rayon (FC001), with its Cargo.lock."""
    project = tmp / "ws"
    shutil.copytree(CRATES / "pitb-exec-cpu", project, ignore=shutil.ignore_patterns("target"))
    return project


def _workspace(tmp: Path, member: str = "app") -> Path:
    """The checkout as a workspace whose member `member` is the template crate."""
    root = tmp / "ws"
    shutil.copytree(
        CRATES / "pitb-exec-cpu", root / member, ignore=shutil.ignore_patterns("target")
    )
    (root / member / "Cargo.lock").replace(root / "Cargo.lock")
    (root / "Cargo.toml").write_text(f'[workspace]\nresolver = "2"\nmembers = ["{member}"]\n')
    return root


def _link(link: Path, target: Path) -> None:
    link.parent.mkdir(parents=True, exist_ok=True)
    if link.exists() or link.is_symlink():
        link.unlink()
    link.symlink_to(target)


# Each attack: (the checkout, the link featcheck must name, relative to the checkout).


def root_manifest(tmp: Path) -> tuple[Path, str]:
    project = _project(tmp)
    _link(project / "Cargo.toml", _victim(tmp) / f"{TARGET_NAME}.toml")
    return project, "Cargo.toml"


def member_manifest(tmp: Path) -> tuple[Path, str]:
    root = _workspace(tmp)
    (root / "Cargo.toml").write_text('[workspace]\nresolver = "2"\nmembers = ["app", "m"]\n')
    (root / "m" / "src").mkdir(parents=True)
    (root / "m" / "src" / "lib.rs").write_text("")
    _link(root / "m" / "Cargo.toml", _victim(tmp) / f"{TARGET_NAME}.toml")
    return root, "m/Cargo.toml"


def path_dependency_manifest(tmp: Path) -> tuple[Path, str]:
    project = _project(tmp)
    manifest = project / "Cargo.toml"
    manifest.write_text(manifest.read_text() + '\n[dependencies.dep]\npath = "deps/dep"\n')
    (project / "deps" / "dep" / "src").mkdir(parents=True)
    (project / "deps" / "dep" / "src" / "lib.rs").write_text("")
    _link(project / "deps" / "dep" / "Cargo.toml", _victim(tmp) / f"{TARGET_NAME}.toml")
    return project, "deps/dep/Cargo.toml"


def path_dependency_directory_in_a_workspace(tmp: Path) -> tuple[Path, str]:
    root = _workspace(tmp)
    manifest = root / "app" / "Cargo.toml"
    manifest.write_text(manifest.read_text() + '\n[dependencies.dep]\npath = "../deps/dep"\n')
    victim = _victim(tmp)
    (victim / "Cargo.toml").write_text((victim / f"{TARGET_NAME}.toml").read_text())
    _link(root / "deps" / "dep", victim)
    return root, "deps/dep"


def featcheck_settings(tmp: Path) -> tuple[Path, str]:
    project = _project(tmp)
    _link(project / "featcheck.toml", _victim(tmp) / f"{TARGET_NAME}-settings.toml")
    return project, "featcheck.toml"


def lockfile(tmp: Path) -> tuple[Path, str]:
    project = _project(tmp)
    _link(project / "Cargo.lock", _victim(tmp) / f"{TARGET_NAME}.lock")
    return project, "Cargo.lock"


def cargo_configuration(tmp: Path) -> tuple[Path, str]:
    project = _project(tmp)
    _link(project / ".cargo" / "config.toml", _victim(tmp) / f"{TARGET_NAME}-settings.toml")
    return project, ".cargo/config.toml"


def included_cargo_configuration(tmp: Path) -> tuple[Path, str]:
    project = _project(tmp)
    (project / ".cargo").mkdir()
    (project / ".cargo" / "config.toml").write_text('include = ["more.toml"]\n')
    _link(project / ".cargo" / "more.toml", _victim(tmp) / f"{TARGET_NAME}-settings.toml")
    return project, ".cargo/more.toml"


def configuration_directory(tmp: Path) -> tuple[Path, str]:
    project = _project(tmp)
    victim = _victim(tmp)
    (victim / "config.toml").write_text(f"[{MARKER}]\nkey = 1\n")
    _link(project / ".cargo", victim)
    return project, ".cargo"


ATTACKS: dict[str, Callable[[Path], tuple[Path, str]]] = {
    f.__name__: f
    for f in (
        root_manifest,
        member_manifest,
        path_dependency_manifest,
        path_dependency_directory_in_a_workspace,
        featcheck_settings,
        lockfile,
        cargo_configuration,
        included_cargo_configuration,
        configuration_directory,
    )
}
NO_EXEC_ATTACKS = [a for a in ATTACKS if a != "path_dependency_directory_in_a_workspace"]
"""In --no-exec a path dependency whose directory links out stays unread (README), as does
one elsewhere: nothing of it is read, and the audit says what it could not see."""


def _assert_refused(result: object, link: Path) -> None:
    import subprocess

    assert isinstance(result, subprocess.CompletedProcess)
    output = result.stdout + result.stderr
    assert result.returncode == 2, output
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("featcheck: error: "), result.stderr
    assert f"{link}: {LINK_OUT}" in lines[0], lines[0]
    if link.name == "featcheck.toml":  # named for what it is, not as a Cargo.toml
        assert lines[0].endswith("(reading a featcheck.toml)"), lines[0]
    assert "Traceback" not in output
    assert MARKER not in output and TARGET_NAME not in output and "victim" not in output


@pytest.mark.parametrize("attack", ATTACKS)
def test_default_mode_refuses_a_link_out(attack: str, tmp_path: Path, offline_cargo: Path) -> None:
    checkout, link = ATTACKS[attack](tmp_path)
    lock = checkout / "Cargo.lock"
    before = lock.read_bytes() if lock.is_file() else None
    _assert_refused(run_in_process(str(checkout)), checkout / link)
    assert (lock.read_bytes() if lock.is_file() else None) == before


@pytest.mark.parametrize("attack", NO_EXEC_ATTACKS)
def test_no_exec_refuses_a_link_out(
    attack: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    checkout, link = ATTACKS[attack](tmp_path)
    monkeypatch.setenv("CARGO_HOME", str(tmp_path / "empty-cargo-home"))
    _assert_refused(run_in_process(str(checkout), "--no-exec"), checkout / link)


def test_links_inside_the_checkout_are_followed(
    tmp_path: Path, offline_cargo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A link that stays inside the checkout is the checkout's own file: read as before."""
    project = _project(tmp_path)
    (project / "real.toml").write_text((project / "Cargo.toml").read_text())
    _link(project / "Cargo.toml", Path("real.toml"))
    result = run_in_process(str(project), "--format", "json")
    assert result.returncode == 1, result.stderr
    assert [f["code"] for f in json.loads(result.stdout)["findings"]] == ["FC001"]
    monkeypatch.setenv("CARGO_HOME", str(honest_home(tmp_path / "home")))
    assert no_exec_findings(project) == (1, ["FC001"])


def test_a_checkout_reached_through_a_link_is_audited(tmp_path: Path, offline_cargo: Path) -> None:
    """The user may name the checkout through a link of their own: that link is not the
    checkout's, and the audit is the usual one."""
    project = _project(tmp_path)
    (tmp_path / "alias").symlink_to(project, target_is_directory=True)
    result = run_in_process(str(tmp_path / "alias"), "--format", "json")
    assert result.returncode == 1, result.stderr


@pytest.mark.parametrize("no_exec", [False, True])
def test_a_lockfile_linking_nowhere_is_refused_before_cargo_runs(
    no_exec: bool, tmp_path: Path, offline_cargo: Path
) -> None:
    """cargo would create the file the link names, outside the checkout."""
    project = _project(tmp_path)
    nowhere = tmp_path / "somewhere" / "that" / "does-not-exist"
    (project / "Cargo.lock").unlink()
    (project / "Cargo.lock").symlink_to(nowhere)
    result = run_in_process(str(project), *(("--no-exec",) if no_exec else ()))
    assert result.returncode == 2, result.stdout + result.stderr
    assert len(result.stderr.splitlines()) == 1
    assert f"{project / 'Cargo.lock'}: {LINK_OUT}" in result.stderr
    assert not nowhere.exists() and not nowhere.parent.exists()


def test_a_lockfile_linking_nowhere_inside_is_refused(tmp_path: Path, offline_cargo: Path) -> None:
    """Inside the checkout too: putting the old state back would remove only the link and
    leave what cargo created through it."""
    project = _project(tmp_path)
    (project / "Cargo.lock").unlink()
    (project / "Cargo.lock").symlink_to("gone.lock")
    result = run_in_process(str(project), "--fix")
    assert result.returncode == 2
    assert "Cargo.lock: is a symlink to nothing; cargo would create the file" in result.stderr
    assert not (project / "gone.lock").exists()


def test_a_hard_linked_lockfile_is_refused_where_cargo_may_rewrite_it(
    tmp_path: Path, offline_cargo: Path
) -> None:
    """cargo rewrites an out-of-date Cargo.lock in place, so through every name of the file:
    putting the old state back replaced the checkout's name alone, and the file's other name,
    outside the checkout, kept cargo's rewrite."""
    project = _project(tmp_path)
    elsewhere = tmp_path / "elsewhere.lock"
    stale = (project / "Cargo.lock").read_text().replace('name = "gemm"', 'name = "gemm-stale"')
    elsewhere.write_text(stale)
    (project / "Cargo.lock").unlink()
    os.link(elsewhere, project / "Cargo.lock")
    result = run_in_process(str(project))
    assert result.returncode == 2, result.stdout + result.stderr
    assert len(result.stderr.splitlines()) == 1
    assert f"{project / 'Cargo.lock'}: is a hard link: cargo would write" in result.stderr
    assert elsewhere.read_text() == stale
    # --no-exec writes nothing: the link is no reason to refuse it.
    read_only = run_in_process(str(project), "--no-exec")
    assert "hard link" not in read_only.stderr


def test_a_toolchain_file_linking_out_is_refused(tmp_path: Path, offline_cargo: Path) -> None:
    if not RUSTUP:
        pytest.skip("the toolchain file is read only where rustup's proxy is cargo")
    project = _project(tmp_path)
    victim = _victim(tmp_path)
    (victim / f"{TARGET_NAME}-toolchain.toml").write_text(f'[toolchain]\nchannel = "{MARKER}"\n')
    _link(project / "rust-toolchain.toml", victim / f"{TARGET_NAME}-toolchain.toml")
    _assert_refused(run_in_process(str(project)), project / "rust-toolchain.toml")


def test_the_rules_command_refuses_a_linked_settings_file(tmp_path: Path) -> None:
    """`featcheck rules PATH` reads the project's featcheck.toml as the audit does."""
    checkout, link = featcheck_settings(tmp_path)
    _assert_refused(run_in_process("rules", str(checkout)), checkout / link)
