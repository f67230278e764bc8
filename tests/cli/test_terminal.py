"""Terminal manners: --quiet, --verbose, the spinner, colour, --version and --help."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from actions_support import clear_actions_environment
from cargo_tree_oracle import run_featcheck_resolved_by
from cli_in_process import run_in_process
from support import CRATES, run_in_terminal

from featcheck import __version__

COLOUR = re.compile(r"\x1b\[[0-9;]*(3[0-9]|9[0-7])(;[0-9]+)*m")
ANY_ESCAPE = re.compile(r"\x1b\[")


@pytest.fixture(autouse=True)
def _outside_actions(monkeypatch: pytest.MonkeyPatch) -> None:
    clear_actions_environment(monkeypatch)


@pytest.mark.usefixtures("remembered_cargo")
def test_quiet_prints_only_findings(offline_cargo_for: Callable[..., Path]) -> None:
    offline_cargo_for(CRATES / "pitb-exec-cpu")
    done = run_in_process(str(CRATES / "pitb-exec-cpu"), "-q")
    assert done.returncode == 1
    assert done.stdout.startswith("pitb-exec-cpu (")
    assert "error[FC001]" in done.stdout
    assert "1 error (1 member" not in done.stdout
    assert done.stderr == ""


@pytest.mark.usefixtures("remembered_cargo")
def test_quiet_prints_nothing_on_success(offline_cargo_for: Callable[..., Path]) -> None:
    offline_cargo_for(CRATES / "pitb-exec-cpu-simd")
    done = run_in_process(str(CRATES / "pitb-exec-cpu-simd"), "--quiet")
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")


def _commands(stderr: str) -> list[str]:
    return [
        line.removeprefix("featcheck: running: ")
        for line in stderr.splitlines()
        if line.startswith("featcheck: running: ")
    ]


def test_verbose_shows_each_cargo_command_on_stderr(offline_cargo_for: Callable[..., Path]) -> None:
    offline_cargo_for(CRATES / "pitb-exec-cpu-simd")
    done = run_in_process(str(CRATES / "pitb-exec-cpu-simd"), "-v")
    assert done.returncode == 0
    commands = _commands(done.stderr)
    # One cargo metadata call; featcheck resolves the features itself.
    assert (
        sum(c.startswith("cargo metadata --format-version=1 --manifest-path=") for c in commands)
        == 1
    )
    assert not any(c.startswith("cargo tree ") for c in commands)
    assert done.stdout.startswith("no findings")
    with_cargo = _commands(
        run_featcheck_resolved_by("cargo", str(CRATES / "pitb-exec-cpu-simd"), "-v").stderr
    )
    assert any(
        c.startswith("cargo tree --manifest-path=") and " --edges=normal " in c for c in with_cargo
    )


def test_spinner_and_colour_only_on_a_terminal(offline_cargo_for: Callable[..., Path]) -> None:
    offline_cargo_for(CRATES / "pitb-exec-cpu")
    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "FORCE_COLOR")}
    env.update(TERM="xterm-256color", COLUMNS="200")
    drawn = run_in_terminal([str(CRATES / "pitb-exec-cpu")], env)
    assert "Resolving features" in drawn
    assert COLOUR.search(drawn), drawn[:500]
    # The report itself, not only the spinner: its finding line is styled.
    [finding_line] = [line for line in drawn.splitlines() if "FC001]" in line]
    assert ANY_ESCAPE.search(finding_line), finding_line

    no_colour = run_in_terminal([str(CRATES / "pitb-exec-cpu")], {**env, "NO_COLOR": "1"})
    assert "error[FC001]" in no_colour
    assert not COLOUR.search(no_colour)

    piped = subprocess.run(
        [sys.executable, "-m", "featcheck", str(CRATES / "pitb-exec-cpu")],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    assert piped.returncode == 1
    assert not ANY_ESCAPE.search(piped.stdout + piped.stderr)
    assert "Resolving features" not in piped.stderr


def test_version() -> None:
    done = run_in_process("--version")
    assert (done.returncode, done.stdout) == (0, f"featcheck {__version__}\n")


@pytest.mark.parametrize("args", [["--help"], ["-h"], ["check", "--help"], [".", "-h"]])
def test_help_has_examples(args: list[str]) -> None:
    done = run_in_process(*args)
    assert done.returncode == 0, done.stderr
    examples = done.stdout.split("Examples:")[1]
    assert "  featcheck crates/app -p app --target aarch64-apple-darwin\n" in examples
    assert "cargo tree -e normal -f '{p} [{f}]' -i burn-flex | featcheck --tree -" in examples
    assert "Exit codes: 0 clean, 1 findings" in examples
