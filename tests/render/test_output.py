"""`--output FILE`: the report lands in FILE and nowhere else, whatever the checkout committed."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

import pytest
from actions_support import clear_actions_environment
from cli_in_process import run_in_process
from support import CRATES

from featcheck.cli.outcome import write_report
from featcheck.errors import FeatcheckError


@pytest.fixture(autouse=True)
def _outside_actions(monkeypatch: pytest.MonkeyPatch) -> None:
    clear_actions_environment(monkeypatch)


def test_a_new_name_and_a_regular_file_are_written(tmp_path: Path) -> None:
    target = tmp_path / "report.sarif"
    write_report(target, "one\n")
    assert target.read_text() == "one\n"
    target.chmod(0o640)
    write_report(target, "two\n")
    assert target.read_text() == "two\n"
    assert [p.name for p in tmp_path.iterdir()] == ["report.sarif"]  # no temporary left


def test_the_report_gets_the_mode_a_redirection_would_without_touching_the_umask(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The umask is the whole process's: set even for a moment, a thread starting git meanwhile
    # (the revision audit of --new-since) would make world-writable files.
    previous = os.umask(0o027)
    try:
        monkeypatch.setattr(os, "umask", _no_umask)
        write_report(tmp_path / "report.sarif", "report\n")
    finally:
        monkeypatch.undo()
        os.umask(previous)
    assert (tmp_path / "report.sarif").stat().st_mode & 0o777 == 0o640


def _no_umask(mask: int) -> int:
    raise AssertionError(f"os.umask({mask:#o}) changes the umask of every thread")


def test_a_symlink_is_refused_and_its_target_untouched(tmp_path: Path) -> None:
    victim = tmp_path / "victim"
    victim.write_text("precious\n")
    link = tmp_path / "report.sarif"
    link.symlink_to(victim)
    with pytest.raises(FeatcheckError, match="is a symlink"):
        write_report(link, "report\n")
    assert victim.read_text() == "precious\n" and link.is_symlink()
    dangling = tmp_path / "dangling.sarif"
    dangling.symlink_to(tmp_path / "would-be-created")
    with pytest.raises(FeatcheckError, match="is a symlink"):
        write_report(dangling, "report\n")
    assert not (tmp_path / "would-be-created").exists()


def test_special_files_are_refused(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    with pytest.raises(FeatcheckError, match="is not a regular file"):
        write_report(fifo, "report\n")
    with pytest.raises(FeatcheckError, match="is not a regular file"):
        write_report(tmp_path, "report\n")


def test_a_symlinked_directory_on_a_relative_path_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    checkout = tmp_path / "checkout"
    (checkout / "real").mkdir(parents=True)
    (checkout / "reports").symlink_to(outside)
    monkeypatch.chdir(checkout)
    with pytest.raises(FeatcheckError, match="the directory reports is a symlink"):
        write_report(Path("reports/out.sarif"), "report\n")
    with pytest.raises(FeatcheckError, match=r"the directory real/\.\./reports is a symlink"):
        write_report(Path("real/../reports/out.sarif"), "report\n")
    assert list(outside.iterdir()) == []
    write_report(Path("real/out.sarif"), "report\n")
    assert (checkout / "real" / "out.sarif").read_text() == "report\n"


@pytest.mark.usefixtures("remembered_cargo")
def test_the_cli_writes_sarif_to_the_file_and_refuses_a_link(
    offline_cargo_for: Callable[..., Path], tmp_path: Path
) -> None:
    offline_cargo_for(CRATES / "pitb-exec-cpu")
    target = tmp_path / "out.sarif"
    done = run_in_process(str(CRATES / "pitb-exec-cpu"), "--format", "sarif", "-o", str(target))
    assert done.returncode == 1, done.stderr
    assert done.stdout == ""
    assert json.loads(target.read_text())["runs"][0]["results"][0]["ruleId"] == "FC001"
    victim = tmp_path / "victim"
    victim.write_text("precious\n")
    link = tmp_path / "link.sarif"
    link.symlink_to(victim)
    done = run_in_process(str(CRATES / "pitb-exec-cpu"), "--format", "sarif", "-o", str(link))
    assert done.returncode == 2
    assert done.stderr == (
        f"featcheck: error: {link}: is a symlink; featcheck writes a report only to a regular "
        "file or a new name\n"
    )
    assert victim.read_text() == "precious\n"


def test_missing_directories_are_made_but_never_through_a_link(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    checkout = tmp_path / "checkout"
    checkout.mkdir()
    outside = tmp_path / "outside"
    outside.mkdir()
    (checkout / "reports").symlink_to(outside)
    monkeypatch.chdir(checkout)
    write_report(Path("out/sarif/x.sarif"), "report\n")
    assert (checkout / "out" / "sarif" / "x.sarif").read_text() == "report\n"
    with pytest.raises(FeatcheckError, match="the directory reports is a symlink"):
        write_report(Path("reports/new/x.sarif"), "report\n")
    assert list(outside.iterdir()) == []


@pytest.mark.usefixtures("remembered_cargo")
def test_sarif_beside_the_text_report_from_one_audit(
    offline_cargo_for: Callable[..., Path], tmp_path: Path
) -> None:
    offline_cargo_for(CRATES / "pitb-exec-cpu")
    target = tmp_path / "out" / "featcheck.sarif"
    done = run_in_process(str(CRATES / "pitb-exec-cpu"), "--sarif", str(target))
    assert done.returncode == 1, done.stderr
    assert "error[FC001]" in done.stdout
    [result] = json.loads(target.read_text())["runs"][0]["results"]
    assert result["ruleId"] == "FC001"
    uri = result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
    assert uri == "crates/pitb-exec-cpu/Cargo.toml"
