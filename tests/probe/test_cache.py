"""The probe's cache: its place, its key, the crate shipped inside the package (probe/cache.py)."""

from __future__ import annotations

import fnmatch
import re
import shutil
from dataclasses import replace
from pathlib import Path

import pytest
import tomlkit
from probe_support import CONFIG
from support import CRATES, REPO, run_featcheck, trust_of

from featcheck.probe.cache import cache_key, cache_root
from featcheck.probe.compile import Toolset
from featcheck.probe.programs import MATMUL, PROGRAMS, PROGRAMS_DIR
from featcheck.probe.resolve import Pin


def test_the_matmul_program_keeps_the_published_protocol() -> None:
    sources = MATMUL.sources()
    source = sources["src/main.rs"].decode()
    assert "const DEFAULT_RUNS: usize = 20;" in source
    assert "mod threads;" in source and "threads::snapshot()" in source
    assert "use burn::" not in source  # burn-flex's and burn-backend's API, not burn's
    assert "src/threads.rs" in sources


def test_cache_root_follows_xdg(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    project = CRATES / "pitb-exec-cpu"
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert cache_root(trust_of(project)) == tmp_path / "featcheck" / "probe"
    monkeypatch.setenv("XDG_CACHE_HOME", "relative/ignored")
    assert cache_root(trust_of(project)) == Path.home() / ".cache" / "featcheck" / "probe"


def test_cache_root_is_the_one_the_trust_context_placed(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The directory the entry point judged outside the checkout, not the environment's again."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "judged"))
    trust = trust_of(CRATES / "pitb-exec-cpu")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "later"))
    assert cache_root(trust) == tmp_path / "judged" / "featcheck" / "probe"


def test_a_cache_inside_the_checkout_is_refused_with_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A planted "probe built before" in a cache that lies in the checkout is never run."""
    project = tmp_path / "project"
    shutil.copytree(CRATES / "pitb-exec-cpu", project)
    (project / ".cache" / "featcheck" / "probe").mkdir(parents=True)
    monkeypatch.setenv("XDG_CACHE_HOME", str(project / ".cache"))
    result = run_featcheck("probe", str(project), "--yes")
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1
    assert "cache directory lies inside the audited checkout" in lines[0]


def test_cache_key_covers_what_shapes_the_binary(tmp_path: Path) -> None:
    version = "rustc 1.95.0\nhost: x86_64-unknown-linux-gnu\n"
    toolset = Toolset("cargo", {}, version)
    key = cache_key(CONFIG, MATMUL, toolset)
    assert key == cache_key(CONFIG, MATMUL, toolset)
    assert re.fullmatch(r"[0-9a-f]{16}", key)
    others = [
        cache_key(CONFIG, PROGRAMS["gemm"], toolset),
        cache_key(replace(CONFIG, lockfile=b"# other lock\n"), MATMUL, toolset),
        cache_key(
            replace(CONFIG, pins=(Pin("burn-flex", "0.22.1", ("rayon", "std")),)),
            MATMUL,
            toolset,
        ),
        cache_key(replace(CONFIG, profile={}), MATMUL, toolset),
        cache_key(CONFIG, MATMUL, replace(toolset, rustc_version="rustc 1.96.0\n")),
        cache_key(
            CONFIG, MATMUL, replace(toolset, environment={"RUSTFLAGS": "-Ctarget-cpu=native"})
        ),
    ]
    assert key not in others and len(set(others)) == len(others)


def test_the_programs_ship_inside_the_package() -> None:
    """Every file of the probes' programs matches pyproject's package-data, so the wheel has
    it."""
    pyproject = tomlkit.parse((REPO / "pyproject.toml").read_text()).unwrap()
    patterns = pyproject["tool"]["setuptools"]["package-data"]["featcheck.probe"]
    package = PROGRAMS_DIR.parent.parent
    files = [p.relative_to(package).as_posix() for p in PROGRAMS_DIR.rglob("*") if p.is_file()]
    assert {"rules/programs/burn_flex.rs", "rules/programs/threads.rs"} <= set(files)
    for name in files:
        assert any(fnmatch.fnmatch(name, pattern) for pattern in patterns), name
