"""Bad input gets one clear line naming the file (and line), exit code 2, never a traceback."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from cli_in_process import run_in_process
from support import CRATES, TREES

pytestmark = pytest.mark.usefixtures("remembered_cargo")

TEMPLATE = (CRATES / "pitb-exec-cpu" / "Cargo.toml").read_text()


def _assert_one_clear_line(stderr: str, *parts: str) -> None:
    assert "Traceback" not in stderr
    lines = [line for line in stderr.splitlines() if line.strip()]
    assert 1 <= len(lines) <= 2, stderr
    assert lines[0].startswith("featcheck: error: ")
    for part in parts:
        assert part in stderr


def _project(tmp_path: Path, manifest: str) -> Path:
    (tmp_path / "src").mkdir(exist_ok=True)
    (tmp_path / "src" / "main.rs").write_text("fn main() {}\n")
    (tmp_path / "Cargo.toml").write_text(manifest)
    return tmp_path


@pytest.mark.cargo
def test_malformed_manifest_names_file_line_and_column(tmp_path: Path) -> None:
    project = _project(tmp_path, '[package]\nname = "app"\nversion = "0.1.0\nedition = "2024"\n')
    result = run_in_process(str(project))
    assert result.returncode == 2
    _assert_one_clear_line(result.stderr, f"{project / 'Cargo.toml'}:3:", "invalid TOML")


def test_malformed_toolchain_file_names_file_line_and_column(tmp_path: Path) -> None:
    """The toolchain file is read before cargo starts, by the manifests' reader."""
    project = _project(tmp_path, TEMPLATE)
    (project / "rust-toolchain.toml").write_text('[toolchain]\nchannel = "stable\n')
    result = run_in_process(str(project))
    assert result.returncode == 2
    _assert_one_clear_line(result.stderr, "rust-toolchain.toml:2:", "invalid TOML")


def test_toolchain_file_in_toml_1_1_is_read_as_cargo_reads_it(tmp_path: Path) -> None:
    """A trailing comma in an inline table is TOML 1.1, which cargo accepts."""
    project = _project(tmp_path, TEMPLATE)
    (project / "rust-toolchain.toml").write_text(
        '[toolchain]\nchannel = "1.95"\ncomponents = { a = 1, }\nprofile = ["x"\n'
    )
    result = run_in_process(str(project))
    assert result.returncode == 2
    _assert_one_clear_line(result.stderr, "rust-toolchain.toml:4:")


@pytest.mark.cargo
def test_invalid_utf8_manifest(tmp_path: Path) -> None:
    (tmp_path / "Cargo.toml").write_bytes(b'[package]\nname = "\xff"\n')
    result = run_in_process(str(tmp_path))
    assert result.returncode == 2
    _assert_one_clear_line(result.stderr, "Cargo.toml:2:9: invalid UTF-8")


def test_directory_without_manifest(tmp_path: Path) -> None:
    result = run_in_process(str(tmp_path))
    assert result.returncode == 2
    _assert_one_clear_line(result.stderr, "not a Cargo project")


def test_missing_path(tmp_path: Path) -> None:
    result = run_in_process(str(tmp_path / "nowhere" / "Cargo.toml"))
    assert result.returncode == 2
    _assert_one_clear_line(result.stderr, "no such file or directory")


def test_cargo_not_on_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    project = _project(tmp_path, TEMPLATE)
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    result = run_in_process(str(project))
    assert result.returncode == 2
    _assert_one_clear_line(result.stderr, "cargo not found on PATH")


def test_cargo_failing_to_resolve_gives_cargos_reason(
    tmp_path: Path, offline_cargo: object
) -> None:
    manifest = TEMPLATE.replace('"=0.22.1"', '"=9.9.9"')
    project = _project(tmp_path, manifest)
    result = run_in_process(str(project))
    assert result.returncode == 2
    _assert_one_clear_line(result.stderr, "cargo metadata failed", "burn")
    assert not (project / "Cargo.lock").exists()


def _nested_missing_path_dependency(root: Path) -> None:
    """Workspace member `app` -> path dependency `lib` (there) -> path dependency `helper`,
    whose directory is gone (a lockfile from when it was there)."""
    package = '[package]\nname = "{0}"\nversion = "0.1.0"\nedition = "2021"\n'
    (root / "Cargo.toml").write_text('[workspace]\nmembers = ["app"]\nresolver = "2"\n')
    for name, target, dependency in (("app", "main", "lib"), ("lib", "lib", "helper")):
        (root / name / "src").mkdir(parents=True)
        (root / name / "src" / f"{target}.rs").write_text("")
        (root / name / "Cargo.toml").write_text(
            package.format(name)
            + f'\n[dependencies]\n{dependency} = {{ path = "../{dependency}" }}\n'
        )
    lock = ["version = 4"]
    for name, dependencies in (("app", ["lib"]), ("helper", []), ("lib", ["helper"])):
        lock += ["", "[[package]]", f'name = "{name}"', 'version = "0.1.0"']
        lock += [f'dependencies = ["{d}"]' for d in dependencies]
    (root / "Cargo.lock").write_text("\n".join(lock) + "\n")


def test_a_broken_members_manifest_is_cargos_one_line(
    tmp_path: Path, offline_cargo: object
) -> None:
    """The members' manifests are read while cargo works (pipeline._read_members); a broken
    one is told once cargo has refused it, at its file, line and column first (refusal.py),
    where cargo gives them as it pleases."""
    package = '[package]\nname = "{0}"\nversion = "0.1.0"\nedition = "2021"\n'
    (tmp_path / "Cargo.toml").write_text('[workspace]\nmembers = ["a", "b"]\nresolver = "2"\n')
    for name, tail in (("a", ""), ("b", "[dependencies\n")):
        (tmp_path / name / "src").mkdir(parents=True)
        (tmp_path / name / "src" / "main.rs").write_text("fn main() {}\n")
        (tmp_path / name / "Cargo.toml").write_text(package.format(name) + tail)
    result = run_in_process(str(tmp_path))
    assert result.returncode == 2
    _assert_one_clear_line(result.stderr, f"featcheck: error: {tmp_path}/b/Cargo.toml:5:14: ")


@pytest.mark.parametrize("mode", [(), ("--no-exec",)])
def test_a_missing_nested_path_dependency_names_the_missing_file(
    tmp_path: Path, offline_cargo: object, mode: tuple[str, ...]
) -> None:
    """Not "failed to load workspace member `app`" (which is there): the file that is not."""
    _nested_missing_path_dependency(tmp_path)
    result = run_in_process(str(tmp_path), *mode)
    assert result.returncode == 2
    _assert_one_clear_line(result.stderr, "helper/Cargo.toml")
    missing = result.stderr.index("helper/Cargo.toml")
    assert "app" not in result.stderr[:missing].removeprefix(f"featcheck: error: {tmp_path}")


def test_unknown_member(offline_cargo_for: Callable[..., Path]) -> None:
    offline_cargo_for(CRATES / "pitb-exec-cpu")
    result = run_in_process(str(CRATES / "pitb-exec-cpu"), "-p", "nope")
    assert result.returncode == 2
    _assert_one_clear_line(result.stderr, "no workspace member named nope")


def test_unknown_target(offline_cargo_for: Callable[..., Path]) -> None:
    offline_cargo_for(CRATES / "pitb-exec-cpu")
    result = run_in_process(str(CRATES / "pitb-exec-cpu"), "--target", "not-a-triple")
    assert result.returncode == 2
    _assert_one_clear_line(result.stderr)


def test_usage_error_exits_2() -> None:
    result = run_in_process("--format", "yaml", ".")
    assert result.returncode == 2
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize("text", ["", "hello\n", "\x00\xff garbage"])
def test_tree_input_that_is_not_a_tree(text: str) -> None:
    result = run_in_process("--tree", "-", stdin=text)
    assert result.returncode == 2
    _assert_one_clear_line(result.stderr, "<stdin>")


def test_tree_without_features_names_the_line() -> None:
    result = run_in_process("--tree", "-", stdin="app v0.1.0 (/src/app)\n")
    assert result.returncode == 2
    _assert_one_clear_line(result.stderr, "<stdin>:1: ", "-f '{p} [{f}]'")


def test_tree_file_that_does_not_exist(tmp_path: Path) -> None:
    result = run_in_process("--tree", str(tmp_path / "missing.txt"))
    assert result.returncode == 2
    _assert_one_clear_line(result.stderr, "missing.txt: cannot read")


def test_saved_ambiguity_error_lists_the_versions() -> None:
    stderr = (TREES / "two-versions.invert-burn-flex.stderr.txt").read_text()
    result = run_in_process("--tree", "-", stdin=stderr)
    assert result.returncode == 2
    _assert_one_clear_line(result.stderr, "burn-flex@0.21.0, burn-flex@0.22.1")


def test_a_reader_that_went_away_gets_no_traceback(offline_cargo_for: Callable[..., Path]) -> None:
    """`featcheck | head -0`: the report has nobody to go to; exit 2, and stderr stays clean."""
    offline_cargo_for(CRATES / "pitb-exec-cpu")
    process = subprocess.Popen(
        [sys.executable, "-m", "featcheck", str(CRATES / "pitb-exec-cpu")],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ, "NO_COLOR": "1"},
    )
    assert process.stdout is not None and process.stderr is not None
    process.stdout.close()
    stderr = process.stderr.read().decode()
    assert process.wait(timeout=120) == 2
    assert "Traceback" not in stderr and "BrokenPipe" not in stderr, stderr
