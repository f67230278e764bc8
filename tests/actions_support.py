"""Helpers shared by the tests of the CI integrations (github, sarif, action, pre-commit, cargo)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml
from support import CRATES, REPO

from featcheck.report import Finding, Location
from featcheck.severity import Severity

# Variables GitHub Actions sets that change what featcheck prints; tests set them explicitly.
ACTIONS_VARIABLES = (
    "GITHUB_ACTIONS",
    "GITHUB_STEP_SUMMARY",
    "GITHUB_WORKSPACE",
    "GITHUB_SERVER_URL",
    "GITHUB_REPOSITORY",
    "GITHUB_SHA",
    "GITHUB_OUTPUT",
    "GITHUB_ACTION_PATH",
)


def clear_actions_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """Run as outside GitHub Actions, even when the suite itself runs in Actions."""
    for name in ACTIONS_VARIABLES:
        monkeypatch.delenv(name, raising=False)


def host_triple() -> str:
    """The host target triple, which featcheck audits by default."""
    output = subprocess.run(["rustc", "-vV"], capture_output=True, text=True, check=True).stdout
    for line in output.splitlines():
        if line.startswith("host:"):
            return line.split(":", 1)[1].strip()
    raise AssertionError(f"rustc -vV did not name the host: {output!r}")


def make_finding(
    *,
    code: str = "FC001",
    rule: str = "flex-without-rayon",
    severity: Severity = Severity.ERROR,
    member: str | None = "app",
    crate: str = "burn-flex",
    crate_version: str = "0.22.1",
    feature: str = "rayon",
    target: str | None = "x86_64-unknown-linux-gnu",
    message: str = "burn-flex 0.22.1 is built without `rayon`: every matmul runs on one core",
    location: Location | None = None,
    suggestion: str = 'add "rayon" to the features of burn',
) -> Finding:
    """A synthetic finding, as the audit would produce it."""
    return Finding(
        code=code,
        rule=rule,
        severity=severity,
        member=member,
        crate=crate,
        crate_version=crate_version,
        feature=feature,
        target=target,
        message=message,
        location=location,
        why="why it matters",
        suggestion=suggestion,
    )


def manifest_location(line: int = 9, file: str = "Cargo.toml") -> Location:
    """A span on the burn line of a manifest."""
    return Location(file=file, line=line, column=31, end_line=line, end_column=55)


# --- what the GitHub Actions runner reads as workflow commands ---------------------------------
# A model of the runner's ActionCommandManager.TryProcessCommand (actions/runner): every line of
# a step's stdout and stderr is tried as `::name props::data` after leading whitespace, then as
# the legacy `##[name props]data` anywhere in the line; only registered names count, compared
# without case. `::stop-commands::TOKEN` stops all processing until a command named TOKEN.

RUNNER_COMMANDS = frozenset(
    {
        "error",
        "warning",
        "notice",
        "debug",
        "group",
        "endgroup",
        "echo",
        "add-mask",
        "add-matcher",
        "remove-matcher",
        "save-state",
        "set-output",
        "set-env",
        "add-path",
        "stop-commands",
    }
)


def _parse_v2(line: str, registered: set[str]) -> tuple[str, str] | None:
    message = line.lstrip()
    if not message.startswith("::"):
        return None
    end = message.find("::", 2)
    if end < 0:
        return None
    name = message[2:end].split(" ", 1)[0]
    return (name, message[end + 2 :]) if name.lower() in registered else None


def _parse_legacy(line: str, registered: set[str]) -> tuple[str, str] | None:
    start = line.find("##[")
    if start < 0:
        return None
    end = line.find("]", start)
    if end < 0:
        return None
    name = line[start + 3 : end].split(" ", 1)[0]
    return (name, line[end + 1 :]) if name.lower() in registered else None


def runner_commands(log: str) -> list[str]:
    """The lines of `log` the runner would act on as commands, stop-commands and resumes left out.

    The runner reads lines as .NET's ReadLine does: CR, LF and CRLF all end a line.
    """
    registered = set(RUNNER_COMMANDS)
    token: str | None = None
    acted: list[str] = []
    for line in log.replace("\r\n", "\n").replace("\r", "\n").split("\n"):
        parsed = _parse_v2(line, registered) or _parse_legacy(line, registered)
        if parsed is None:
            continue
        name, data = parsed
        if token is not None:
            if name.lower() == token.lower():
                registered.discard(token.lower())
                token = None
            continue
        if name.lower() == "stop-commands":
            token = data
            registered.add(token.lower())
            continue
        acted.append(line)
    assert token is None, f"commands were left stopped (token {token!r})"
    return acted


# --- a checkout that plants Python where a careless interpreter imports it ------------------------
# `python -c`, `python -m` and `python -` (and a script in the checkout) put the current directory
# first on sys.path, so a step that starts Python in the checkout imports these instead of the
# standard library or featcheck. Each writes a marker file named after itself, then stays
# invisible: a shadowed standard module hands over to the real one, and the planted featcheck
# says "no findings" and exits 0, as an attacker's would.

PLANTED_STANDARD_MODULES = (
    "argparse",
    "hashlib",
    "json",
    "os",
    "runpy",
    "shlex",
    "subprocess",
    "sysconfig",
    "sitecustomize",
    "usercustomize",
)

_SHADOW = """\
open({marker!r}, "w").close()
import sys
_name = __name__
_path = sys.path[:]
sys.path[:] = [p for p in sys.path if p not in ("", ".", {checkout!r})]
del sys.modules[_name]
try:
    import importlib
    sys.modules[_name] = importlib.import_module(_name)
except ImportError:
    pass
finally:
    sys.path[:] = _path
"""

_FAKE_FEATCHECK = """\
open({marker!r}, "w").close()
def main():
    print("featcheck: no findings (1 member, x86_64-unknown-linux-gnu)")
    raise SystemExit(0)
cargo_main = main
if __name__ == "__main__":
    main()
"""


def plant_python(checkout: Path, markers: Path) -> None:
    """Plant shadows of standard modules, a fake `featcheck` package and a `.pth` file at the
    root of `checkout`; each writes a file into `markers` (outside the checkout) when it runs."""
    markers.mkdir(parents=True, exist_ok=True)
    for name in PLANTED_STANDARD_MODULES:
        marker = str(markers / f"{name}.py")
        (checkout / f"{name}.py").write_text(_SHADOW.format(marker=marker, checkout=str(checkout)))
    package = checkout / "featcheck"
    package.mkdir()
    for name in ("__init__", "__main__", "cli"):
        (package / f"{name}.py").write_text(_FAKE_FEATCHECK.format(marker=str(markers / name)))
    (checkout / "planted.pth").write_text(f"import os; open({str(markers / 'pth')!r}, 'w')\n")


def markers_written(markers: Path) -> list[str]:
    """What the planted Python left behind: the names of the markers, sorted."""
    return sorted(path.name for path in markers.iterdir())


# --- the composite Action, its steps run the way the runner runs them ---------------------------

ACTION = REPO / "action.yml"
EXPRESSION = re.compile(r"\$\{\{\s*(.*?)\s*\}\}")


def load_action() -> dict[str, Any]:
    action: dict[str, Any] = yaml.safe_load(ACTION.read_text())
    return action


@dataclass
class ActionRun:
    status: int
    """The exit status of the first failing step, or 0."""
    output: str
    """What the steps printed (stdout and stderr)."""
    summary: str
    workspace: Path
    outputs: dict[str, dict[str, str]]
    """Each step's outputs, by step id."""
    steps_run: list[str] = field(default_factory=list)
    """The names of the steps that ran, in order."""


def evaluate(
    value: str,
    inputs: dict[str, str],
    outputs: dict[str, dict[str, str]],
    github: dict[str, str] | None = None,
) -> str:
    """The subset of GitHub expressions the action's env blocks use (`github.*` from `github`,
    empty where it does not say, as for a missing property)."""

    def one(match: re.Match[str]) -> str:
        expression = match.group(1)
        if expression.startswith("inputs."):
            return inputs[expression.removeprefix("inputs.")]
        if expression.startswith("github."):
            return (github or {}).get(expression.removeprefix("github."), "")
        step, outputs_word, name = expression.removeprefix("steps.").split(".")
        assert expression.startswith("steps.") and outputs_word == "outputs", expression
        return outputs.get(step, {}).get(name, "")

    return EXPRESSION.sub(one, value)


def example_workspace(tmp_path: Path) -> Path:
    """A copy of the repository's example crates, as actions/checkout would leave them."""
    workspace = tmp_path / "workspace"
    for name in ("pitb-exec-cpu", "pitb-exec-cpu-simd"):
        shutil.copytree(
            CRATES / name, workspace / "crates" / name, ignore=shutil.ignore_patterns("target")
        )
    return workspace


@dataclass(frozen=True)
class StepLimits:
    """How each step's process is started: the environment it starts from (default: the
    test's), and what bounds it."""

    environment: Mapping[str, str] | None = None
    preexec_fn: Callable[[], None] | None = None
    timeout: float = 300


def run_action(
    tmp_path: Path,
    with_: dict[str, str],
    *,
    action_path: Path = REPO,
    skip_install: bool = True,
    workspace: Path | None = None,
    github: dict[str, str] | None = None,
    cached_install: Path | None = None,
    limits: StepLimits = StepLimits(),
    path_first: Path | None = None,
) -> ActionRun:
    """Run the action's steps in order, stopping at the first that fails, like the runner.

    With `cached_install` (a virtual environment that has featcheck), the install step finds
    it where actions/cache would have restored it, and checks it as on a cache hit."""
    action = load_action()
    inputs = {name: str(spec.get("default", "")) for name, spec in action["inputs"].items()}
    inputs.update(with_)
    workspace = workspace or example_workspace(tmp_path)
    summary = tmp_path / "step-summary.md"
    summary.touch()
    scripts_dir = Path(sys.executable).parent
    environment = os.environ if limits.environment is None else limits.environment
    base_env = {
        **environment,
        "GITHUB_ACTIONS": "true",
        "GITHUB_WORKSPACE": str(workspace),
        "GITHUB_STEP_SUMMARY": str(summary),
        "GITHUB_ACTION_PATH": str(action_path),
        "RUNNER_TEMP": str(tmp_path / "runner-temp"),
        "PATH": os.pathsep.join([str(scripts_dir), environment.get("PATH", "")]),
    }
    if path_first is not None:  # a directory put before everything else on PATH
        base_env["PATH"] = os.pathsep.join([str(path_first), base_env["PATH"]])
    (tmp_path / "runner-temp").mkdir(exist_ok=True)
    if cached_install is not None:
        (tmp_path / "runner-temp" / "featcheck-venv").symlink_to(cached_install)
    elif skip_install:
        base_env["FEATCHECK_SKIP_INSTALL"] = "1"
    outputs: dict[str, dict[str, str]] = {}
    printed: list[str] = []
    ran: list[str] = []
    status = 0
    for index, step in enumerate(action["runs"]["steps"]):
        if "uses" in step:
            continue  # actions/cache: without it the install step installs (or is skipped)
        output_file = tmp_path / f"output-{index}"
        output_file.touch()
        script = tmp_path / f"step-{index}.sh"
        script.write_text(step["run"])
        env = {
            **base_env,
            "GITHUB_OUTPUT": str(output_file),
            **{
                name: evaluate(str(value), inputs, outputs, github)
                for name, value in step.get("env", {}).items()
            },
        }
        ran.append(step["name"])
        done = subprocess.run(
            ["bash", "--noprofile", "--norc", "-eo", "pipefail", str(script)],
            cwd=workspace,
            env=env,
            capture_output=True,
            text=True,
            check=False,
            timeout=limits.timeout,
            preexec_fn=limits.preexec_fn,
        )
        printed.append(done.stdout + done.stderr)
        if "id" in step:
            outputs[step["id"]] = dict(
                line.split("=", 1) for line in output_file.read_text().splitlines() if "=" in line
            )
        if done.returncode != 0:
            status = done.returncode
            break
    return ActionRun(status, "".join(printed), summary.read_text(), workspace, outputs, ran)
