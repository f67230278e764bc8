"""Without `--target`, featcheck audits what a plain `cargo build` (and `cargo tree`) builds for:
the cargo configuration's `build.target` (CARGO_BUILD_TARGET first), else the host. A crate
configured for the browser was audited, and flagged, as a host build cargo never makes."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from history_support import (
    TRIMMED_MEMCHR,
    environment,
    featcheck_in_process,
    member,
    new_repository,
    registry_home,
)

pytestmark = [pytest.mark.cargo, pytest.mark.usefixtures("remembered_cargo")]

PLAIN_REGEX = 'regex = "1.11"\n'  # new_repository locks its version
ON_X86_64 = "\n[target.'cfg(target_arch = \"x86_64\")'.dependencies]\n" + TRIMMED_MEMCHR


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return registry_home(tmp_path_factory.mktemp("registry"))


def _audit(repository: Path, home: Path, *arguments: str) -> tuple[list[str], list[str]]:
    done = featcheck_in_process(repository, home, "--format", "json", *arguments)
    assert done.returncode in (0, 1), done.stderr
    report = json.loads(done.stdout)
    return report["targets"], [f"{f['code']} {f['target']}" for f in report["findings"]]


def _cargo_builds_memchr(repository: Path, home: Path) -> bool:
    tree = subprocess.run(
        ["cargo", "tree", "-e", "normal", "-p", "a"],
        cwd=repository,
        capture_output=True,
        text=True,
        check=True,
        env=environment(home),
    ).stdout
    return "memchr" in tree


@pytest.mark.parametrize("mode", [(), ("--no-exec",)], ids=["cargo", "no-exec"])
def test_the_configurations_build_target_is_what_is_audited(
    mode: tuple[str, ...], home: Path, tmp_path: Path
) -> None:
    repository = new_repository(
        tmp_path / "repo", home, member("a", "") + ON_X86_64, member("b", PLAIN_REGEX)
    )
    host = "x86_64-unknown-linux-gnu"
    assert _audit(repository, home, *mode) == ([host], [f"FC012 {host}"])

    (repository / ".cargo").mkdir()
    (repository / ".cargo" / "config.toml").write_text(
        '[build]\ntarget = "wasm32-unknown-unknown"\n'
    )
    assert not _cargo_builds_memchr(repository, home)
    assert _audit(repository, home, *mode) == (["wasm32-unknown-unknown"], [])
    # `--target` wins over the configuration, as in cargo.
    assert _audit(repository, home, *mode, "--target", host) == ([host], [f"FC012 {host}"])

    # Several targets, as cargo builds them all.
    both = '[build]\ntarget = ["wasm32-unknown-unknown", "x86_64-unknown-linux-gnu"]\n'
    (repository / ".cargo" / "config.toml").write_text(both)
    assert _audit(repository, home, *mode) == (
        ["wasm32-unknown-unknown", host],
        [f"FC012 {host}"],
    )


@pytest.mark.parametrize("mode", [(), ("--no-exec",)], ids=["cargo", "no-exec"])
@pytest.mark.parametrize("planted", ['"@/tmp/arguments"', '["wasm32-unknown-unknown", "-Zfoo"]'])
def test_a_build_target_that_is_no_triple_is_refused_at_its_line(
    planted: str, mode: tuple[str, ...], home: Path, tmp_path: Path
) -> None:
    """The checkout's configuration names the targets cargo and rustc are asked about: an
    argument file or a flag in their place is refused before any process sees it."""
    repository = new_repository(tmp_path / "repo", home, member("a", ""), member("b", PLAIN_REGEX))
    config = repository / ".cargo" / "config.toml"
    config.parent.mkdir()
    config.write_text(f"[build]\ntarget = {planted}\n")
    done = featcheck_in_process(repository, home, *mode)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr.startswith(f"featcheck: error: {config}:2:10: `"), done.stderr
    assert "is not a target triple" in done.stderr and done.stderr.count("\n") == 1


@pytest.mark.parametrize(
    ("mode", "target"), [(("--no-exec",), "xtensa-esp32-none-elf"), ((), "x86_64-linux")]
)
def test_a_build_target_featcheck_cannot_audit_says_where_it_comes_from(
    mode: tuple[str, ...], target: str, home: Path, tmp_path: Path
) -> None:
    """One `--no-exec` has no cfg table for, one rustc does not know (a typo): the user passed
    no `--target`, so the line says which setting named it."""
    repository = new_repository(tmp_path / "repo", home, member("a", ""), member("b", PLAIN_REGEX))
    (repository / ".cargo").mkdir()
    (repository / ".cargo" / "config.toml").write_text(f'[build]\ntarget = "{target}"\n')
    done = featcheck_in_process(repository, home, *mode)
    assert (done.returncode, done.stdout, done.stderr.count("\n")) == (2, "", 1)
    assert f"target '{target}'" in done.stderr
    assert done.stderr.endswith("(it is the cargo configuration's `build.target`)\n")
