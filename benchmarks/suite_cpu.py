"""Where the test suite's CPU goes: a pytest plugin that splits it by test file and by kind.

The suite waits on processes (cargo, featcheck run as a user runs it, probe builds), so its wall
time on a small machine is bounded by the CPU those processes take, not by pytest. Each worker
records, around every test, its own CPU and that of the processes it waited for
(`RUSAGE_CHILDREN`: cargo, featcheck, and what they started); at the end of the run the table
says it per kind of test and for the files that take the most.

    PYTHONPATH=benchmarks .venv/bin/pytest -p suite_cpu -q

A module or session fixture's processes count in the first test that uses it. The kinds are
read from file names (`KINDS`): a file that moves or is renamed falls into "the rest".
"""

from __future__ import annotations

import json
import os
import re
import resource
import shutil
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

KINDS = (
    (
        "cargo is the oracle (differential)",
        r"tests/resolution/test_(resolver_differential|configurations_differential|"
        r"resolver_generated|feature_unification)|tests/fixes/test_fix_shapes|"
        r"tests/noexec/test_noexec\.py|tests/rules/test_cargo_answers",
    ),
    (
        "entry points, processes, hostile checkouts",
        r"tests/hostile/|tests/cargo/test_(hostile|trust)|tests/cli/test_(action|precommit|"
        r"cargo_subcommand|interrupt)|tests/fixes/test_kill_write|tests/test_release|"
        r"tests/comparison/test_new_since_hostile",
    ),
    ("probe builds", r"tests/probe/"),
)
_FOLDER = "FEATCHECK_SUITE_CPU"
"""Where the workers leave their rows: made by the controller before the workers start, which
inherit it through their environment."""
_rows: list[tuple[str, float, float, float]] = []
"""Per test: its file, pytest's CPU, the CPU of the processes it waited for, its wall time."""


def pytest_configure(config: pytest.Config) -> None:
    if not hasattr(config, "workerinput"):
        os.environ[_FOLDER] = tempfile.mkdtemp(prefix="featcheck-suite-cpu-")


def _cpu(who: int) -> float:
    usage = resource.getrusage(who)
    return usage.ru_utime + usage.ru_stime


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item) -> Iterator[None]:
    own, waited = _cpu(resource.RUSAGE_SELF), _cpu(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    yield
    own = _cpu(resource.RUSAGE_SELF) - own
    waited = _cpu(resource.RUSAGE_CHILDREN) - waited
    _rows.append((item.nodeid.split("::")[0], own, waited, time.perf_counter() - start))


def pytest_sessionfinish(session: pytest.Session) -> None:
    if hasattr(session.config, "workerinput"):  # an xdist worker hands its rows over
        (Path(os.environ[_FOLDER]) / f"{os.getpid()}.json").write_text(json.dumps(_rows))


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if hasattr(terminalreporter.config, "workerinput"):
        return
    rows = list(_rows)
    folder = Path(os.environ[_FOLDER])
    for part in sorted(folder.glob("*.json")):
        rows += [tuple(row) for row in json.loads(part.read_text())]
    shutil.rmtree(folder, ignore_errors=True)
    if not rows:
        return
    by_kind: dict[str, list[float]] = {}
    by_file: dict[str, list[float]] = {}
    idle: dict[str, float] = {}
    for path, own, waited, wall in rows:
        # A test that sleeps or waits on a timeout holds a worker without using a core.
        idle[path] = idle.get(path, 0.0) + wall - own - waited
        kind = next((name for name, pattern in KINDS if re.search(pattern, path)), "the rest")
        for table, key in ((by_kind, kind), (by_file, path)):
            totals = table.setdefault(key, [0.0, 0.0, 0.0])
            totals[0] += 1
            totals[1] += own
            totals[2] += waited
    write = terminalreporter.write_line
    write(
        f"\nCPU seconds by kind of test ({time.strftime('%Y-%m-%d %H:%M')}, {os.cpu_count()} cores)"
    )
    write(f"{'':46}{'tests':>7}{'pytest':>9}{'processes':>11}{'total':>9}")
    for key, (count, own, waited) in sorted(by_kind.items(), key=lambda kv: -sum(kv[1][1:])):
        write(f"{key:46}{count:7.0f}{own:9.1f}{waited:11.1f}{own + waited:9.1f}")
    count, own, waited = (sum(column) for column in zip(*by_kind.values(), strict=True))
    write(f"{'all':46}{count:7.0f}{own:9.1f}{waited:11.1f}{own + waited:9.1f}")
    # What the suite cannot shed while it runs cargo as the oracle, featcheck as a user runs
    # it, and the probe's builds: spread perfectly over every core, still this much wall time.
    kept = sum(sum(by_kind.get(name, [0.0, 0.0, 0.0])[1:]) for name, _ in KINDS)
    write(f"those three kinds over {os.cpu_count()} cores: {kept / (os.cpu_count() or 1):.0f} s")
    shown = int(os.environ.get("FEATCHECK_SUITE_CPU_FILES", "15"))
    write(f"\nthe {shown} files that take the most")
    largest = sorted(by_file.items(), key=lambda kv: -sum(kv[1][1:]))[:shown]
    for key, (count, own, waited) in largest:
        kind = next((name for name, pattern in KINDS if re.search(pattern, key)), "the rest")
        write(f"{key:56}{count:5.0f}{own:9.1f}{waited:11.1f}  {kind.split()[0]}")
    total = sum(row[3] for row in rows)
    # Wall time no CPU matches: a test sleeping or waiting on a timeout, or waiting for a core.
    waiting = sum(idle.values())
    write(f"\nwall seconds in tests {total:.1f}, of which waiting (wall - CPU) {waiting:.1f}")
    for key, seconds in sorted(idle.items(), key=lambda kv: -kv[1])[:shown]:
        write(f"{key:56}{seconds:9.1f}")
