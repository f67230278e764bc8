"""`--no-exec` reads the local source that the cargo configuration puts in place of crates.io
(`cargo vendor`'s `[source.crates-io] replace-with = ...`, `[source.NAME] directory = ...`),
from the user's CARGO_HOME anywhere, from the checkout's `.cargo/config.toml` only inside the
checkout. Each --no-exec run has nothing on PATH, and starting any process raises: a process it
tried to start would fail the test. featcheck runs in this process (its command line, as a user
gives it): what these tests ask is which files it reads, not how a process starts."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import tarfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from cli_in_process import run_in_process
from stub_registry import lock_packages
from support import CRATES, FIXTURES, WORKSPACES, cargo_environment

REGISTRY = FIXTURES / "registry"
VENDORED = (
    "[source.crates-io]\n"
    'replace-with = "mirror"\n'
    "[source.mirror]\n"  # a chain, as cargo follows it
    'registry = "https://mirror.example/index"\n'
    'replace-with = "vendored-sources"\n'
    "[source.vendored-sources]\n"
    'directory = "{directory}"\n'
)


def _audit(path: Path, environment: dict[str, str], *args: str) -> tuple[int, dict[str, Any]]:
    """featcheck's JSON report of `path` and its exit code: its command line in this process
    (cli_in_process.run_in_process), in the test's environment with `environment` over it."""
    done = run_in_process("check", str(path), "--format", "json", *args, environment=environment)
    assert done.returncode in (0, 1, 2) and done.stdout, done.stderr
    return done.returncode, json.loads(done.stdout)


@contextlib.contextmanager
def _no_process_started() -> Iterator[None]:
    """Starting any process raises: a --no-exec audit that tried would fail the test."""

    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError(f"--no-exec started a process: {args!r}")

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(subprocess, "Popen", refuse)
        patch.setattr(os, "system", refuse)
        if hasattr(os, "posix_spawn"):
            patch.setattr(os, "posix_spawn", refuse)
        yield


def _no_exec(
    path: Path, environment: dict[str, str], tmp_path: Path, *args: str
) -> tuple[int, dict[str, Any]]:
    empty = tmp_path / "empty-path"
    empty.mkdir(exist_ok=True)
    with _no_process_started():
        return _audit(path, {**environment, "PATH": str(empty)}, "--no-exec", *args)


def _verdicts(report: dict[str, Any]) -> list[tuple[Any, ...]]:
    keys = ("code", "member", "crate", "crate_version", "feature", "target", "severity")
    return sorted(
        (*(f[k] for k in keys), json.dumps(f["location"]), f["message"]) for f in report["findings"]
    )


def _checkout(tmp_path: Path, config: str, directory: str, *, fill: bool = True) -> Path:
    """pitb-exec-cpu with `config` as its `.cargo/config.toml` and (`fill`) every crates.io
    package of its lockfile in `directory` (as `cargo vendor DIRECTORY` writes them)."""
    project = tmp_path / "project"
    shutil.copytree(CRATES / "pitb-exec-cpu", project, ignore=shutil.ignore_patterns("target"))
    (project / ".cargo").mkdir()
    (project / ".cargo" / "config.toml").write_text(config.format(directory=directory))
    if fill:
        for package in sorted(lock_packages(project)):
            shutil.copytree(REGISTRY / package, project / directory / package)
    return project


def _fresh_home(tmp_path: Path) -> dict[str, str]:
    """An empty CARGO_HOME (nothing downloaded, no configuration) and an empty cache."""
    home = tmp_path / "cargo-home"
    home.mkdir()
    return {**cargo_environment(home), "XDG_CACHE_HOME": str(tmp_path / "cache")}


@pytest.mark.parametrize(
    ("path", "targets"),
    [
        (CRATES / "pitb-exec-cpu", ()),
        (WORKSPACES / "workspace-unification", ()),
        (WORKSPACES / "target-specific", ("--target", "x86_64-pc-windows-msvc")),
    ],
    ids=["pitb-exec-cpu", "workspace-unification", "target-specific-windows"],
)
def test_a_directory_source_of_the_cargo_home_audits_as_cargo_does(
    path: Path,
    targets: tuple[str, ...],
    offline_cargo_for: Callable[..., Path],
    tmp_path: Path,
) -> None:
    """The CARGO_HOME the tests give cargo replaces crates.io with the stub registry, which is
    a directory source: --no-exec finds the same, complete."""
    home = offline_cargo_for(path, lock_only=True)
    environment = {**cargo_environment(home), "XDG_CACHE_HOME": str(tmp_path / "cache")}
    code, with_cargo = _audit(path, environment, *targets)
    no_exec_code, no_exec = _no_exec(path, environment, tmp_path, *targets)
    assert no_exec["complete"] is True and no_exec["incomplete"] == []
    assert _verdicts(no_exec) == _verdicts(with_cargo)
    assert (no_exec_code, code) == ((1, 1) if with_cargo["findings"] else (0, 0))
    assert not any("did not read" in note for note in no_exec["notes"])


@pytest.mark.cargo
def test_a_directory_source_of_the_checkout_audits_as_cargo_does(tmp_path: Path) -> None:
    project = _checkout(tmp_path, VENDORED, "third-party/crates")
    environment = _fresh_home(tmp_path)
    code, with_cargo = _audit(project, environment, "--offline")
    no_exec_code, no_exec = _no_exec(project, environment, tmp_path)
    assert (no_exec_code, code) == (1, 1)
    assert no_exec["complete"] is True
    assert _verdicts(no_exec) == _verdicts(with_cargo)
    assert [(f["code"], f["location"]["line"]) for f in no_exec["findings"]] == [("FC001", 9)]


@pytest.mark.parametrize("where", ["absolute", "linked"])
def test_a_checkout_directory_source_outside_the_checkout_is_not_read(
    where: str, tmp_path: Path
) -> None:
    """The checkout names a directory elsewhere on the machine (the stub registry, a real
    directory source), itself or through a link: nothing there is read, and the audit says
    why it is incomplete."""
    if where == "absolute":
        project = _checkout(tmp_path, VENDORED, REGISTRY.as_posix(), fill=False)
    else:
        project = _checkout(tmp_path, VENDORED, "third-party", fill=False)
        (project / "third-party").symlink_to(REGISTRY, target_is_directory=True)
    code, report = _no_exec(project, _fresh_home(tmp_path), tmp_path)
    assert code == 2
    assert report["complete"] is False and report["findings"] == []
    [gap] = report["incomplete"]
    assert gap["unread"] == ["burn@0.22.1"]
    [reason] = gap["reasons"]
    assert "source `vendored-sources`), outside the checkout, which --no-exec does not read" in (
        reason
    )
    assert any(reason in note for note in report["notes"])


def test_a_local_registry_of_the_cargo_home(tmp_path: Path) -> None:
    """`local-registry`: the `.crate` archives of the lockfile's packages."""
    archives = tmp_path / "local-registry"
    archives.mkdir()
    for name in sorted(lock_packages(CRATES / "pitb-exec-cpu")):
        with tarfile.open(archives / f"{name}.crate", "w:gz") as tar:  # as cargo packs it
            for file in sorted(p for p in (REGISTRY / name).rglob("*") if p.is_file()):
                tar.add(file, arcname=f"{name}/{file.relative_to(REGISTRY / name).as_posix()}")
    environment = _fresh_home(tmp_path)
    (Path(environment["CARGO_HOME"]) / "config.toml").write_text(
        f'[source.crates-io]\nreplace-with = "local"\n[source.local]\nlocal-registry = "{archives}"\n'
    )
    code, report = _no_exec(CRATES / "pitb-exec-cpu", environment, tmp_path)
    assert (code, report["complete"]) == (1, True)
    assert [(f["code"], f["location"]["line"]) for f in report["findings"]] == [("FC001", 9)]
    # Without burn-flex's archive, that one package stays unread, and the audit says so.
    (archives / "burn-flex-0.22.1.crate").unlink()
    code, report = _no_exec(CRATES / "pitb-exec-cpu", environment, tmp_path)
    assert code == 2
    assert [g["unread"] for g in report["incomplete"]] == [["burn-flex@0.22.1"]]
    assert report["incomplete"][0]["reasons"] == [
        "not in the local registry `local` that replaces its registry"
    ]


def test_a_replace_with_cycle_is_one_line_naming_the_file(tmp_path: Path) -> None:
    cycle = (
        '[source.crates-io]\nreplace-with = "a"\n'
        '[source.a]\nregistry = "https://a.example/index"\nreplace-with = "crates-io"\n'
    )
    project = _checkout(tmp_path, cycle, "unused", fill=False)
    empty = tmp_path / "empty-path"
    empty.mkdir()
    with _no_process_started():
        done = run_in_process(
            "check",
            str(project),
            "--no-exec",
            environment={**_fresh_home(tmp_path), "PATH": str(empty)},
        )
    assert done.returncode == 2
    [line] = done.stderr.strip().splitlines()
    assert ".cargo/config.toml:5:" in line
    assert "cycle (crates-io -> a -> crates-io)" in line
