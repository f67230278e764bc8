"""`--no-exec` on checkouts cargo refuses or that try to reach outside themselves.

Each case runs the real command line in the test's process (cli_in_process.run_in_process:
what is checked is what featcheck reads and prints), with an empty CARGO_HOME: the answer is
one line on stderr naming the file, exit 2, never a traceback, no raw control character, and
nothing quoted from a manifest outside the checkout (each "other project" holds a marker string
that must never appear in the output).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest
from cli_in_process import run_in_process

MARKER = "other-project-secret-7f3a"
CRATES_IO = "registry+https://github.com/rust-lang/crates.io-index"


def _package(directory: Path, name: str, extra: str = "") -> None:
    (directory / "src").mkdir(parents=True, exist_ok=True)
    (directory / "src" / "lib.rs").write_text("")
    (directory / "Cargo.toml").write_text(
        f'[package]\nname = "{name}"\nversion = "0.1.0"\nedition = "2021"\n{extra}'
    )


def _lock(directory: Path, *packages: tuple[str, list[str]]) -> None:
    text = "version = 4\n"
    for name, dependencies in packages:
        text += f'\n[[package]]\nname = "{name}"\nversion = "0.1.0"\n'
        if dependencies:
            text += "dependencies = [" + ", ".join(f'"{d}"' for d in dependencies) + "]\n"
    (directory / "Cargo.lock").write_text(text)


def _other_project(directory: Path) -> None:
    """A project next to the checkout, whose manifest must never be read or quoted."""
    _package(directory, "secret", f'# {MARKER}\n[dependencies]\n"{MARKER}" = [\n')


def _workspace(root: Path, members: str) -> None:
    root.mkdir(parents=True, exist_ok=True)
    (root / "Cargo.toml").write_text(f'[workspace]\nresolver = "2"\nmembers = {members}\n')
    _lock(root)


def members_above(tmp: Path) -> Path:
    _other_project(tmp / "secret")
    _workspace(tmp / "ws", '["../*"]')
    return tmp / "ws"


def members_absolute(tmp: Path) -> Path:
    _other_project(tmp / "elsewhere" / "secret")
    _workspace(tmp / "ws", f'["{(tmp / "elsewhere").as_posix()}/*"]')
    return tmp / "ws"


def members_tmp_glob(tmp: Path) -> Path:
    _workspace(tmp / "ws", '["/tmp/*"]')
    return tmp / "ws"


def member_link_out(tmp: Path) -> Path:
    _other_project(tmp / "secret")
    _workspace(tmp / "ws", '["inner"]')
    (tmp / "ws" / "inner").symlink_to(tmp / "secret", target_is_directory=True)
    return tmp / "ws"


def member_missing(tmp: Path) -> Path:
    _workspace(tmp / "ws", '["gone"]')
    return tmp / "ws"


def member_glob_without_manifest(tmp: Path) -> Path:
    _workspace(tmp / "ws", '["crates/*"]')
    _package(tmp / "ws" / "crates" / "a", "a")
    (tmp / "ws" / "crates" / "scratch").mkdir()
    return tmp / "ws"


def member_name_300_characters(tmp: Path) -> Path:
    _workspace(tmp / "ws", '["' + "a" * 300 + '"]')
    return tmp / "ws"


def member_manifest_link_loop(tmp: Path) -> Path:
    """Unreadable even for root (the suite may run as root, where chmod 000 is no barrier)."""
    _workspace(tmp / "ws", '["m"]')
    (tmp / "ws" / "m").mkdir()
    (tmp / "ws" / "m" / "Cargo.toml").symlink_to("Cargo.toml")
    return tmp / "ws"


def member_manifest_is_a_directory(tmp: Path) -> Path:
    _workspace(tmp / "ws", '["m"]')
    (tmp / "ws" / "m" / "Cargo.toml").mkdir(parents=True)
    return tmp / "ws"


def path_dependency_cycle(tmp: Path) -> Path:
    _workspace(tmp / "ws", '["a", "b"]')
    _package(tmp / "ws" / "a", "a", '[dependencies]\nb = { path = "../b" }\n')
    _package(tmp / "ws" / "b", "b", '[dependencies]\na = { path = "../a" }\n')
    _lock(tmp / "ws", ("a", ["b"]), ("b", ["a"]))
    return tmp / "ws"


def escape_in_package_name(tmp: Path) -> Path:
    _package(tmp / "p", "evil\\u001b[31m\\u001b]0;title\\u0007")
    _lock(tmp / "p")
    return tmp / "p"


def escape_in_glob_member_directory(tmp: Path) -> Path:
    _workspace(tmp / "ws", '["*"]')
    (tmp / "ws" / "m\x1b[2J").mkdir()
    return tmp / "ws"


def escape_in_cfg_table(tmp: Path) -> Path:
    _package(tmp / "p", "p", '[target."cfg(\\u001b[2J)".dependencies]\nburn = "1"\n')
    _lock(tmp / "p", ("p", []))
    return tmp / "p"


def unbalanced_cfg_table(tmp: Path) -> Path:
    _package(tmp / "p", "p", '[target."cfg(unix".dependencies]\nburn = "1"\n')
    _lock(tmp / "p", ("p", []))
    return tmp / "p"


def dependency_of_wrong_type(tmp: Path) -> Path:
    _package(tmp / "p", "p", "[dependencies]\nburn = 5\n")
    _lock(tmp / "p", ("p", []))
    return tmp / "p"


def lockfile_of_wrong_shape(tmp: Path) -> Path:
    _package(tmp / "p", "p")
    (tmp / "p" / "Cargo.lock").write_text("package = 5\n")
    return tmp / "p"


def lockfile_out_of_date(tmp: Path) -> Path:
    _package(tmp / "p", "p", '[dependencies]\nburn-flex = "0.22"\n')
    _lock(tmp / "p", ("p", []))
    return tmp / "p"


def not_a_member_of_the_parent_workspace(tmp: Path) -> Path:
    _workspace(tmp / "ws", '["a"]')
    _package(tmp / "ws" / "a", "a")
    _package(tmp / "ws" / "stray", "stray")
    return tmp / "ws" / "stray"


def lockfile_is_a_fifo(tmp: Path) -> Path:
    _package(tmp / "p", "p")
    os.mkfifo(tmp / "p" / "Cargo.lock")
    return tmp / "p"


def member_manifest_too_large(tmp: Path) -> Path:
    _workspace(tmp / "ws", '["m"]')
    _package(tmp / "ws" / "m", "m", "# " + "x" * (3 << 20) + "\n")
    return tmp / "ws"


REFUSED: dict[str, tuple[Callable[[Path], Path], str]] = {
    f.__name__: (f, why)
    for f, why in [
        (members_above, "is not hierarchically below the workspace root"),
        (members_absolute, "is not hierarchically below the workspace root"),
        (members_tmp_glob, "is not hierarchically below the workspace root"),
        (member_link_out, "is not hierarchically below the workspace root"),
        (member_missing, "failed to load manifest for workspace member `gone`"),
        (member_glob_without_manifest, "workspace member `crates/scratch` (matched by"),
        (member_name_300_characters, "File name too long"),
        (member_manifest_link_loop, "failed to load a workspace member"),
        (member_manifest_is_a_directory, "it has no Cargo.toml"),
        (path_dependency_cycle, "cyclic package dependency: package `a v0.1.0`"),
        (escape_in_package_name, "invalid package name `evil\\u{1b}[31m"),
        (escape_in_glob_member_directory, "member `m\\u{1b}[2J`"),
        (escape_in_cfg_table, "invalid cfg expression `cfg(\\u{1b}[2J)`"),
        (unbalanced_cfg_table, "invalid cfg expression `cfg(unix`"),
        (dependency_of_wrong_type, "dependency `burn` must be a version string or a table"),
        (lockfile_of_wrong_shape, "Cargo.lock: `package` must be an array of tables"),
        (lockfile_out_of_date, "out of date: p 0.1.0 depends on `burn-flex`"),
        (not_a_member_of_the_parent_workspace, "believes it's in a workspace when it's not"),
        (lockfile_is_a_fifo, "Cargo.lock: is not a regular file"),
        (member_manifest_too_large, "is larger than 2 MiB"),
    ]
}


@pytest.mark.parametrize("case", REFUSED)
def test_refused_in_one_line(case: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    build, why = REFUSED[case]
    path = build(tmp_path)
    monkeypatch.setenv("CARGO_HOME", str(tmp_path / "empty-cargo-home"))
    result = run_in_process(str(path), "--no-exec")
    assert result.returncode == 2, result.stderr
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("featcheck: error: "), result.stderr
    assert why in lines[0]
    output = result.stdout + result.stderr
    assert "Traceback" not in output
    assert MARKER not in output
    assert not any(ord(c) < 0x20 and c != "\n" for c in output)


def test_unreadable_member_directory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    if os.geteuid() == 0:
        pytest.skip("root reads a chmod 000 directory (the link-loop case covers root)")
    _workspace(tmp_path / "ws", '["m"]')
    _package(tmp_path / "ws" / "m", "m")
    (tmp_path / "ws" / "m").chmod(0)
    try:
        monkeypatch.setenv("CARGO_HOME", str(tmp_path / "empty-cargo-home"))
        result = run_in_process(str(tmp_path / "ws"), "--no-exec")
    finally:
        (tmp_path / "ws" / "m").chmod(0o755)
    assert result.returncode == 2
    assert "Traceback" not in result.stderr and len(result.stderr.splitlines()) == 1


def test_path_dependency_outside_the_checkout_is_not_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """cargo would read it; --no-exec does not, and says so only where it matters."""
    _other_project(tmp_path / "secret")
    _package(tmp_path / "ws", "app", '[dependencies]\nsecret = { path = "../secret" }\n')
    _lock(tmp_path / "ws", ("app", ["secret"]), ("secret", []))
    monkeypatch.setenv("CARGO_HOME", str(tmp_path / "empty-cargo-home"))
    result = run_in_process(str(tmp_path / "ws"), "--no-exec", "--format", "json")
    assert MARKER not in result.stdout + result.stderr
    # Nothing below it could hold a backend: the unread package changes no verdict.
    assert result.returncode == 0, result.stderr
    # With a backend in the lockfile below it, the verdict depends on it: incomplete.
    _package(tmp_path / "ws", "app", '[dependencies]\nsecret = { path = "../secret" }\n')
    lock = (tmp_path / "ws" / "Cargo.lock").read_text()
    lock = lock.replace(
        'name = "secret"\nversion = "0.1.0"\n',
        'name = "secret"\nversion = "0.1.0"\ndependencies = ["burn-flex"]\n',
    )
    lock += f'\n[[package]]\nname = "burn-flex"\nversion = "0.22.1"\nsource = "{CRATES_IO}"\n'
    (tmp_path / "ws" / "Cargo.lock").write_text(lock)
    result = run_in_process(str(tmp_path / "ws"), "--no-exec")
    assert result.returncode == 2
    assert "could not read secret@0.1.0 (a path outside the workspace root" in result.stdout
    # `cargo fetch` does not read it either: only dropping --no-exec helps.
    assert "drop --no-exec (cargo reads them)" in result.stdout
    assert "cargo fetch" not in result.stdout + result.stderr
    assert MARKER not in result.stdout + result.stderr
    assert result.stderr.startswith("featcheck: incomplete audit:")
    assert len(result.stderr.splitlines()) == 1
