"""The rule probes' programs (probe/programs.py) and the crate written for them
(probe/cache.py), offline and without compiling: which program times which finding,
the probe manifest's own features for a program that tests the crate's features with `cfg`
(gemm's `rayon`), and the other crates a program calls pinned from the member's graph
(burn-ndarray's through burn-backend)."""

from __future__ import annotations

import fnmatch
import re
from pathlib import Path

import pytest
import tomlkit
from actions_support import make_finding
from support import REPO, trust_of

from featcheck.cargo.tree_text import parse_tree_text
from featcheck.errors import FeatcheckError
from featcheck.probe.cache import attach, render_manifest
from featcheck.probe.programs import PROGRAMS, Program, program_for, program_timing
from featcheck.probe.resolve import BackendConfig, Pin, enabling_features, pins_for
from featcheck.report import AuditResult, Cost
from featcheck.workspace.model import parse_feature_value

TARGET = "x86_64-unknown-linux-gnu"


def _gemm(features: tuple[str, ...]) -> BackendConfig:
    return BackendConfig("app", TARGET, "", (Pin("gemm", "0.19.0", features),))


def _manifest(config: BackendConfig) -> dict[str, object]:
    program = program_for(config.backend.name, config.backend.version)
    assert program is not None
    document: dict[str, object] = tomlkit.parse(render_manifest(config, program, "b")).unwrap()
    return document


def test_fc008_and_fc002_crates_have_wall_timed_programs() -> None:
    gemm = program_for("gemm", "0.19.0")
    assert gemm is not None and gemm.wall and gemm.cfg_features == ("rayon",)
    ndarray = program_for("burn-ndarray", "0.22.1")
    assert ndarray is not None and ndarray.wall and ndarray.uses == ("burn-backend",)
    assert program_for("burn_ndarray", "0.20.1") is ndarray  # the name as cargo tree may write it
    # Before 0.20 burn-ndarray implements burn-tensor's traits, not burn-backend's: no program.
    assert program_for("burn-ndarray", "0.19.1") is None
    assert program_for("burn-ndarray", "0.23.0-pre.1") is ndarray
    assert ndarray.describe() == "burn-ndarray >=0.20.0-0" and gemm.describe() == "gemm"


def test_the_gemm_probe_has_rayon_exactly_when_gemm_has_it() -> None:
    with_rayon = _manifest(_gemm(("rayon", "std")))
    assert with_rayon["features"] == {"default": ["rayon"], "rayon": []}
    assert with_rayon["dependencies"] == {
        "gemm": {"version": "=0.19.0", "default-features": False, "features": ["rayon", "std"]}
    }
    without = _manifest(_gemm(("std",)))
    assert without["features"] == {"default": [], "rayon": []}
    assert without["dependencies"] == {
        "gemm": {"version": "=0.19.0", "default-features": False, "features": ["std"]}
    }


def test_a_program_without_cfg_features_has_no_features_table() -> None:
    config = BackendConfig("app", TARGET, "", (Pin("memchr", "2.8.3", ("std",)),))
    assert "features" not in _manifest(config)


def test_every_cfg_feature_is_tested_in_its_program() -> None:
    for program in PROGRAMS.values():
        source = program.sources()["src/main.rs"].decode()
        tested = set(re.findall(r'feature = "([^"]+)"', source))
        assert tested == set(program.cfg_features), program.file


def test_the_ndarray_probe_pins_burn_backend_as_the_member_builds_it() -> None:
    tree = (
        "0app v0.1.0 (/w) []\n"
        "1burn-ndarray v0.22.1 [multi-threads,rayon]\n"
        "2burn-backend v0.22.1 []\n"
        "3burn-std v0.22.1 []\n"
        "2matrixmultiply v0.3.11 [cgemm,std,threading]\n"
        "1burn-backend v0.22.1 []\n"
    )
    graph = parse_tree_text(tree).graph
    assert pins_for(graph, "burn-ndarray", "0.22.1") == (
        Pin("burn-ndarray", "0.22.1", ("multi-threads", "rayon")),
        Pin("burn-backend", "0.22.1", ()),
    )
    config = BackendConfig("app", TARGET, "", pins_for(graph, "burn-ndarray", "0.22.1"))
    manifest = _manifest(config)
    assert "features" not in manifest
    assert manifest["dependencies"] == {
        "burn-ndarray": {
            "version": "=0.22.1",
            "default-features": False,
            "features": ["multi-threads", "rayon"],
        },
        "burn-backend": {"version": "=0.22.1", "default-features": False, "features": []},
    }
    # burn-std and matrixmultiply are not pinned: cargo resolves them from the member's lockfile
    # and the verification (cargo tree) checks the pinned crates' features.


def test_a_program_whose_companion_is_missing_says_so() -> None:
    graph = parse_tree_text("0app v0.1.0 (/w) []\n1burn-ndarray v0.22.1 []\n").graph
    with pytest.raises(FeatcheckError, match="calls burn-backend, which it does not depend on"):
        pins_for(graph, "burn-ndarray", "0.22.1")


def test_a_program_without_companions_pins_its_crate_alone() -> None:
    graph = parse_tree_text("0app v0.1.0 (/w) []\n1gemm v0.19.0 [std]\n2gemm-common v0.19.0 []\n")
    assert pins_for(graph.graph, "gemm", "0.19.0") == (Pin("gemm", "0.19.0", ("std",)),)


def test_each_program_has_its_own_file() -> None:
    files = [program.file for program in PROGRAMS.values()]
    assert len(set(files)) == len(files)
    assert all(isinstance(program, Program) for program in PROGRAMS.values())


def test_a_hint_about_a_crate_itself_is_neither_probed_nor_priced(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """FC024 says burn-ndarray has a successor: no build of the program lacks burn-ndarray, so
    `--measured` gives it no cost line, while FC002 on the same crate gets one."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    hint = make_finding(
        code="FC024", rule="ndarray-successor-flex", crate="burn-ndarray", feature=""
    )
    threads = make_finding(
        code="FC002",
        rule="ndarray-without-threading",
        crate="burn-ndarray",
        feature="multi-threads",
    )
    project = tmp_path / "project"
    project.mkdir()
    result = AuditResult(project, findings=[hint, threads], members=["app"])
    priced = attach(result, trust_of(project))
    assert [f.cost for f in priced.findings] == [
        None,
        Cost(False, "featcheck probe --rule FC002"),
    ]
    assert program_timing("burn-ndarray", "0.22.1", "") is None
    assert program_timing("burn-ndarray", "0.22.1", "multi-threads") is not None


def test_the_zune_jpeg_probe_ships_the_jpeg_its_program_embeds() -> None:
    program = program_for("zune-jpeg", "0.5.15")
    assert program is not None and program.data == "photo.jpg"
    sources = program.sources()
    assert set(sources) == {"src/main.rs", "src/harness.rs", "src/photo.jpg"}
    assert sources["src/photo.jpg"].startswith(b"\xff\xd8\xff")  # a JPEG's first marker
    # 0.4 takes its input by another trait: the program is 0.5's.
    assert program_for("zune-jpeg", "0.4.21") is None


def test_every_embedded_file_ships_beside_its_program_and_in_the_wheel() -> None:
    pyproject = tomlkit.parse((REPO / "pyproject.toml").read_text()).unwrap()
    patterns = pyproject["tool"]["setuptools"]["package-data"]["featcheck.probe"]
    for program in PROGRAMS.values():
        sources = program.sources()
        embedded = re.findall(r'include_bytes!\("([^"]+)"\)', sources["src/main.rs"].decode())
        assert all(f"src/{name}" in sources for name in embedded), program.file
        if program.data is not None:
            assert embedded, program.file
            shipped = f"rules/programs/{program.data}"
            assert any(fnmatch.fnmatch(shipped, pattern) for pattern in patterns), shipped


def test_turning_a_costly_feature_off_drops_every_feature_that_turns_it_back_on() -> None:
    # lz4_flex 0.14's table: its defaults include `safe-decode`, the feature FC036 is about.
    # A probe build that kept `default` would get `safe-decode` back, and the probe would
    # refuse to time it (it cannot reproduce the build it was asked for).
    table = {
        name: tuple(parse_feature_value(v) for v in values)
        for name, values in {
            "default": ["safe-encode", "safe-decode", "frame", "std", "checked-decode"],
            "safe-decode": [],
            "safe-encode": [],
            "frame": ["std", "dep:twox-hash"],
            "std": ["alloc"],
            "alloc": [],
            "checked-decode": [],
            "strict": ["safe-decode"],
            "everything": ["strict"],
        }.items()
    }
    assert enabling_features(table, "safe-decode") == {
        "safe-decode",
        "default",
        "strict",
        "everything",
    }
    assert enabling_features(table, "frame") == {"frame", "default"}
