"""rustc's answers kept between runs: asked once per compiler binary, never stale."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest
from support import CRATES, run_featcheck

from featcheck.cargo.command_setup import RustcAnswers


class _Asked:
    def __init__(self, reply: str | None = "host: x86_64-unknown-linux-gnu\n") -> None:
        self.count = 0
        self.reply = reply

    def __call__(self) -> str | None:
        self.count += 1
        return self.reply


def _binary(tmp_path: Path) -> Path:
    rustc = tmp_path / "toolchain" / "bin" / "rustc"
    rustc.parent.mkdir(parents=True)
    rustc.write_bytes(b"\x7fELF one build")
    return rustc


def test_an_answer_is_asked_once_for_the_same_binary_and_question(tmp_path: Path) -> None:
    rustc, cache = _binary(tmp_path), tmp_path / "cache"
    asked = _Asked()
    for _ in range(3):  # a new RustcAnswers per run, as each featcheck process makes one
        answers = RustcAnswers(rustc, cache, {})
        assert answers.ask(["-vV"], asked) == asked.reply
    assert asked.count == 1
    other = _Asked("debug_assertions\n")
    assert RustcAnswers(rustc, cache, {}).ask(["--print=cfg", "--target=x"], other) == other.reply
    assert other.count == 1


def test_a_new_binary_or_environment_asks_again(tmp_path: Path) -> None:
    rustc, cache = _binary(tmp_path), tmp_path / "cache"
    asked = _Asked()
    RustcAnswers(rustc, cache, {}).ask(["-vV"], asked)
    rustc.write_bytes(b"\x7fELF another build, as rustup update writes it")
    RustcAnswers(rustc, cache, {}).ask(["-vV"], asked)
    assert asked.count == 2
    RustcAnswers(rustc, cache, {"RUST_TARGET_PATH": "/specs"}).ask(["-vV"], asked)
    assert asked.count == 3
    stamp = rustc.stat()
    os.utime(rustc, ns=(stamp.st_atime_ns, stamp.st_mtime_ns + 1_000_000_000))
    RustcAnswers(rustc, cache, {}).ask(["-vV"], asked)
    assert asked.count == 4


@pytest.mark.parametrize(
    "question", [["--print=cfg", "--target=/project/custom.json"], ["-vV"]], ids=["spec", "fails"]
)
def test_specification_files_and_failures_are_never_kept(
    tmp_path: Path, question: list[str]
) -> None:
    rustc, cache = _binary(tmp_path), tmp_path / "cache"
    asked = _Asked(None if question == ["-vV"] else 'target_os="none"\n')
    for _ in range(2):
        RustcAnswers(rustc, cache, {}).ask(question, asked)
    assert asked.count == 2


def test_an_unusable_cache_only_costs_the_question(tmp_path: Path) -> None:
    rustc = _binary(tmp_path)
    blocked = tmp_path / "not-a-directory"
    blocked.write_text("a file where the cache directory would go\n")
    asked = _Asked()
    for directory in (None, blocked):
        assert RustcAnswers(rustc, directory, {}).ask(["-vV"], asked) == asked.reply
    assert RustcAnswers(tmp_path / "no-such-rustc", tmp_path / "c", {}).ask(["-vV"], asked)
    assert asked.count == 3


def test_a_second_audit_starts_no_rustc(
    offline_cargo_for: Callable[..., Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    offline_cargo_for(CRATES / "pitb-exec-cpu")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    first = run_featcheck(str(CRATES / "pitb-exec-cpu"), "-v")
    second = run_featcheck(str(CRATES / "pitb-exec-cpu"), "-v")
    assert first.returncode == second.returncode == 1
    assert first.stdout == second.stdout
    assert "featcheck: running: rustc -vV" in first.stderr
    assert "featcheck: running: rustc --print=cfg" in first.stderr
    assert "featcheck: running: rustc" not in second.stderr
    # Nothing cargo reads changed either: its kept answer stands (test_last_answer.py).
    assert "featcheck: reusing the answer of: cargo metadata" in second.stderr
