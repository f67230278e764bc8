"""One row of the matrix: an entry point run on a fresh copy of a checkout, as the user runs
it, and what it broke (hostile_checks.py says what no run may do)."""

from __future__ import annotations

import os
import resource
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from actions_support import StepLimits, load_action, run_action
from hostile_checks import (
    MEMORY_LIMIT,
    Outcome,
    cache_state,
    changed_outside,
    problems,
    restore,
)
from hostile_family import PACKAGE, Checkout
from hostile_matrix import ACTION, CARGO, HOOK, Column, Entry
from hostile_world import REGISTRY_SECRET, World, snapshot
from support import write_offline_cargo_home

SCRIPTS = Path(sys.executable).parent
RUN_MARK = "FEATCHECK_HOSTILE_RUN"
"""In every run's environment, the run's directory: what is still running once the run is over
is found by it (a path, not a name: another run of the suite on the same machine runs rows of
the same names, whose processes are not this run's to end)."""


@dataclass(frozen=True)
class Setting:
    """What every row of one test module shares."""

    world: World
    family: dict[str, Checkout]
    registry: Path
    seed_cache: Path
    host_triple: str
    runs: Path


@dataclass
class Row:
    outcomes: list[Outcome]
    problems: list[str]


@dataclass(frozen=True)
class Command:
    label: str
    argv: list[str] = field(default_factory=list)
    cwd: Path = Path()
    stdin: str = ""
    action: dict[str, str] = field(default_factory=dict)
    """The Action's inputs and github context, for an Action row."""


def _limit_memory() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))


def _environment(setting: Setting, run: Path, column: Column, root: Path) -> dict[str, str]:
    """The user's environment: a HOME with a git credential helper, registry tokens, an online
    cargo home of their own over the stub registry, their own cache and temporary directory."""
    home = write_offline_cargo_home(run / "cargo-home", setting.registry)
    config = home / "config.toml"
    config.write_text(
        config.read_text().replace("offline = true", "offline = false\nretry = 0")
        + '[registry]\nglobal-credential-providers = ["cargo:token"]\n'
    )
    extra = column.environment(root)
    path = os.pathsep.join([str(SCRIPTS), os.environ.get("PATH", "")])
    if "PATH_PREFIX" in extra:
        path = os.pathsep.join([extra.pop("PATH_PREFIX"), path])
    return {
        "PATH": path,
        "HOME": str(setting.world.home),
        "USER": os.environ.get("USER", "user"),
        "LANG": "C.UTF-8",
        "RUSTUP_HOME": os.environ.get("RUSTUP_HOME") or str(Path.home() / ".rustup"),
        "CARGO_HOME": str(home),
        "XDG_CACHE_HOME": str(run / "cache"),
        "TMPDIR": str(run / "tmp"),
        "NO_COLOR": "1",
        "COLUMNS": "200",
        "CARGO_REGISTRY_TOKEN": REGISTRY_SECRET,
        "CARGO_REGISTRIES_COMPANY_TOKEN": REGISTRY_SECRET,
        RUN_MARK: str(run),
        **extra,
    }


def _fill(text: str, values: dict[str, str]) -> str:
    for name, value in values.items():
        text = text.replace("{" + name + "}", value)
    return text


def commands(entry: Entry, setting: Setting, checkout: Checkout, root: Path) -> list[Command]:
    """What the row runs: one command, or one per revision the checkout offers."""
    made = []
    offered = checkout.revisions
    chosen = offered[min(entry.revision, len(offered) - 1)]
    for revision in offered if entry.per_revision else (chosen,):
        project = (root / checkout.project).resolve()
        values = {
            "project": str(project),
            "root": str(root),
            "manifest": str(project / "Cargo.toml"),
            "package": PACKAGE,
            "host": setting.host_triple,
            "revision": revision,
            "base": checkout.base,
        }
        label = f"{entry.name} @{revision}" if entry.per_revision else entry.name
        if entry.kind == ACTION:
            made.append(
                Command(label, action={k: _fill(v, values) for k, v in entry.action.items()})
            )
            continue
        args = [_fill(a, values) for a in entry.args]
        if entry.kind == CARGO:
            argv = [shutil.which("cargo") or "cargo", "featcheck", *args]
        elif entry.kind == HOOK:
            argv = [str(SCRIPTS / args[0]), *args[1:]]
        else:
            argv = [str(SCRIPTS / "featcheck"), *args]
        command = Command(label, argv, root.parent if entry.outside else root, entry.stdin)
        made += [command] * entry.runs
    return made


def _execute(command: Command, environment: dict[str, str], timeout: float) -> Outcome:
    started = time.monotonic()
    process = subprocess.Popen(
        command.argv,
        cwd=command.cwd,
        env=environment,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
        preexec_fn=_limit_memory,
    )
    code: int | None = None
    try:
        stdout, stderr = process.communicate(command.stdin, timeout=timeout)
        code = process.returncode
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        _end_what_is_left(environment[RUN_MARK])
        stdout, stderr = process.communicate()
    return Outcome(command.label, code, stdout + stderr, time.monotonic() - started, 0, timeout)


def _run_action(
    command: Command, root: Path, environment: dict[str, str], timeout: float
) -> Outcome:
    inputs = dict(command.action)
    github = {"event_name": inputs.pop("event_name")}
    if "base" in inputs:
        github["event.pull_request.base.sha"] = inputs.pop("base")
    runner = root.parent / "runner"
    runner.mkdir()
    started = time.monotonic()
    try:
        done = run_action(
            runner,
            inputs,
            workspace=root,
            github=github,
            cached_install=Path(sys.prefix),  # a cache hit: the install step checks it
            limits=StepLimits(environment, _limit_memory, timeout),
        )
    except subprocess.TimeoutExpired:
        _end_what_is_left(environment[RUN_MARK])
        return Outcome(command.label, None, "", time.monotonic() - started, 0, timeout)
    output = done.output + "".join(f"\n[step ran: {name}]" for name in done.steps_run)
    return Outcome(command.label, done.status, output, time.monotonic() - started, 0, timeout)


def _end_what_is_left(run: str) -> list[str]:
    """Kill, by id, the processes of this run still alive (after a time limit: those that left
    its process group, as featcheck gives each cargo its own); what they were."""
    mark = f"{RUN_MARK}={run}".encode()
    killed = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and mark in (entry / "environ").read_bytes().split(b"\0"):
                command = (
                    (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
                )
                os.kill(int(entry.name), signal.SIGKILL)
                killed.append(command.strip())
        except OSError:
            continue
    return killed


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run_row(entry: Entry, column: Column, setting: Setting) -> Row:
    checkout, world = setting.family[column.checkout], setting.world
    run = setting.runs / f"{entry.name}--{column.name}"
    root = run / "checkout"
    shutil.copytree(checkout.root, root, symlinks=True)
    shutil.copytree(setting.seed_cache, run / "cache", symlinks=True)
    (run / "tmp").mkdir()
    column.prepare(root, world)
    environment = _environment(setting, run, column, root)
    skip = frozenset({world.markers, root, run / "cache", run / "tmp", run / "runner"})
    row = Row([], [])
    for command in commands(entry, setting, checkout, root):
        world.clear_markers()
        world.host.take()
        before, cpu = snapshot(world.base, skip), _children_cpu()
        cache_before = cache_state(run / "cache")
        if command.action:
            outcome = _run_action(command, root, environment, entry.timeout)
        else:
            outcome = _execute(command, environment, entry.timeout)
        outcome.cpu = _children_cpu() - cpu
        left = _end_what_is_left(str(run))
        changes = changed_outside(before, snapshot(world.base, skip))
        row.outcomes.append(outcome)
        cache = (cache_before, cache_state(run / "cache"))
        row.problems += problems(outcome, world, changes, cache, left)
        if changes:
            restore(world.base)
    shutil.rmtree(run, ignore_errors=True)
    return row


def seed_cache(template: Path, registry: Path, base: Path) -> Path:
    """featcheck's cache after one audit of the template (rustc's answers, which every run
    would otherwise ask for again): each run starts from a copy. What it kept about the
    template's own path (its metadata) is left out."""
    project = base / "seed-project"
    shutil.copytree(template, project, ignore=shutil.ignore_patterns("target"))
    cache = base / "seed-cache"
    home = write_offline_cargo_home(base / "seed-cargo-home", registry)
    done = subprocess.run(
        [str(SCRIPTS / "featcheck"), str(project), "-q"],
        env={**os.environ, "CARGO_HOME": str(home), "XDG_CACHE_HOME": str(cache)},
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 1, done.stderr
    shutil.rmtree(cache / "featcheck" / "metadata", ignore_errors=True)
    return cache


def assert_row(entry: Entry, column: Column, setting: Setting) -> None:
    """Run the row; nothing broken, and on the clean checkout, the entry point did its work
    (FEATCHECK_HOSTILE_TIMES names a file each run's timing is appended to)."""
    row = run_row(entry, column, setting)
    times = os.environ.get("FEATCHECK_HOSTILE_TIMES")
    if times:
        with open(times, "a") as log:
            for o in row.outcomes:
                log.write(
                    f"{o.command}\t{column.name}\t{o.returncode}\t{o.seconds:.2f}\t{o.cpu:.2f}\n"
                )
    shown = "".join(
        f"\n--- {o.command}: exit {o.returncode} after {o.seconds:.1f} s\n{o.output[-3000:]}"
        for o in row.outcomes
    )
    assert row.problems == [], "\n".join(row.problems) + shown
    if column.checkout != "clean":
        return
    for outcome in row.outcomes:
        assert outcome.returncode in entry.clean_exit, shown
        assert entry.clean_says in outcome.output, shown
    assert entry.last_says in row.outcomes[-1].output, shown
    if entry.kind == ACTION:
        steps = [s["name"] for s in load_action()["runs"]["steps"] if "run" in s]
        assert [f"[step ran: {name}]" in shown for name in steps] == [True] * len(steps), shown
