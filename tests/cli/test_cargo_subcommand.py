"""`cargo featcheck`: cargo finds `cargo-featcheck` on PATH and passes `featcheck` first."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from actions_support import clear_actions_environment, markers_written, plant_python
from cli_in_process import run_in_process
from support import CRATES, TREES

from featcheck import __version__

SCRIPTS = Path(sys.executable).parent


@pytest.fixture(autouse=True)
def _outside_actions(monkeypatch: pytest.MonkeyPatch) -> None:
    clear_actions_environment(monkeypatch)


def _cargo(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    if not (SCRIPTS / "cargo-featcheck").exists():
        pytest.fail(
            f"no cargo-featcheck next to {sys.executable}: reinstall featcheck "
            "(pip install -e .) to get the console script"
        )
    cargo = shutil.which("cargo")
    if cargo is None:
        pytest.skip("cargo is not installed")
    env = {
        **os.environ,
        "PATH": os.pathsep.join([str(SCRIPTS), os.environ.get("PATH", "")]),
        "NO_COLOR": "1",
    }
    return subprocess.run(
        [cargo, "featcheck", *args], cwd=cwd, capture_output=True, text=True, env=env, check=False
    )


def test_cargo_featcheck_audits_the_crate(offline_cargo_for: Callable[..., Path]) -> None:
    offline_cargo_for(CRATES / "pitb-exec-cpu")
    done = _cargo(str(CRATES / "pitb-exec-cpu"))
    assert done.returncode == 1, done.stderr
    assert "error[FC001] burn-flex 0.22.1 is built without `rayon`" in done.stdout
    assert "--> crates/pitb-exec-cpu/Cargo.toml:9:31" in done.stdout


def test_cargo_featcheck_defaults_to_the_current_directory(
    offline_cargo_for: Callable[..., Path],
) -> None:
    offline_cargo_for(CRATES / "pitb-exec-cpu-simd")
    done = _cargo(cwd=CRATES / "pitb-exec-cpu-simd")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("no findings (1 member, ")


def test_cargo_featcheck_version_and_help() -> None:
    assert _cargo("--version").stdout == f"featcheck {__version__}\n"
    help_text = _cargo("--help").stdout
    assert help_text.startswith("Usage: cargo featcheck ")
    assert "cargo featcheck" in help_text.split("Examples:")[1]


@pytest.mark.usefixtures("remembered_cargo")
def test_cargo_featcheck_from_src_finds_the_manifest_above_like_cargo(
    offline_cargo_for: Callable[..., Path],
) -> None:
    crate = CRATES / "pitb-exec-cpu"
    offline_cargo_for(crate)
    done = _cargo(cwd=crate / "src")
    assert done.returncode == 1, done.stderr
    assert "error[FC001] burn-flex 0.22.1 is built without `rayon`" in done.stdout
    # Relative to the repository root, wherever it is run from.
    assert "--> crates/pitb-exec-cpu/Cargo.toml:9:31" in done.stdout
    plain = run_in_process("-q", cwd=crate / "src")
    assert plain.returncode == 1 and "error[FC001]" in plain.stdout


@pytest.mark.usefixtures("remembered_cargo")
def test_manifest_path_as_cargo_takes_it(offline_cargo_for: Callable[..., Path]) -> None:
    crate = CRATES / "pitb-exec-cpu"
    offline_cargo_for(crate)
    done = _cargo("--manifest-path", str(crate / "Cargo.toml"), "-q")
    assert done.returncode == 1, done.stderr
    assert "error[FC001]" in done.stdout
    assert "--> crates/pitb-exec-cpu/Cargo.toml:9:31" in done.stdout
    plain = run_in_process("--manifest-path", str(crate / "Cargo.toml"), "--format", "json")
    assert plain.returncode == 1 and '"code": "FC001"' in plain.stdout


def test_where_cargo_would_find_no_manifest_one_line_and_exit_2(tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    done = run_in_process(cwd=tmp_path / "src")
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr == (
        f"featcheck: error: {tmp_path / 'src'}: could not find `Cargo.toml` here or in any "
        "parent directory\n"
    )
    for args, message in (
        (("--manifest-path", str(tmp_path)), "--manifest-path must be a path to a Cargo.toml"),
        (("--manifest-path", str(tmp_path / "Cargo.toml")), "no such manifest"),
        ((".", "--manifest-path", str(tmp_path / "Cargo.toml")), "PATH or --manifest-path"),
    ):
        wrong = run_in_process(*args, cwd=tmp_path)
        assert wrong.returncode == 2 and len(wrong.stderr.splitlines()) == 1, wrong.stderr
        assert message in wrong.stderr


def test_tree_input_needs_no_manifest_anywhere(tmp_path: Path) -> None:
    text = (TREES / "pitb-exec-cpu-simd.invert-burn-flex.txt").read_text()
    done = run_in_process("--tree", "-", stdin=text, cwd=tmp_path)
    assert done.returncode == 0 and done.stdout.startswith("no findings"), done.stderr


def _checkout_of(crate: Path, destination: Path) -> Path:
    """A copy of an example crate, as a clone of someone else's repository would be."""
    shutil.copytree(crate, destination, ignore=shutil.ignore_patterns("target"))
    subprocess.run(["git", "init", "-q", str(destination)], check=True)
    return destination


def test_cargo_featcheck_imports_nothing_the_checkout_plants(
    offline_cargo_for: Callable[..., Path], tmp_path: Path
) -> None:
    """What featcheck controls once cargo has handed over: `cargo-featcheck` is a console
    script, which puts its own directory first on sys.path, never the current one."""
    offline_cargo_for(CRATES / "pitb-exec-cpu")
    checkout = _checkout_of(CRATES / "pitb-exec-cpu", tmp_path / "checkout")
    markers = tmp_path / "markers"
    plant_python(checkout, markers)
    done = _cargo(cwd=checkout)
    assert markers_written(markers) == []
    assert done.returncode == 1, done.stderr
    assert "error[FC001] burn-flex 0.22.1 is built without `rayon`" in done.stdout
    assert "Traceback" not in done.stderr


def test_a_checkouts_cargo_alias_replaces_cargo_featcheck_but_not_featcheck(
    offline_cargo_for: Callable[..., Path], tmp_path: Path
) -> None:
    """What featcheck cannot control: cargo reads the checkout's `.cargo/config.toml` before it
    looks for `cargo-featcheck`, and an `[alias]` of the same name wins (cargo only warns). So
    the README says: on an untrusted checkout call `featcheck` itself, which obeys no alias."""
    offline_cargo_for(CRATES / "pitb-exec-cpu")
    checkout = _checkout_of(CRATES / "pitb-exec-cpu", tmp_path / "checkout")
    (checkout / ".cargo").mkdir()
    (checkout / ".cargo" / "config.toml").write_text('[alias]\nfeatcheck = ["version"]\n')
    hijacked = _cargo(cwd=checkout)
    assert hijacked.returncode == 0  # the audit never ran, and the job would pass
    assert hijacked.stdout.startswith("cargo ")
    assert "user-defined alias `featcheck` is shadowing an external subcommand" in hijacked.stderr
    plain = subprocess.run(
        [str(SCRIPTS / "featcheck")],
        cwd=checkout,
        capture_output=True,
        text=True,
        env={**os.environ, "NO_COLOR": "1"},
        check=False,
    )
    assert plain.returncode == 1, plain.stderr
    assert "error[FC001] burn-flex 0.22.1 is built without `rayon`" in plain.stdout
