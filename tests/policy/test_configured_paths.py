"""Paths the checkout configures stay inside the checkout, as written and with links followed.

Each attack is a pull request's: the checkout (the template crate that loses rayon, FC001) names
a file outside itself in its own configuration, a file of another project beside it whose first
word is a marker. featcheck runs as a user runs it (its command line, in this process), in the
default mode over real cargo (offline, the stub registry) and with `--no-exec`. Refused: one line naming the
configuring file and line, exit 2, and nothing of the file outside in the output (the path as
the checkout wrote it is the checkout's own text), not even whether it exists. A path the user gives on the command line is theirs and may lie anywhere.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from cli_in_process import run_in_process
from support import CRATES

MARKER = "victim-secret-9c4e"
# Six fields, so that a baseline reader gets as far as quoting the first one.
VICTIM_TEXT = f"{MARKER} error FC001 app - default\n"

MODES = {"default": (), "no-exec": ("--no-exec",)}


@pytest.fixture(params=list(MODES))
def mode(request: pytest.FixtureRequest, tmp_path: Path) -> tuple[str, ...]:
    """Each attack in both modes: the default one over the stub registry, `--no-exec` with
    an empty cargo home."""
    if request.param == "default":
        request.getfixturevalue("offline_cargo")
    else:
        monkeypatch = request.getfixturevalue("monkeypatch")
        monkeypatch.setenv("CARGO_HOME", str(tmp_path / "empty-cargo-home"))
    return MODES[request.param]


def _checkout(tmp: Path) -> Path:
    """The checkout in `tmp/ws`, and beside it the victim's file, `tmp/victim-file.toml`."""
    project = tmp / "ws"
    shutil.copytree(CRATES / "pitb-exec-cpu", project, ignore=shutil.ignore_patterns("target"))
    (tmp / "victim-file.toml").write_text(VICTIM_TEXT)
    return project


def _refused(done: subprocess.CompletedProcess[str], where: str, says: str) -> None:
    output = done.stdout + done.stderr
    assert done.returncode == 2, output
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"featcheck: error: {where}"), done.stderr
    assert says in lines[0], lines[0]
    assert "Traceback" not in output
    assert MARKER not in output  # the path the checkout wrote is its own; the file is not


@pytest.mark.parametrize(
    "written",
    ["../victim-file.toml", "sub/../../victim-file.toml", "{tmp}/victim-file.toml"],
)
def test_a_configured_baseline_outside_the_checkout_is_refused(
    written: str, mode: tuple[str, ...], tmp_path: Path
) -> None:
    project = _checkout(tmp_path)
    value = written.format(tmp=tmp_path.as_posix())
    (project / "featcheck.toml").write_text(f'fail-on = "error"\nbaseline = "{value}"\n')
    done = run_in_process(str(project), *mode)
    _refused(done, f"{project / 'featcheck.toml'}:2:12: ", "`baseline` names")


def test_a_baseline_in_the_workspace_metadata_is_held_to_the_same(
    mode: tuple[str, ...], tmp_path: Path
) -> None:
    project = _checkout(tmp_path)
    manifest = project / "Cargo.toml"
    lines = manifest.read_text().splitlines()
    manifest.write_text(
        "\n".join(lines)
        + '\n\n[workspace]\n\n[workspace.metadata.featcheck]\nbaseline = "../victim-file.toml"\n'
    )
    done = run_in_process(str(project), *mode)
    _refused(done, f"{manifest}:{len(lines) + 5}:12: ", "outside the checkout")


def test_a_link_to_the_checkout_root_does_not_lead_a_baseline_out(
    mode: tuple[str, ...], tmp_path: Path
) -> None:
    """`top/..` reads as inside when `..` is taken away as written, yet `top` is the root
    itself, so the kernel goes above it: the path is also asked with every link followed."""
    project = _checkout(tmp_path)
    (project / "top").symlink_to(project, target_is_directory=True)
    (project / "featcheck.toml").write_text('baseline = "top/../victim-file.toml"\n')
    done = run_in_process(str(project), *mode)
    _refused(done, f"{project / 'featcheck.toml'}:1:12: ", "outside the checkout")


@pytest.mark.parametrize(
    "entry",
    [
        '"../../victim-file.toml"',
        # Optional and missing: refused all the same, so that nothing tells what exists.
        '{ path = "../../no-such-file.toml", optional = true }',
    ],
)
def test_a_cargo_configuration_includes_nothing_outside_the_checkout(
    entry: str, mode: tuple[str, ...], tmp_path: Path
) -> None:
    project = _checkout(tmp_path)
    (project / ".cargo").mkdir()
    (project / ".cargo" / "config.toml").write_text(f"include = [{entry}]\n")
    done = run_in_process(str(project), *mode)
    _refused(done, f"{project / '.cargo' / 'config.toml'}:1:12: ", "`include` names")


def test_an_include_inside_the_checkout_is_read(tmp_path: Path, offline_cargo: Path) -> None:
    project = _checkout(tmp_path)
    (project / ".cargo").mkdir()
    (project / "shared.toml").write_text('[alias]\nxtask = "run -p xtask --"\n')
    (project / ".cargo" / "config.toml").write_text('include = ["../shared.toml"]\n')
    done = run_in_process(str(project))
    assert done.returncode == 1, done.stderr
    assert "error[FC001]" in done.stdout


def test_package_workspace_outside_says_nothing_of_what_is_there(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Whether the directory outside holds a Cargo.toml gives the same one line."""
    monkeypatch.setenv("CARGO_HOME", str(tmp_path / "empty-cargo-home"))
    project = _checkout(tmp_path)
    manifest = project / "Cargo.toml"
    text = manifest.read_text().replace("[package]\n", '[package]\nworkspace = "../other"\n', 1)
    manifest.write_text(text)
    answers = []
    for holds_a_manifest in (False, True):
        if holds_a_manifest:
            (tmp_path / "other").mkdir()
            (tmp_path / "other" / "Cargo.toml").write_text(f"# {MARKER}\n[workspace]\n")
        done = run_in_process(str(project), "--no-exec")
        _refused(done, f"{manifest}: ", "outside the checkout")
        answers.append(done.stderr)
    assert answers[0] == answers[1]
