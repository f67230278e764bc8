"""What every run of the matrix must not do, whatever it was asked and however it ended.

- run a planted program (no marker written);
- send a credential to the attacker's host (no Authorization header);
- change a byte outside the checkout and featcheck's own cache: the victim's files, the user's
  HOME, the family itself (cargo's own bookkeeping in the user's cargo home aside);
- print, or copy into its cache, what a file outside the checkout holds (VICTIM_SECRET);
- grow featcheck's cache by more than the largest file it would ever read (64 MiB);
- end otherwise than with 0, 1 or 2, after its time limit, out of memory (2 GiB of address
  space), or with a traceback.
"""

from __future__ import annotations

import shutil
import stat
from dataclasses import dataclass
from pathlib import Path

from hostile_world import VICTIM_SECRET, Snapshot, World, changed, walk_files

MEMORY_LIMIT = 2 << 30
CACHE_GROWTH_LIMIT = 64 << 20
CARGO_BOOKKEEPING = (".package-cache", ".package-cache-mutate", ".global-cache", "registry", "git")
"""What cargo itself writes in the user's cargo home (its locks, downloads and git database)."""
PROTECTED = ("victim", "home", "family")
"""What a run must not change, restored from a copy after one did (the next row starts clean)."""


@dataclass
class Outcome:
    command: str
    returncode: int | None
    """None: killed at the time limit."""
    output: str
    seconds: float
    cpu: float = 0.0
    """CPU seconds of the run and all it started (what it costs on an idle machine)."""
    timeout: float = 0.0


def changed_outside(before: Snapshot, after: Snapshot) -> list[str]:
    """What changed between two snapshots of the world, cargo's own bookkeeping aside."""
    return [change for change in changed(before, after) if not _bookkeeping(change)]


def problems(
    outcome: Outcome,
    world: World,
    changes: list[str],
    cache: tuple[CacheState, CacheState],
    left_running: list[str],
) -> list[str]:
    """What `outcome` broke, each in a line that starts with the command."""
    found = [*_ending(outcome)]
    if left_running:
        found.append(f"left processes running: {left_running}")
    markers = world.written_markers()
    if markers:
        found.append(f"planted programs ran: {markers}")
    sent = [f"{method} {path}: {auth}" for method, path, auth in world.host.take() if auth]
    if sent:
        found.append(f"credentials sent to the attacker's host: {sent}")
    if changes:
        found.append(f"changed outside the checkout: {changes[:8]}")
    if VICTIM_SECRET in outcome.output:
        found.append("printed the content of a file outside the checkout")
    found += _cache_problems(*cache)
    return [f"{outcome.command}: {problem}" for problem in found]


def _ending(outcome: Outcome) -> list[str]:
    found = []
    if outcome.returncode is None:
        found.append(f"still running after {outcome.timeout:.0f} s: killed")
    elif outcome.returncode not in (0, 1, 2):
        found.append(f"exit code {outcome.returncode}")
    if "Traceback (most recent call last)" in outcome.output:
        found.append("a traceback")
    if "MemoryError" in outcome.output:
        found.append(f"out of memory at {MEMORY_LIMIT >> 30} GiB")
    return found


@dataclass(frozen=True)
class CacheState:
    """featcheck's cache at one moment: its size, and the files that hold the victim's secret."""

    size: int
    holding_secret: frozenset[Path]


def cache_state(cache: Path) -> CacheState:
    size, holding = 0, set()
    for path in walk_files(cache):
        status = path.lstat()
        size += status.st_size
        readable = stat.S_ISREG(status.st_mode) and 0 < status.st_size <= CACHE_GROWTH_LIMIT
        if readable and VICTIM_SECRET.encode() in path.read_bytes():
            holding.add(path)
    return CacheState(size, frozenset(holding))


def _cache_problems(before: CacheState, after: CacheState) -> list[str]:
    found = []
    if after.size - before.size > CACHE_GROWTH_LIMIT:
        found.append(f"featcheck's cache grew by {(after.size - before.size) >> 20} MiB")
    if after.holding_secret - before.holding_secret:
        found.append("copied the content of a file outside the checkout into its cache")
    return found


def _bookkeeping(change: str) -> bool:
    """A change cargo makes in the run's cargo home of the user's (`runs/ROW/cargo-home/...`)."""
    parts = Path(change.split(":", 1)[0]).parts
    return len(parts) > 3 and parts[2] == "cargo-home" and parts[3] in CARGO_BOOKKEEPING


def _pristine(base: Path) -> Path:
    return base.parent / f"{base.name}-pristine"


def keep_pristine(base: Path) -> None:
    for name in PROTECTED:
        shutil.copytree(base / name, _pristine(base) / name, symlinks=True)


def restore(base: Path) -> None:
    for name in PROTECTED:
        shutil.rmtree(base / name)
        shutil.copytree(_pristine(base) / name, base / name, symlinks=True)
