"""`--no-exec` finds a registry package only in the directory cargo names after its source id.

A default-mode audit of a hostile checkout whose configuration replaces crates-io with
`sparse+http://index.crates.io-0.evil.example/` leaves that registry's packages in the user's
cargo home, under `index.crates.io-0.evil.example-<hash>`. A later, honest `--no-exec` audit of
another project must not take them for crates.io's: the directories are planted here as cargo
would have left them, and the honest audit still finds the template's error.
"""

from __future__ import annotations

import io
import json
import shutil
import tarfile
from pathlib import Path

import pytest
from support import CRATES, FIXTURES, run_featcheck

from featcheck.noexec.sources import short_hashes, source_directories

CRATES_IO_DIR = "index.crates.io-1949cf8c6b5b557f"
"""Where cargo 1.85+ unpacks crates.io's packages (its hash of the crates.io source id)."""


EVIL_SOURCE = "sparse+http://index.crates.io-0.evil.example/"


def _poisoned_flex(directory: Path) -> None:
    """An attacker's burn-flex 0.22.1 whose `std` turns rayon on: believed, the template's
    finding is gone."""
    shutil.copytree(FIXTURES / "registry" / "burn-flex-0.22.1", directory)
    manifest = directory / "Cargo.toml"
    manifest.write_text(
        manifest.read_text().replace('std = ["gemm/std"', 'std = ["rayon", "gemm/std"')
    )


def _evil_directory() -> str:
    """What cargo names the replacement's directory: `HOST-HASH` of that source id."""
    return f"index.crates.io-0.evil.example-{short_hashes(3, EVIL_SOURCE)[0]}"


def honest_home(home: Path) -> Path:
    """A CARGO_HOME where crates.io's packages were unpacked by an honest build."""
    source = home / "registry" / "src" / CRATES_IO_DIR
    source.mkdir(parents=True)
    for package in (FIXTURES / "registry").iterdir():
        (source / package.name).symlink_to(package, target_is_directory=True)
    return home


def no_exec_findings(project: Path) -> tuple[int, list[str]]:
    result = run_featcheck(str(project), "--no-exec", "--format", "json")
    assert "Traceback" not in result.stderr
    report = json.loads(result.stdout) if result.stdout else {"findings": []}
    return result.returncode, [f["code"] for f in report["findings"]]


def test_a_planted_registry_directory_is_not_taken_for_crates_io(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = honest_home(tmp_path / "home")
    monkeypatch.setenv("CARGO_HOME", str(home))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    project = tmp_path / "ws"
    shutil.copytree(CRATES / "pitb-exec-cpu", project, ignore=shutil.ignore_patterns("target"))
    assert no_exec_findings(project) == (1, ["FC001"])
    # What a default-mode audit of a hostile checkout leaves behind: its replacement
    # registry's packages, in the directory cargo names after that registry's host.
    _poisoned_flex(home / "registry" / "src" / _evil_directory() / "burn-flex-0.22.1")
    assert no_exec_findings(project) == (1, ["FC001"])
    # Alone (a machine that never built from crates.io), it is not crates.io either.
    shutil.rmtree(home / "registry" / "src" / CRATES_IO_DIR)
    code, findings = no_exec_findings(project)
    assert code == 2 and findings == []  # burn-flex is unread: an incomplete audit


def test_a_planted_archive_directory_is_not_taken_for_crates_io(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A CI cache that kept `registry/cache` of a hostile audit, and an honest `registry/src`
    that lacks burn-flex."""
    home = honest_home(tmp_path / "home")
    (home / "registry" / "src" / CRATES_IO_DIR / "burn-flex-0.22.1").unlink()
    monkeypatch.setenv("CARGO_HOME", str(home))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    flex = tmp_path / "flex" / "burn-flex-0.22.1"
    _poisoned_flex(flex)
    archive = home / "registry" / "cache" / _evil_directory() / "burn-flex-0.22.1.crate"
    archive.parent.mkdir(parents=True)
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:  # files only, as cargo packs them
        for file in sorted(p for p in flex.rglob("*") if p.is_file()):
            tar.add(file, arcname=f"burn-flex-0.22.1/{file.relative_to(flex).as_posix()}")
    archive.write_bytes(buffer.getvalue())
    project = tmp_path / "ws"
    shutil.copytree(CRATES / "pitb-exec-cpu", project, ignore=shutil.ignore_patterns("target"))
    code, findings = no_exec_findings(project)
    assert code == 2 and findings == []  # burn-flex is unread: an incomplete audit


def test_cargo_names_for_registry_sources() -> None:
    """cargo's own test values (sources/registry, core/source_id.rs), and what cargo 1.95
    named on a real machine: `index.crates.io-1949cf8c6b5b557f`, `github.com-25cdd57fae9f0462`
    (crates.io over git), `127.0.0.1-990e06ee1a4fa242` (`sparse+http://127.0.0.1:8765/`)."""
    assert short_hashes(2, "https://my-crates.io/")[1] == "fb60813d6cb8df79"
    assert short_hashes(3, "sparse+https://my-crates.io")[1] == "d1ea0d96f6f759b5"
    assert source_directories("registry+https://github.com/rust-lang/crates.io-index") == {
        "index.crates.io-1949cf8c6b5b557f",
        "index.crates.io-6f17d22bba15001f",
        "github.com-25cdd57fae9f0462",
        "github.com-1ecc6299db9ec823",
    }
    assert "127.0.0.1-990e06ee1a4fa242" in source_directories("sparse+http://127.0.0.1:8765/")
    assert source_directories("git+https://example.com/repo") == frozenset()
