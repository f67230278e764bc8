"""cargo's last metadata answer, parsed while cargo works, stands in only for the same text.

featcheck's command line runs in this process (cli_in_process.run_in_process): what one run
keeps for the next lies in the user cache on disk, as between two runs of a user."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from cli_in_process import run_in_process
from support import WORKSPACES, trust_of

from featcheck.cargo import last_answer as last_answer_module
from featcheck.cargo.last_answer import MAX_KEPT, LastAnswer
from featcheck.cargo.runner import CargoRunner
from featcheck.workspace import cargo_metadata as metadata_module
from featcheck.workspace.workspace import Workspace

FLAGGED = "regex-without-perf"
"""A project with one finding (FC011: regex without its `perf` features), small enough that cargo
and the audit take little time: what is kept between runs does not depend on the size."""
CLEAN = "regex-with-perf"
"""The same project with `perf`: no finding."""


def _copy(workspace: str, into: Path) -> Path:
    project = into / workspace
    shutil.copytree(WORKSPACES / workspace, project, ignore=shutil.ignore_patterns("target"))
    return project


def _kept(cache: Path) -> list[Path]:
    return sorted((cache / "featcheck" / "metadata").glob("*.json"))


def _count_parses(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The length of each metadata text the kept answer's reader parses, as it parses it."""
    parsed: list[int] = []
    parse = metadata_module.parse_metadata

    def counting(text: str) -> Workspace:
        parsed.append(len(text))
        return parse(text)

    monkeypatch.setattr(last_answer_module, "parse_metadata", counting)
    return parsed


def test_an_answer_that_differs_from_the_kept_one_is_cargos(
    tmp_path: Path, offline_cargo_for: Callable[..., Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The kept answer of a project is replaced by another valid one, whose verdict differs
    (the clean crate's): the audit still reports what cargo answers now, and keeps that."""
    flagged = _copy(FLAGGED, tmp_path)
    clean = _copy(CLEAN, tmp_path)
    cache = tmp_path / "cache"
    monkeypatch.setenv("XDG_CACHE_HOME", str(cache))

    offline_cargo_for(clean)
    first = run_in_process(str(clean), "--format", "json")
    assert first.returncode == 0, first.stderr
    [clean_answer] = _kept(cache)
    clean_text = clean_answer.read_text()

    offline_cargo_for(flagged)
    fresh = run_in_process(str(flagged), "--format", "json")
    assert fresh.returncode == 1, fresh.stderr
    [flagged_answer] = [p for p in _kept(cache) if p != clean_answer]
    flagged_text = flagged_answer.read_text()
    again = run_in_process(str(flagged), "--format", "json")
    assert again.stdout == fresh.stdout  # the kept answer, equal to cargo's, parsed early

    flagged_answer.write_text(clean_text)
    planted = run_in_process(str(flagged), "--format", "json")
    assert planted.returncode == 1, planted.stderr
    assert planted.stdout == fresh.stdout
    assert [f["code"] for f in json.loads(planted.stdout)["findings"]] == ["FC011"]
    assert flagged_answer.read_text() == flagged_text  # cargo's answer is kept again


def test_the_same_answer_is_not_parsed_again(
    tmp_path: Path, offline_cargo_for: Callable[..., Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The second time, the text parsed while cargo worked stands in for cargo's equal one:
    nothing is parsed once cargo has answered."""
    project = _copy(CLEAN, tmp_path)
    offline_cargo_for(project)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    parsed = _count_parses(monkeypatch)

    def audit() -> tuple[int, int, Workspace]:
        parsed.clear()
        pending = CargoRunner(project, trust=trust_of(project)).start_metadata(
            project / "Cargo.toml"
        )
        pending.read_last_answer(LastAnswer.of_command)
        before_the_answer = len(parsed)
        metadata = pending.result(last_answer_module.parse_metadata)  # counted too
        pending.settle()
        return before_the_answer, len(parsed), metadata

    assert audit()[:2] == (0, 1)  # nothing kept yet: cargo's answer is parsed when it comes
    early, total, metadata = audit()
    assert (early, total) == (1, 1)
    assert [(p.name, Path(p.manifest_path)) for p in metadata.members] == [
        ("app", project / "Cargo.toml")
    ]


def test_after_an_edit_the_kept_answer_is_not_read(
    tmp_path: Path, offline_cargo_for: Callable[..., Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A manifest or lockfile written after the kept answer: cargo answers otherwise, as a rule,
    so the kept answer is not even read (nor audited ahead); the report is cargo's as ever."""
    project = _copy(FLAGGED, tmp_path)
    offline_cargo_for(project)
    cache = tmp_path / "cache"
    monkeypatch.setenv("XDG_CACHE_HOME", str(cache))
    parsed = _count_parses(monkeypatch)
    first = run_in_process(str(project), "--format", "json")
    [kept] = _kept(cache)
    written = kept.stat().st_mtime_ns

    def read_ahead(edited: Path | None) -> bool:
        if edited is not None:  # written a second after the kept answer was
            os.utime(edited, ns=(written + 10**9, written + 10**9))
        parsed.clear()
        pending = CargoRunner(project, trust=trust_of(project)).start_metadata(
            project / "Cargo.toml"
        )
        pending.read_last_answer(LastAnswer.of_command)
        pending.result(metadata_module.parse_metadata)
        pending.settle()
        return bool(parsed)

    assert read_ahead(None)
    assert not read_ahead(project / "Cargo.lock")
    os.utime(kept, ns=(written, written))
    manifest = project / "Cargo.toml"
    manifest.write_text(manifest.read_text().replace("Trimmed for compile time", "an edit"))
    assert not read_ahead(manifest)
    again = run_in_process(str(project), "--format", "json")
    assert (again.returncode, again.stdout) == (first.returncode, first.stdout)


def test_an_unreadable_kept_answer_is_none(tmp_path: Path) -> None:
    last = LastAnswer(tmp_path / "answer.json")
    last.read()  # missing
    assert last.matching("{}") is None
    (tmp_path / "answer.json").write_text('{"packages": [')
    last.read()  # not metadata
    assert last.matching('{"packages": [') is None


def test_only_the_answers_written_last_are_kept(tmp_path: Path) -> None:
    for index in range(MAX_KEPT + 3):
        last = LastAnswer(tmp_path / f"{index:02}.json")
        last.keep(f"answer {index}\n")
        last.settle()
    kept = sorted(p.name for p in tmp_path.iterdir())
    assert len(kept) == MAX_KEPT
    assert "00.json" not in kept
    assert f"{MAX_KEPT + 2:02}.json" in kept


def test_an_audit_that_needs_cargo_again_is_not_done_ahead(
    tmp_path: Path, offline_cargo_for: Callable[..., Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """With cargo's answer known, the audit is done while cargo works; one that must ask cargo
    once more (here: a fix whose new dependency cargo confirms in a copy) is given up there and
    done after cargo's answer, as without a kept answer: the same diff, not an unconfirmed one."""
    project = tmp_path / "app"
    shutil.copytree(WORKSPACES / "shape-g-new-dependency", project)
    offline_cargo_for(project)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    # app is a library: its finding is info, and so is the fix's level here.
    first = run_in_process(str(project), "--diff", "--fix-level", "info")
    assert first.returncode == 1, first.stderr
    assert "+matrixmultiply = " in first.stdout
    again = run_in_process(str(project), "--diff", "--fix-level", "info")
    assert (again.returncode, again.stdout, again.stderr) == (1, first.stdout, first.stderr)


def test_without_a_usable_user_cache_the_audit_is_the_same(
    tmp_path: Path, offline_cargo_for: Callable[..., Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Where featcheck's cache cannot be made (here the cache home is a file), cargo keeps
    nothing and no answer is kept: the audit is the same, twice."""
    project = _copy(FLAGGED, tmp_path)
    offline_cargo_for(project)
    cache_home = tmp_path / "not-a-directory"
    cache_home.write_text("")
    monkeypatch.setenv("XDG_CACHE_HOME", str(cache_home))
    runs = [run_in_process(str(project), "--format", "json") for _ in range(2)]
    for done in runs:
        assert done.returncode == 1, done.stderr
        assert "Traceback" not in done.stderr
    assert runs[0].stdout == runs[1].stdout
    assert [f["code"] for f in json.loads(runs[0].stdout)["findings"]] == ["FC011"]
    assert not (project / "target").exists()


def test_after_a_members_edit_the_kept_answer_is_not_audited_ahead(
    tmp_path: Path, offline_cargo_for: Callable[..., Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A member's manifest written after the kept answer (the root manifest and the lockfile
    unchanged: a pre-commit hook's usual run in a workspace): cargo answers otherwise, so the
    kept answer is not audited ahead; the report is cargo's as ever."""
    project = _copy("proc-macro-host-only", tmp_path)
    offline_cargo_for(project)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    run_in_process(str(project), "--format", "json")
    [kept] = _kept(tmp_path / "cache")
    written = kept.stat().st_mtime_ns

    def kept_answer_read() -> bool:
        pending = CargoRunner(project, trust=trust_of(project)).start_metadata(
            project / "Cargo.toml"
        )
        pending.read_last_answer(LastAnswer.of_command)
        read = pending.last_answer is not None
        pending.result(metadata_module.parse_metadata)
        pending.settle()
        return read

    assert kept_answer_read()
    member = project / "macros" / "Cargo.toml"
    member.write_text(
        member.read_text().replace("publish = false", 'publish = false\ndescription = "an edit"')
    )
    os.utime(member, ns=(written + 10**9, written + 10**9))
    assert not kept_answer_read()
    edited = run_in_process(str(project), "--format", "json")
    fresh = tmp_path / "fresh"
    monkeypatch.setenv("XDG_CACHE_HOME", str(fresh))
    assert edited.stdout == run_in_process(str(project), "--format", "json").stdout
