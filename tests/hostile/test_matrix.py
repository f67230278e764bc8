"""Every entry point of featcheck (hostile_matrix.py) against the clean, planted, escapes and
network checkouts with the user's own homes; test_matrix_homes.py runs the planted checkout
with the homes inside it. Each run must break nothing hostile_checks.py lists."""

from __future__ import annotations

import base64
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from hostile_matrix import COLUMNS, Column, Entry, rows
from hostile_run import SCRIPTS, Setting, assert_row
from hostile_support import CC
from hostile_world import GIT_SECRET
from support import write_offline_cargo_home

pytestmark = pytest.mark.cargo

COLUMNS_HERE = tuple(c for c in COLUMNS if c.name in ("clean", "planted", "escapes", "network"))


@pytest.mark.parametrize(("entry", "column"), rows(COLUMNS_HERE))
def test_entry_point_on_checkout(entry: Entry, column: Column, setting: Setting) -> None:
    assert_row(entry, column, setting)


# --- the family is live: without featcheck's line, its attacks do what they say ---------------


def _copy(setting: Setting, name: str, into: str) -> Path:
    copy = setting.runs / into
    shutil.copytree(setting.family[name].root, copy, symlinks=True)
    return copy


def _environment(setting: Setting, home: Path) -> dict[str, str]:
    rustup = os.environ.get("RUSTUP_HOME") or str(Path.home() / ".rustup")
    return {
        **os.environ,
        "HOME": str(setting.world.home),
        "RUSTUP_HOME": rustup,
        "CARGO_HOME": str(home),
        "XDG_CACHE_HOME": str(home / "cache"),
    }


def test_the_planted_checkout_is_live(setting: Setting) -> None:
    """Trusted, its cargo configuration runs its programs; Python started in it imports its
    modules; git in it runs its configured programs and fetches a missing object."""
    world = setting.world
    checkout = _copy(setting, "planted", "live-planted")
    home = write_offline_cargo_home(setting.runs / "live-home", setting.registry)
    environment = _environment(setting, home)
    world.clear_markers()
    subprocess.run(
        [str(SCRIPTS / "featcheck"), str(checkout), "--trust-checkout"],
        env=environment,
        capture_output=True,
        check=False,
        timeout=120,
    )
    expected = {"rustc-wrapper", "shared-object"} if CC else {"rustc-wrapper"}
    assert expected <= set(world.written_markers()), world.written_markers()
    subprocess.run([sys.executable, "-c", "import hashlib"], cwd=checkout, check=False)
    subprocess.run(["git", "status"], cwd=checkout, capture_output=True, check=False)
    subprocess.run(
        ["git", "cat-file", "-p", "hostile/promisor:Cargo.lock"],
        cwd=checkout,
        capture_output=True,
        check=False,
    )
    assert {"python-hashlib.py", "fsmonitor", "ssh"} <= set(world.written_markers())
    world.clear_markers()


def test_the_network_checkout_is_live(setting: Setting) -> None:
    """Plain cargo fetches its git dependency and sends the user's git credentials."""
    checkout = _copy(setting, "network", "live-network")
    home = write_offline_cargo_home(setting.runs / "live-online-home", setting.registry)
    config = home / "config.toml"
    config.write_text(config.read_text().replace("offline = true", "offline = false"))
    subprocess.run(
        ["cargo", "metadata", "--format-version=1"],
        cwd=checkout,
        env=_environment(setting, home),
        capture_output=True,
        check=False,
        timeout=120,
    )
    sent = [auth for _, _, auth in setting.world.host.take() if auth]
    assert [base64.b64decode(auth.split()[1]).decode() for auth in sent] == [f"ci-bot:{GIT_SECRET}"]
