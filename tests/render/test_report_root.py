"""File paths are relative to the repository root (git's top level, found by its `.git`), else
to the audited directory, in every format; `--root DIR` chooses another base."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from actions_support import clear_actions_environment
from cargo_memo import session_memo
from cli_in_process import printed, run_in_process
from support import CRATES

pytestmark = pytest.mark.usefixtures("remembered_cargo")
"""featcheck's cargo answers an identical question (the same crate audited from several
places, in several formats) from its first real answer (tests/cargo_memo.py)."""


@pytest.fixture(autouse=True)
def _outside_actions(monkeypatch: pytest.MonkeyPatch) -> None:
    clear_actions_environment(monkeypatch)


def _repository(tmp_path: Path, *, git: bool = True) -> Path:
    """A repository whose crate lies in crates/app (the example crate, one FC001 on line 9)."""
    repository = tmp_path / "repo"
    shutil.copytree(
        CRATES / "pitb-exec-cpu",
        repository / "crates" / "app",
        ignore=shutil.ignore_patterns("target"),
    )
    if git:
        (repository / ".git").mkdir()
    return repository


def _places(cwd: Path, *args: str) -> dict[str, str]:
    """Where each format says the finding is, run from `cwd` on `.` (the four command lines
    from the audits they share, as `featcheck` prints each: cli_in_process.printed)."""
    formats = {kind: [".", "--format", kind, *args] for kind in ("text", "json", "github", "sarif")}
    outputs = printed(formats, cwd, session_memo().source, processes=True)
    code, stdout, stderr = _printed_parts(outputs["text"])
    assert code == 1, stderr
    [arrow] = [line for line in stdout.splitlines() if line.startswith("  --> ")]
    [finding] = json.loads(_printed_parts(outputs["json"])[1])["findings"]
    github = _printed_parts(outputs["github"])[1]
    sarif = json.loads(_printed_parts(outputs["sarif"])[1])
    [result] = sarif["runs"][0]["results"]
    return {
        "text": arrow.removeprefix("  --> "),
        "json": finding["location"]["file"],
        "fix": finding["fix"]["edits"][0]["file"],
        "github": github.split("::error file=", 1)[1].split(",", 1)[0],
        "sarif": result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
    }


def _printed_parts(output: str) -> tuple[int, str, str]:
    """The exit code, stdout and stderr of one of `printed`'s outputs."""
    code, rest = output.removeprefix("exit code: ").split("\n--- stdout\n", 1)
    stdout, stderr = rest.rsplit("--- stderr\n", 1)
    return int(code), stdout, stderr


def test_locations_from_a_subdirectory_are_relative_to_the_repository_root(
    offline_cargo_for: Callable[..., Path], tmp_path: Path
) -> None:
    offline_cargo_for(CRATES / "pitb-exec-cpu")
    crate = _repository(tmp_path) / "crates" / "app"
    assert _places(crate) == {
        "text": "crates/app/Cargo.toml:9:31",
        "json": "crates/app/Cargo.toml",
        "fix": "crates/app/Cargo.toml",
        "github": "crates/app/Cargo.toml",
        "sarif": "crates/app/Cargo.toml",
    }
    # The fix, the diff and suppressions work on the same paths.
    diff = run_in_process(".", "--diff", cwd=crate)
    assert "+++ b/crates/app/Cargo.toml" in diff.stdout, diff.stdout


def test_root_chooses_the_base(offline_cargo_for: Callable[..., Path], tmp_path: Path) -> None:
    offline_cargo_for(CRATES / "pitb-exec-cpu")
    crate = _repository(tmp_path) / "crates" / "app"
    assert set(_places(crate, "--root", ".").values()) == {"Cargo.toml:9:31", "Cargo.toml"}
    assert _places(crate, "--root", "../..")["json"] == "crates/app/Cargo.toml"


def test_outside_a_repository_paths_are_relative_to_the_audited_directory(
    offline_cargo_for: Callable[..., Path], tmp_path: Path
) -> None:
    offline_cargo_for(CRATES / "pitb-exec-cpu")
    repository = _repository(tmp_path, git=False)
    assert set(_places(repository / "crates" / "app").values()) == {
        "Cargo.toml:9:31",
        "Cargo.toml",
    }
    # A worktree's or submodule's `.git` is a file: that is a repository root too.
    (repository / ".git").write_text("gitdir: /elsewhere\n")
    assert _places(repository / "crates" / "app")["sarif"] == "crates/app/Cargo.toml"


def test_an_inline_suppression_counts_from_a_subdirectory(
    offline_cargo_for: Callable[..., Path], tmp_path: Path
) -> None:
    offline_cargo_for(CRATES / "pitb-exec-cpu")
    crate = _repository(tmp_path) / "crates" / "app"
    manifest = crate / "Cargo.toml"
    lines = manifest.read_text().splitlines(keepends=True)
    lines[8] = lines[8].rstrip("\n") + "  # featcheck: allow(FC001, FC003) a wasm build\n"
    manifest.write_text("".join(lines))
    done = run_in_process(".", cwd=crate)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "2 suppressed" in done.stdout


def test_a_root_that_is_not_a_directory_is_one_line_and_exit_2(tmp_path: Path) -> None:
    done = run_in_process(str(CRATES / "pitb-exec-cpu"), "--root", str(tmp_path / "missing"))
    assert done.returncode == 2
    assert done.stderr == f"featcheck: error: {tmp_path / 'missing'}: --root: not a directory\n"


def test_fix_from_a_subdirectory_names_the_files_from_the_repository_root(
    offline_cargo_for: Callable[..., Path], tmp_path: Path
) -> None:
    offline_cargo_for(CRATES / "pitb-exec-cpu")
    crate = _repository(tmp_path) / "crates" / "app"
    fixed = run_in_process(".", "--fix", "--format", "json", cwd=crate)
    assert fixed.returncode == 0, fixed.stderr
    # The diff on stderr, then the audit of the fixed crate, both from the repository root.
    assert "+++ b/crates/app/Cargo.toml" in fixed.stderr, fixed.stderr
    assert "+++ b/crates/app/Cargo.lock" in fixed.stderr, fixed.stderr
    assert '"rayon"' in (crate / "Cargo.toml").read_text()
