"""What a user sees when the checkout asks cargo to unify features over the whole workspace
(`resolver.feature-unification = "workspace"`, RFC 3692), end to end: real cargo, real CLI.

The fixture feature-unification has two members: `lean` takes memchr and crc32fast without
their default features (so without `std`), `full` takes memchr with its defaults. Built per
member (stable cargo ignores the key), lean gets neither `std`: FC012 and FC013. Unified over
the workspace (nightly cargo with the unstable flag), lean's memchr gets `std` from full: only
FC013 is left, and the finding says which unification it assumed.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from cargo_tree_oracle import run_in_process_resolved_by
from cli_in_process import run_in_process
from nightly_support import needs_nightly
from support import WORKSPACES

FIXTURE = WORKSPACES / "feature-unification"
UNIFIED_NOTE = (
    'features unified over the whole workspace, as resolver.feature-unification = "workspace"'
    " in .cargo/config.toml asks (nightly)"
)
PER_MEMBER = {("lean", "FC012"), ("lean", "FC013")}
UNIFIED = {("lean", "FC013")}


def _default_is_nightly() -> bool:
    try:
        output = subprocess.run(["rustc", "-vV"], capture_output=True, text=True).stdout
    except OSError:
        return False  # the cargo fixtures skip these tests then
    return "-nightly" in output or "-dev" in output


@pytest.fixture
def checkout(workspace_copy: Callable[[str], Path], offline_cargo_for: Callable[..., Path]) -> Path:
    """A copy of the fixture with its `.cargo/config.toml` (resolver and unstable flag)."""
    offline_cargo_for(FIXTURE, lock_only=True)
    path = workspace_copy("feature-unification")
    (path / ".cargo").mkdir()
    (path / ".cargo" / "config.toml").write_text((FIXTURE / "cargo-config.toml").read_text())
    return path


def _on_nightly(path: Path) -> None:
    (path / "rust-toolchain.toml").write_text('[toolchain]\nchannel = "nightly"\n')


def _audit(path: Path, resolver: str = "featcheck") -> tuple[int, dict[str, Any]]:
    done = run_in_process_resolved_by(resolver, "--offline", "--format", "json", str(path))
    assert done.returncode in (0, 1), done.stderr
    return done.returncode, json.loads(done.stdout)


def _found(report: dict[str, Any]) -> set[tuple[str, str]]:
    return {(f["member"], f["code"]) for f in report["findings"]}


@needs_nightly
@pytest.mark.parametrize("resolver", ["featcheck", "cargo"])
def test_nightly_with_the_unstable_flag_unifies_and_says_so(checkout: Path, resolver: str) -> None:
    _on_nightly(checkout)
    code, report = _audit(checkout, resolver)
    assert code == 1
    assert _found(report) == UNIFIED  # memchr has `std` from full
    assert all(UNIFIED_NOTE in f["notes"] for f in report["findings"])
    assert not [n for n in report["notes"] if "feature-unification" in n]


@needs_nightly
def test_the_text_report_names_the_unification(checkout: Path) -> None:
    _on_nightly(checkout)
    done = run_in_process("--offline", "-v", str(checkout))
    assert done.returncode == 1, done.stderr
    text = " ".join(done.stdout.split())  # the report wraps lines
    assert "= note: " + UNIFIED_NOTE in text
    assert "FC012" not in text


def test_stable_cargo_ignores_it_and_the_result_says_why(checkout: Path) -> None:
    if _default_is_nightly():
        pytest.skip("the default toolchain is nightly: this checks what a stable one does")
    code, report = _audit(checkout)
    assert code == 1
    assert _found(report) == PER_MEMBER
    (note,) = [n for n in report["notes"] if "feature-unification" in n]
    assert note.startswith(
        'resolver.feature-unification = "workspace" in .cargo/config.toml is ignored: the '
        "toolchain is not nightly (rustc 1."
    )
    assert note.endswith("each member was resolved on its own, as cargo does")
    assert not [f for f in report["findings"] if UNIFIED_NOTE in f["notes"]]


@needs_nightly
def test_nightly_without_the_unstable_flag_ignores_it(checkout: Path) -> None:
    _on_nightly(checkout)
    config = checkout / ".cargo" / "config.toml"
    config.write_text(config.read_text().replace("feature-unification = true", ""))
    code, report = _audit(checkout)
    assert code == 1
    assert _found(report) == PER_MEMBER
    (note,) = [n for n in report["notes"] if "feature-unification" in n]
    assert (
        "is ignored: nightly cargo reads it only with `[unstable] feature-unification = true`"
        in (note)
    )


def test_without_running_a_toolchain_it_is_not_applied(checkout: Path) -> None:
    done = run_in_process("--no-exec", "--format", "json", str(checkout))
    report = json.loads(done.stdout)
    assert _found(report) == PER_MEMBER
    (note,) = [n for n in report["notes"] if "feature-unification" in n]
    assert "is not applied: --no-exec runs no toolchain" in note


@pytest.mark.parametrize(
    ("setting", "line"),
    [
        ('[resolver]\nfeature-unification = "everything"\n', 2),
        ('[unstable]\nfeature-unification = "yes"\n', 2),
    ],
)
def test_a_value_cargo_refuses_is_refused_at_its_line(
    checkout: Path, setting: str, line: int
) -> None:
    (checkout / ".cargo" / "config.toml").write_text(setting)
    done = run_in_process("--offline", str(checkout))
    assert done.returncode == 2
    (message,) = done.stderr.strip().splitlines()
    assert f".cargo/config.toml:{line}:" in message
    assert "feature-unification` must be" in message
