"""`--fix` writes only regular files inside the checkout root, as an attacker would test it.

A pull request controls every path: a member directory that is a link to somewhere else, a
member `Cargo.toml` that is a symlink (even one pointing inside: an atomic write would replace
the link with a file). Each is refused with one line and exit 2, and no file, inside or
outside, is changed. A path dependency `../victim` that leaves the checkout is cargo's to read
and never featcheck's to edit: the fix is the checkout's own line. featcheck runs in
the test's process (cli_in_process.run_in_process: the command line's own code, real cargo):
what is tested is what it writes and prints, not how its process starts.
"""

from __future__ import annotations

import hashlib
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from cli_in_process import run_in_process
from support import WORKSPACES

LIB_CHAIN = WORKSPACES / "lib-chain"


def _digest(root: Path) -> dict[str, str]:
    return {
        str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file() and not p.is_symlink()
    }


def _checkout(tmp_path: Path) -> tuple[Path, Path]:
    """A repository holding lib-chain's `cli`, and a victim directory beside it."""
    checkout = tmp_path / "checkout"
    (checkout / ".git").mkdir(parents=True)
    shutil.copytree(LIB_CHAIN / "cli", checkout / "cli")
    shutil.copy(LIB_CHAIN / "Cargo.lock", checkout / "Cargo.lock")
    victim = tmp_path / "victim"
    shutil.copytree(LIB_CHAIN / "model", victim)
    return checkout, victim


def _path_dependency_outside(tmp_path: Path) -> tuple[Path, Path, str]:
    checkout, victim = _checkout(tmp_path)
    (checkout / "Cargo.toml").write_text('[workspace]\nresolver = "3"\nmembers = ["cli"]\n')
    manifest = checkout / "cli" / "Cargo.toml"
    manifest.write_text(manifest.read_text().replace('"../model"', '"../../victim"'))
    return checkout, victim, "../victim/Cargo.toml"


def _member_linking_out(tmp_path: Path) -> tuple[Path, Path, str]:
    checkout, victim = _checkout(tmp_path)
    (checkout / "Cargo.toml").write_text((LIB_CHAIN / "Cargo.toml").read_text())
    (checkout / "model").symlink_to(victim, target_is_directory=True)
    return checkout, victim, "checkout/model"  # the link, named by the read side


def _manifest_link_inside(tmp_path: Path) -> tuple[Path, Path, str]:
    checkout, victim = _checkout(tmp_path)
    (checkout / "Cargo.toml").write_text((LIB_CHAIN / "Cargo.toml").read_text())
    shutil.copytree(victim, checkout / "model")
    shared = checkout / "shared-model.toml"
    (checkout / "model" / "Cargo.toml").rename(shared)
    (checkout / "model" / "Cargo.toml").symlink_to("../shared-model.toml")
    return checkout, victim, "model/Cargo.toml"


@pytest.mark.parametrize(
    ("make", "why"),
    [
        # the read side refuses it first: cargo would read the member through the link
        (_member_linking_out, "leads out of the checkout"),
        (_manifest_link_inside, "is a symlink"),
    ],
    ids=["member-directory-links-out", "manifest-is-a-symlink"],
)
def test_fix_refuses_to_write_where_the_checkout_points(
    make: Callable[[Path], tuple[Path, Path, str]],
    why: str,
    tmp_path: Path,
    offline_cargo_for: Callable[..., Path],
) -> None:
    offline_cargo_for(LIB_CHAIN)
    checkout, victim, target = make(tmp_path)
    before = (_digest(checkout), _digest(victim))
    audited = run_in_process(str(checkout), "--format", "json")
    refused_to_read = why == "leads out of the checkout"
    assert audited.returncode == (2 if refused_to_read else 1), audited.stderr
    for flag in ("--fix", "--diff"):
        result = run_in_process(str(checkout), flag)
        assert result.returncode == 2, result.stderr
        (line,) = result.stderr.strip().splitlines()
        assert target in line and why in line, line
        assert (_digest(checkout), _digest(victim)) == before


def test_a_path_dependency_outside_the_checkout_is_fixed_in_the_checkout(
    tmp_path: Path, offline_cargo_for: Callable[..., Path]
) -> None:
    offline_cargo_for(LIB_CHAIN)
    checkout, victim, _ = _path_dependency_outside(tmp_path)
    victim_before = _digest(victim)
    for flag in ("--diff", "--fix"):
        result = run_in_process(str(checkout), flag)
        assert result.returncode in (0, 1), result.stderr
        headers = [line for line in result.stdout.splitlines() if line.startswith("+++ ")]
        assert all(".." not in header for header in headers), headers
    assert _digest(victim) == victim_before
    assert "burn-flex" in (checkout / "cli" / "Cargo.toml").read_text()
