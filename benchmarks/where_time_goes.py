#!/usr/bin/env python3
"""Where one audit's time goes: cargo's call, resolution, rules, fixes, rendering.

Runs `featcheck ARGS` in this process, as the command line does, with a wall-clock timer around
each stage of the pipeline (the functions `featcheck.pipeline` calls), and prints each stage's
seconds beside the whole run: before the first stage, the command line waits for cargo's call
and reads its answer; after the last, it renders the report.

    .venv/bin/python benchmarks/where_time_goes.py [--repeat 3] -- PATH [featcheck options]

Run it on a workspace after an edit (change a member's description first) to see what a
pre-commit hook waits for; the stages are timed without a profiler, so the numbers are what a
user's run spends, give or take the timer calls.
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import functools
import gc
import io
import statistics
import sys
import time
from collections.abc import Callable
from typing import Any

STAGES = ("scope_of", "plan_builds", "resolve", "detect_all", "place", "finish")


def timed(spent: collections.Counter[str], name: str, function: Callable[..., Any]) -> Any:
    @functools.wraps(function)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        start = time.perf_counter()
        spent.setdefault("first stage starts", start)
        try:
            return function(*args, **kwargs)
        finally:
            spent[name] += time.perf_counter() - start
            spent["last stage ends"] = time.perf_counter()

    return wrapper


def one_run(arguments: list[str]) -> tuple[float, collections.Counter[str]]:
    from featcheck import pipeline
    from featcheck.cli import run

    spent: collections.Counter[str] = collections.Counter()
    originals = {name: getattr(pipeline, name) for name in STAGES if hasattr(pipeline, name)}
    for name, function in originals.items():
        setattr(pipeline, name, timed(spent, name, function))
    start = time.perf_counter()
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            run(arguments)
    finally:
        for name, function in originals.items():
            setattr(pipeline, name, function)
    end = time.perf_counter()
    spent["before: cargo's call, its answer read"] = spent["first stage starts"] - start
    spent["after: rendering"] = end - spent["last stage ends"]
    return end - start, spent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("featcheck", nargs=argparse.REMAINDER)
    options = parser.parse_args()
    arguments = [a for a in options.featcheck if a != "--"]
    # As in featcheck's own process (cli._run_to_a_reader): no cyclic garbage collection,
    # which would otherwise land in whichever stage allocates when it runs.
    gc.disable()
    runs = [one_run(arguments) for _ in range(options.repeat)]
    total = statistics.median(seconds for seconds, _ in runs)
    print(f"featcheck {' '.join(arguments)}: median of {options.repeat} runs in one process")
    print(f"{'stage':<40}{'seconds':>9}{'share':>8}")
    for name in ("before: cargo's call, its answer read", *STAGES, "after: rendering"):
        seconds = statistics.median(spent[name] for _, spent in runs)
        print(f"{name:<40}{seconds:>9.3f}{seconds / total:>8.0%}")
    print(f"{'whole audit, in process':<40}{total:>9.3f}")


if __name__ == "__main__":
    sys.exit(main())
