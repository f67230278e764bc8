"""The composite GitHub Action (action.yml), its steps run locally the way the runner runs them.

Each `run:` script is executed with `bash --noprofile --norc -eo pipefail` (the runner's `shell:
bash`) in a copy of the repository (GITHUB_WORKSPACE), with the step's `env:` block evaluated
from the inputs and earlier steps' outputs, as the runner would.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import sysconfig
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from actions_support import (
    clear_actions_environment,
    example_workspace,
    load_action,
    markers_written,
    plant_python,
    run_action,
    runner_commands,
)
from support import CRATES, REPO

import featcheck

ANNOTATION = (
    "::error file=crates/pitb-exec-cpu/Cargo.toml,line=9,col=31,endLine=9,endColumn=55,"
    "title=FC001 flex-without-rayon::burn-flex 0.22.1 is built without `rayon`: "
    "every matmul runs on one core%0Amember pitb-exec-cpu, target "
)


@pytest.fixture(autouse=True)
def _outside_actions(monkeypatch: pytest.MonkeyPatch) -> None:
    clear_actions_environment(monkeypatch)


def test_inputs_reach_scripts_only_through_env() -> None:
    action = load_action()
    assert action["runs"]["using"] == "composite"
    assert set(action["inputs"]) == {"path", "args", "new-since", "sarif", "sarif-file"}
    assert {name: spec["default"] for name, spec in action["inputs"].items()} == {
        "path": ".",
        "args": "",
        "new-since": "",
        "sarif": "false",
        "sarif-file": "",
    }
    assert action["outputs"]["sarif-file"]["value"] == "${{ steps.run.outputs.sarif-file }}"
    for step in action["runs"]["steps"]:
        if "uses" in step:  # another action, pinned by a commit: a tag can be moved
            assert re.fullmatch(r"[\w./-]+@[0-9a-f]{40}", step["uses"]), step["uses"]
            continue
        assert step["shell"] == "bash"
        assert "${{" not in step["run"], step["name"]


STEP_START = 'cd -- "${RUNNER_TEMP:-${TMPDIR:-/tmp}}"'
"""How every step begins: in the runner's temporary directory, never in the checkout (the
runner's default). Not `working-directory: ${{ runner.temp }}`: in a container job that context
is the host's path, while $RUNNER_TEMP in the step's environment is the container's."""

PYTHON_CODE = re.compile(r"""\s(?:-c\s+["']|-m\s+\w|-\s+<<)""")
"""How a line of the scripts starts python on code that is not a file: `-c '…'`, `-m NAME`,
`- <<'PY'`, the three forms that put the current directory first on sys.path without -I."""


def test_no_step_runs_python_in_the_checkout_or_unisolated() -> None:
    """Every step leaves the checkout first; every python runs with -I (no current directory
    on sys.path); featcheck runs as its console script, never as `python -m featcheck`."""
    python_lines = []
    for step in load_action()["runs"]["steps"]:
        if "uses" in step:
            continue
        assert "working-directory" not in step, step["name"]
        lines = [line.strip() for line in step["run"].splitlines()]
        commands = [line for line in lines if line and not line.startswith("#")]
        assert commands[0] == STEP_START, step["name"]
        assert "-m featcheck" not in step["run"], step["name"]
        python_lines += [line for line in commands if PYTHON_CODE.search(line)]
    assert len(python_lines) == 6  # the key, the install's check, venv, pip, sysconfig, shlex
    assert [line for line in python_lines if not re.search(r"\s-I\s", line)] == []


def test_every_python_a_step_starts_is_isolated_and_outside_the_checkout(
    offline_cargo_for: Callable[..., Path], tmp_path: Path
) -> None:
    """The steps run as the runner runs them, with a python3 on PATH that notes where it was
    started and how: each must be isolated (-I) and none in the checkout."""
    offline_cargo_for(CRATES / "pitb-exec-cpu")
    shim = tmp_path / "python-shim"
    shim.mkdir()
    log = tmp_path / "python-starts"
    (shim / "python3").write_text(
        f'#!/bin/sh\nprintf \'%s\\t%s\\t%s\\n\' "$(pwd -P)" "$1" "$2" >> \'{log}\'\n'
        f"exec '{sys.executable}' \"$@\"\n"
    )
    (shim / "python3").chmod(0o755)
    run = run_action(tmp_path, {"path": "crates/pitb-exec-cpu"}, path_first=shim)
    assert run.status == 1, run.output
    starts = [line.split("\t") for line in log.read_text().splitlines()]
    # The cache key (`-I -`), the console script's directory and the args input (`-I -c`).
    assert [arguments for _, *arguments in starts] == [["-I", "-"], ["-I", "-c"], ["-I", "-c"]]
    workspace = run.workspace.resolve()
    assert [cwd for cwd, *_ in starts if Path(cwd).is_relative_to(workspace)] == []


def test_findings_fail_the_step_with_an_annotation_on_the_burn_line(
    offline_cargo_for: Callable[..., Path], tmp_path: Path
) -> None:
    offline_cargo_for(CRATES / "pitb-exec-cpu")
    run = run_action(tmp_path, {"path": "crates/pitb-exec-cpu"})
    assert run.status == 1, run.output
    [annotation] = runner_commands(run.output)
    assert annotation.startswith(ANNOTATION)
    assert "## featcheck: crates/pitb-exec-cpu\n" in run.summary
    assert "| Severity | Rule | Member | Crate | Feature | Target | Manifest | Fix |" in run.summary
    assert (
        "| error | FC001 flex-without-rayon | pitb-exec-cpu | burn-flex 0.22.1 | rayon |"
    ) in run.summary
    assert "| crates/pitb-exec-cpu/Cargo.toml:9 |" in run.summary
    assert not (run.workspace / "featcheck.sarif").exists()
    assert run.outputs["run"] == {}


def test_sarif_is_written_too_and_the_status_stays_featchecks(
    offline_cargo_for: Callable[..., Path], tmp_path: Path
) -> None:
    offline_cargo_for(CRATES / "pitb-exec-cpu")
    run = run_action(
        tmp_path, {"path": "crates/pitb-exec-cpu", "sarif": "true", "sarif-file": "out.sarif"}
    )
    assert run.status == 1, run.output
    # The output names the file absolute: the step runs outside the workspace.
    sarif = run.workspace / "out.sarif"
    assert f"featcheck: wrote SARIF to {sarif}" in run.output
    assert run.outputs["run"]["sarif-file"] == str(sarif)
    document = json.loads(sarif.read_text())
    [result] = document["runs"][0]["results"]
    location = result["locations"][0]["physicalLocation"]
    assert location["artifactLocation"]["uri"] == "crates/pitb-exec-cpu/Cargo.toml"
    assert location["region"]["startLine"] == 9


def test_a_clean_crate_passes_and_args_are_split_like_a_shell(
    offline_cargo_for: Callable[..., Path], tmp_path: Path
) -> None:
    offline_cargo_for(CRATES / "pitb-exec-cpu-simd")
    run = run_action(
        tmp_path,
        {
            "path": "crates/pitb-exec-cpu-simd",
            "args": "--fail-on 'error' -p \"pitb-exec-cpu-simd\"",
            "sarif": "true",
        },
    )
    assert run.status == 0, run.output
    assert runner_commands(run.output) == []
    assert "featcheck: no findings (1 member, " in run.output
    assert "**no findings (1 member, " in run.summary
    # Without sarif-file the SARIF goes to a fresh file under RUNNER_TEMP, named in the output.
    sarif = Path(run.outputs["run"]["sarif-file"])
    assert sarif.parent.parent == tmp_path / "runner-temp"
    assert sarif.name == "featcheck.sarif"
    document = json.loads(sarif.read_text())
    assert document["runs"][0]["results"] == []
    assert not (run.workspace / "featcheck.sarif").exists()


def test_inputs_are_data_not_code(offline_cargo: Path, tmp_path: Path) -> None:
    run = run_action(tmp_path, {"path": 'x"; echo INJECTED; echo "$(echo SUBSTITUTED)', "args": ""})
    assert run.status == 2, run.output
    assert "INJECTED\n" not in run.output
    assert "SUBSTITUTED" not in run.output.replace("$(echo SUBSTITUTED)", "")
    assert "featcheck: error: " in run.output


@pytest.mark.parametrize("path", ["--version", "@args", "-"])
def test_a_path_input_that_looks_like_an_option_or_argument_file_is_a_path(
    tmp_path: Path, path: str
) -> None:
    run = run_action(tmp_path, {"path": path})
    assert run.status == 2, run.output
    [annotation] = runner_commands(run.output)
    # On the file it names, relative to the workspace, as the runner names a repository's files.
    assert annotation == (
        f"::error file={path},title=featcheck::featcheck: error: {run.workspace / path}: no "
        "such file or directory"
    )


@pytest.mark.parametrize("args", ["--fail-on 'error", '-p "app', "trailing\\"])
def test_an_unbalanced_args_input_is_one_annotation_and_exit_2(tmp_path: Path, args: str) -> None:
    run = run_action(tmp_path, {"path": "crates/pitb-exec-cpu", "args": args})
    assert run.status == 2, run.output
    [annotation] = runner_commands(run.output)
    assert annotation.startswith("::error title=featcheck::featcheck: error: the args input: No ")
    assert [line for line in run.output.splitlines() if "featcheck: error" in line] == [annotation]
    assert "Traceback" not in run.output


def test_a_featcheck_error_is_one_annotation_and_no_sarif_to_upload(tmp_path: Path) -> None:
    run = run_action(tmp_path, {"path": "crates/missing", "sarif": "true"})
    assert run.status == 2, run.output
    # featcheck runs once: the error is printed once, as an annotation the job shows.
    [annotation] = runner_commands(run.output)
    assert annotation.startswith(
        "::error file=crates/missing,title=featcheck::featcheck: error: "
    ), annotation
    assert annotation.endswith("crates/missing: no such file or directory"), annotation
    assert run.output.count("no such file or directory") == 1, run.output
    assert run.outputs["run"] == {}


def test_the_sarif_files_directory_is_made(
    offline_cargo_for: Callable[..., Path], tmp_path: Path
) -> None:
    offline_cargo_for(CRATES / "pitb-exec-cpu")
    run = run_action(
        tmp_path,
        {"path": "crates/pitb-exec-cpu", "sarif": "true", "sarif-file": "out/sarif/x.sarif"},
    )
    assert run.status == 1, run.output
    assert run.outputs["run"]["sarif-file"] == str(run.workspace / "out" / "sarif" / "x.sarif")
    document = json.loads((run.workspace / "out" / "sarif" / "x.sarif").read_text())
    assert document["runs"][0]["results"][0]["ruleId"] == "FC001"
    # One audit: the annotation once, one count line.
    assert len(runner_commands(run.output)) == 1
    assert run.output.count("featcheck: 1 error (1 member") == 1


def _cache_key(tmp_path: Path, action_path: Path) -> str:
    [step] = [s for s in load_action()["runs"]["steps"] if s.get("id") == "key"]
    outputs = tmp_path / "key-output"
    outputs.write_text("")
    script = tmp_path / "key.sh"
    script.write_text(step["run"])
    subprocess.run(
        ["bash", "--noprofile", "--norc", "-eo", "pipefail", str(script)],
        env={
            **os.environ,
            "GITHUB_OUTPUT": str(outputs),
            "GITHUB_ACTION_PATH": str(action_path),
            "RUNNER_OS": "Linux",
            "RUNNER_TEMP": str(tmp_path),
        },
        check=True,
    )
    values = dict(line.split("=", 1) for line in outputs.read_text().splitlines())
    assert values["venv"] == str(tmp_path / "featcheck-venv")
    return values["key"]


def test_the_install_is_cached_under_the_actions_version(tmp_path: Path) -> None:
    [cache] = [s for s in load_action()["runs"]["steps"] if "uses" in s]
    assert cache["uses"].startswith("actions/cache@")
    assert cache["with"] == {
        "path": "${{ steps.key.outputs.venv }}",
        "key": "${{ steps.key.outputs.key }}",
    }
    action = tmp_path / "action"
    shutil.copytree(REPO / "src", action / "src", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(REPO / "pyproject.toml", action / "pyproject.toml")
    first = _cache_key(tmp_path, action)
    assert first.startswith(f"featcheck-venv-{sys.version_info[0]}.{sys.version_info[1]}-")
    assert first.endswith("-Linux")
    assert _cache_key(tmp_path, action) == first
    (action / "src" / "featcheck" / "__init__.py").write_text('__version__ = "9.9.9"\n')
    changed = _cache_key(tmp_path, action)
    assert changed != first
    # A release that changes no package file is still a new version: its archive names its tag.
    (action / ".git_archival.txt").write_text("node: 1a2b\ndescribe-name: v9.9.9\n")
    assert _cache_key(tmp_path, action) != changed


def test_python_planted_in_the_checkout_never_runs(
    offline_cargo_for: Callable[..., Path], tmp_path: Path
) -> None:
    """A pull request that commits `featcheck/`, `hashlib.py`, `shlex.py` … at its root: every
    step starts Python outside the checkout and isolated, and runs the installed featcheck."""
    offline_cargo_for(CRATES / "pitb-exec-cpu")
    workspace = example_workspace(tmp_path)
    markers = tmp_path / "markers"
    plant_python(workspace, markers)
    run = run_action(
        tmp_path, {"path": "crates/pitb-exec-cpu", "args": "--fail-on 'error'"}, workspace=workspace
    )
    assert markers_written(markers) == []
    assert run.status == 1, run.output
    [annotation] = runner_commands(run.output)
    assert annotation.startswith(ANNOTATION)
    assert "Traceback" not in run.output


def _restored_install(venv: Path) -> None:
    """What actions/cache restores on a later run: a virtual environment with featcheck and its
    console script (here featcheck and its dependencies come from the tests' own environment)."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    [site_packages] = venv.glob("lib/python*/site-packages")
    (site_packages / "featcheck-under-test.pth").write_text(
        f"{sysconfig.get_paths()['purelib']}\n{Path(featcheck.__file__).parent.parent}\n"
    )
    script = venv / "bin" / "featcheck"
    script.write_text(
        f"#!{venv / 'bin' / 'python'}\nimport sys\nfrom featcheck.cli import main\n"
        "sys.exit(main())\n"
    )
    script.chmod(0o755)


def test_a_restored_install_is_checked_and_run_outside_the_checkout(
    offline_cargo_for: Callable[..., Path], tmp_path: Path
) -> None:
    """The install step asks the restored environment whether it has featcheck: from the
    checkout, a planted `featcheck/` would answer yes, and run in its place."""
    offline_cargo_for(CRATES / "pitb-exec-cpu")
    workspace = example_workspace(tmp_path)
    markers = tmp_path / "markers"
    plant_python(workspace, markers)
    venv = tmp_path / "runner-temp" / "featcheck-venv"
    _restored_install(venv)
    run = run_action(
        tmp_path, {"path": "crates/pitb-exec-cpu"}, workspace=workspace, skip_install=False
    )
    assert markers_written(markers) == []
    assert "featcheck: using the cached install in " in run.output
    assert run.status == 1, run.output
    assert [line[: len(ANNOTATION)] for line in runner_commands(run.output)] == [ANNOTATION]
    assert "Traceback" not in run.output


def _hostile_sarif_workspace(tmp_path: Path) -> tuple[Path, Path]:
    """A checkout that commits featcheck.sarif as a link to a file outside it (the victim)."""
    workspace = example_workspace(tmp_path)
    victim = tmp_path / "victim"
    victim.write_text("precious\n")
    (workspace / "featcheck.sarif").symlink_to(victim)
    return workspace, victim


def test_a_symlinked_sarif_file_is_refused_not_written_through(
    offline_cargo_for: Callable[..., Path], tmp_path: Path
) -> None:
    offline_cargo_for(CRATES / "pitb-exec-cpu")
    workspace, victim = _hostile_sarif_workspace(tmp_path)
    run = run_action(
        tmp_path,
        {"path": "crates/pitb-exec-cpu", "sarif": "true", "sarif-file": "featcheck.sarif"},
        workspace=workspace,
    )
    # An error (exit 2), shown as one annotation beside the finding's own.
    assert run.status == 2, run.output
    assert victim.read_text() == "precious\n"
    assert (workspace / "featcheck.sarif").is_symlink()
    finding, error = runner_commands(run.output)
    assert finding.startswith(ANNOTATION)
    assert error.startswith(
        "::error file=featcheck.sarif,title=featcheck::featcheck: error: "
        f"{workspace / 'featcheck.sarif'}: is a "
    )
    assert "symlink; featcheck writes a report only to a regular file" in error
    assert "sarif-file" not in run.outputs["run"]


def test_a_symlinked_directory_on_the_way_to_the_sarif_file_is_refused(
    offline_cargo_for: Callable[..., Path], tmp_path: Path
) -> None:
    offline_cargo_for(CRATES / "pitb-exec-cpu")
    workspace = example_workspace(tmp_path)
    outside = tmp_path / "outside"
    outside.mkdir()
    (workspace / "reports").symlink_to(outside)
    run = run_action(
        tmp_path,
        {"path": "crates/pitb-exec-cpu", "sarif": "true", "sarif-file": "reports/sub/out.sarif"},
        workspace=workspace,
    )
    assert run.status == 2, run.output
    assert list(outside.iterdir()) == []
    assert runner_commands(run.output) == [
        "::error title=featcheck::featcheck: error: reports/sub/out.sarif: the directory "
        "reports is a symlink; featcheck writes a report only into a real directory"
    ]


def test_by_default_the_sarif_file_ignores_what_the_checkout_committed(
    offline_cargo_for: Callable[..., Path], tmp_path: Path
) -> None:
    offline_cargo_for(CRATES / "pitb-exec-cpu")
    workspace, victim = _hostile_sarif_workspace(tmp_path)
    run = run_action(
        tmp_path, {"path": "crates/pitb-exec-cpu", "sarif": "true"}, workspace=workspace
    )
    assert run.status == 1, run.output
    assert victim.read_text() == "precious\n"
    sarif = Path(run.outputs["run"]["sarif-file"])
    assert sarif.is_relative_to(tmp_path / "runner-temp")
    assert json.loads(sarif.read_text())["runs"][0]["results"][0]["ruleId"] == "FC001"


@pytest.mark.network
def test_the_install_step_installs_from_the_action_checkout(
    offline_cargo_for: Callable[..., Path], tmp_path: Path
) -> None:
    """Without the testing hook: a virtual environment with featcheck from GITHUB_ACTION_PATH."""
    offline_cargo_for(CRATES / "pitb-exec-cpu")
    checkout = tmp_path / "action-checkout"
    shutil.copytree(
        REPO,
        checkout,
        ignore=shutil.ignore_patterns(
            ".git", ".venv", "fixtures", "target", "*.egg-info", "build", ".*_cache", ".hypothesis"
        ),
    )
    run = run_action(
        tmp_path, {"path": "crates/pitb-exec-cpu"}, action_path=checkout, skip_install=False
    )
    assert run.status == 1, run.output
    assert [line[: len(ANNOTATION)] for line in runner_commands(run.output)] == [ANNOTATION]
    assert (tmp_path / "runner-temp" / "featcheck-venv" / "bin" / "featcheck").exists()


# --- the workflow the README gives to copy -------------------------------------------------------

_TOKEN = re.compile(r"\s*(&&|\|\||!=|==|!|\(|\)|'[^']*'|always\(\)|[A-Za-z_][\w.-]*)")


def _condition(expression: str, context: dict[str, object]) -> bool:
    """A GitHub `if:` expression of the README's shape, evaluated: context names, strings,
    `always()`, `!`, `==`, `!=`, `&&`, `||` and parentheses (a missing name is null)."""
    python: list[str] = []
    position = 0
    while position < len(expression.rstrip()):
        match = _TOKEN.match(expression, position)
        assert match is not None, expression[position:]
        token = match.group(1)
        position = match.end()
        words = {"&&": "and", "||": "or", "!": "not", "always()": "True"}
        if token in words:
            python.append(words[token])
        elif token in ("!=", "==", "(", ")") or token.startswith("'"):
            python.append(token)
        else:
            python.append(repr(context.get(token)))
    return bool(eval(" ".join(python)))  # only the tokens above reach it


def _readme_workflow() -> dict[Any, Any]:
    blocks = re.findall(r"```yaml\n(.*?)```", (REPO / "README.md").read_text(), re.DOTALL)
    [workflow] = [yaml.safe_load(block) for block in blocks if "\njobs:" in block]
    assert isinstance(workflow, dict)
    return workflow


def test_the_readme_workflow_works_on_pushes_and_on_forks(tmp_path: Path) -> None:
    workflow = _readme_workflow()
    triggers = workflow[True]  # YAML 1.1 reads the key `on` as true, as PyYAML does
    assert set(triggers) == {"push", "pull_request"}
    assert workflow["permissions"] == {"contents": "read"}
    [job] = workflow["jobs"].values()
    assert job["permissions"] == {"contents": "read", "security-events": "write"}
    steps = job["steps"]
    [featcheck] = [s for s in steps if s["uses"].startswith("featcheck/featcheck@")]
    # A placeholder the user fills in (a release tag once there is one, a commit before), never
    # a release tag that may not exist.
    assert featcheck["uses"] == "featcheck/featcheck@REF"
    assert featcheck["with"]["sarif"] == "true"
    [upload] = [s for s in steps if s["uses"].startswith("github/codeql-action/upload-sarif@")]
    output = f"steps.{featcheck['id']}.outputs.sarif-file"
    assert upload["with"]["sarif_file"] == "${{ " + output + " }}"
    push = {output: "/tmp/featcheck.sarif"}
    same_repository = {**push, "github.event.pull_request.head.repo.fork": False}
    fork = {**push, "github.event.pull_request.head.repo.fork": True}
    error = {output: ""}
    verdicts = [_condition(upload["if"], c) for c in (push, same_repository, fork, error)]
    assert verdicts == [True, True, False, False]
    readme = (REPO / "README.md").read_text()
    assert "@v0.1.0" not in readme and "rev: v0.1.0" not in readme


def test_the_readme_workflows_inputs_run_as_written(
    offline_cargo_for: Callable[..., Path], tmp_path: Path
) -> None:
    offline_cargo_for(CRATES / "pitb-exec-cpu")
    [job] = _readme_workflow()["jobs"].values()
    [featcheck] = [s for s in job["steps"] if s["uses"].startswith("featcheck/featcheck@")]
    inputs = {**featcheck["with"], "path": "crates/pitb-exec-cpu"}  # the crate with a finding
    run = run_action(tmp_path, inputs)
    assert run.status == 1, run.output
    assert Path(run.outputs["run"]["sarif-file"]).is_file()


def test_on_a_pull_request_only_what_it_adds_fails_the_step(
    offline_cargo_for: Callable[..., Path], tmp_path: Path
) -> None:
    offline_cargo_for(CRATES / "pitb-exec-cpu")
    workspace = example_workspace(tmp_path)
    git = ["git", "-C", str(workspace), "-c", "user.name=t", "-c", "user.email=t@example.com"]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-q", "-m", "base"], check=True)
    base = subprocess.run(
        [*git, "rev-parse", "HEAD"], check=True, capture_output=True, text=True
    ).stdout.strip()
    manifest = workspace / "crates" / "pitb-exec-cpu" / "Cargo.toml"
    manifest.write_text(manifest.read_text().replace("[dependencies]\n", "[dependencies]\n# a\n"))
    subprocess.run([*git, "commit", "-q", "-am", "the pull request"], check=True)
    event = {"event_name": "pull_request", "event.pull_request.base.sha": base}
    for name in ("pr", "push", "none"):
        (tmp_path / name).mkdir()
    inputs = {"path": "crates/pitb-exec-cpu"}
    # The burn line was there on the base commit: nothing new, the step passes.
    run = run_action(tmp_path / "pr", inputs, workspace=workspace, github=event)
    assert run.status == 0, run.output
    assert runner_commands(run.output) == []
    assert f"0 new, 1 also on {base[:8]}, not shown" in run.summary
    # On a push (or with new-since "none") every finding counts.
    run = run_action(tmp_path / "push", inputs, workspace=workspace, github={"event_name": "push"})
    assert run.status == 1
    run = run_action(
        tmp_path / "none", {**inputs, "new-since": "none"}, workspace=workspace, github=event
    )
    assert run.status == 1


def test_a_new_since_input_that_looks_like_an_option_is_refused(tmp_path: Path) -> None:
    run = run_action(tmp_path, {"path": "crates/pitb-exec-cpu", "new-since": "--upload-pack=x"})
    assert run.status == 2
    assert runner_commands(run.output) == [
        "::error title=featcheck::featcheck: error: the new-since input is not a revision: it "
        "starts with -"
    ]


def _marker_program(path: Path, marker: Path, then: str = "") -> str:
    """A shell script at `path` that leaves `marker` and then runs `then`, as a planted program
    would (it does its work and then what git expected, unseen)."""
    path.write_text(f"#!/bin/sh\n: > '{marker}'\n{then}\n")
    path.chmod(0o755)
    return str(path)


def test_fetching_the_base_commit_runs_nothing_the_repository_configures(
    offline_cargo_for: Callable[..., Path], tmp_path: Path
) -> None:
    """The checkout lacks the base commit (a shallow clone), so the step fetches it. What the
    repository's .git/config names (fsmonitor, hooks, upload-pack) must not run."""
    offline_cargo_for(CRATES / "pitb-exec-cpu")
    origin = example_workspace(tmp_path / "origin-tree")
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.com"]
    subprocess.run([*git, "-C", str(origin), "init", "-q", "-b", "main"], check=True)
    subprocess.run([*git, "-C", str(origin), "add", "-A"], check=True)
    subprocess.run([*git, "-C", str(origin), "commit", "-q", "-m", "base"], check=True)
    base = subprocess.run(
        [*git, "-C", str(origin), "rev-parse", "HEAD"], check=True, capture_output=True, text=True
    ).stdout.strip()
    manifest = origin / "crates" / "pitb-exec-cpu" / "Cargo.toml"
    manifest.write_text(manifest.read_text().replace("[dependencies]\n", "[dependencies]\n# a\n"))
    subprocess.run([*git, "-C", str(origin), "commit", "-q", "-am", "the pull request"], check=True)
    workspace = tmp_path / "workspace"
    subprocess.run(
        ["git", "clone", "-q", "--depth=1", f"file://{origin}", str(workspace)], check=True
    )
    missing = subprocess.run(
        ["git", "-C", str(workspace), "cat-file", "-e", f"{base}^{{commit}}"], check=False
    )
    assert missing.returncode != 0  # the fetch is needed
    markers = tmp_path / "markers"
    markers.mkdir()
    programs = tmp_path / "programs"
    (programs / "hooks").mkdir(parents=True)
    for hook in ("reference-transaction", "post-checkout", "pre-auto-gc", "post-index-change"):
        _marker_program(programs / "hooks" / hook, markers / hook)
    planted = {
        "core.fsmonitor": _marker_program(programs / "fsmonitor", markers / "fsmonitor"),
        "core.hooksPath": str(programs / "hooks"),
        "remote.origin.uploadpack": _marker_program(
            programs / "upload-pack", markers / "upload-pack", 'exec git-upload-pack "$@"'
        ),
        "core.sshCommand": _marker_program(programs / "ssh", markers / "ssh"),
    }
    for key, value in planted.items():
        subprocess.run(["git", "-C", str(workspace), "config", key, value], check=True)
    event = {"event_name": "pull_request", "event.pull_request.base.sha": base}
    run = run_action(tmp_path, {"path": "crates/pitb-exec-cpu"}, workspace=workspace, github=event)
    assert sorted(path.name for path in markers.iterdir()) == []
    # The base commit was fetched all the same, and it has the finding: nothing new.
    assert run.status == 0, run.output
    assert f"0 new, 1 also on {base[:8]}, not shown" in run.summary
