"""The probe's generated Cargo.toml (probe/cache.py)."""

from __future__ import annotations

import textwrap
from pathlib import Path

import tomlkit
from probe_support import CONFIG

from featcheck.probe.cache import render_manifest
from featcheck.probe.programs import MATMUL, PROGRAMS
from featcheck.probe.resolve import release_profile


def test_the_matmul_builds_on_burn_flex_alone_with_the_resolved_features() -> None:
    """No burn facade (nor its autodiff, nn, optim): burn-flex, the gemm crates and
    burn-backend, each pinned with exactly the member's features."""
    text = render_manifest(CONFIG, MATMUL, "featcheck-probe-abc")
    document = tomlkit.parse(text).unwrap()
    dependencies = document["dependencies"]
    assert dependencies["burn-flex"] == {
        "version": "=0.22.1",
        "default-features": False,
        "features": ["std"],
    }
    assert dependencies["gemm-common"]["features"] == ["f16", "half", "std", "sysctl"]
    assert dependencies["burn-backend"]["features"] == ["std"]
    assert set(dependencies) == {"burn-flex", "gemm", "gemm-common", "burn-backend"}
    assert "target" not in document and "features" not in document
    assert document["bin"] == [{"name": "featcheck-probe-abc", "path": "src/main.rs"}]
    release = document["profile"]["release"]
    assert {key: value for key, value in release.items() if key != "package"} == {
        "debug": False,
        "codegen-units": 1,
        "lto": "fat",
        "opt-level": 3,
    }
    assert document["workspace"] == {}
    assert "/" not in document["package"]["name"]


def test_the_matmuls_cold_and_thin_crates_alone_are_built_unoptimised() -> None:
    """What no timed code runs (cubecl's backtraces, configuration file, serialization) and
    what it only passes through (burn-flex, which hands the matmul to gemm, and burn-std's
    shapes) are compiled at opt-level 0; the kernels (the gemm crates) and every crate they
    call keep the member's profile."""
    document = tomlkit.parse(render_manifest(CONFIG, MATMUL, "b")).unwrap()
    overrides = document["profile"]["release"].pop("package")
    assert overrides["backtrace"] == overrides["toml"] == {"opt-level": 0, "codegen-units": 256}
    assert overrides["burn-flex"] == overrides["burn-std"] == {"opt-level": 0, "codegen-units": 256}
    assert set(overrides) == {*MATMUL.cold, "burn-flex", "burn-std"}
    kernels = {"burn-backend", "cubecl-common", "pulp", "half"}
    assert not kernels & set(overrides)
    assert not {name for name in overrides if name.startswith("gemm")}
    rule = tomlkit.parse(render_manifest(CONFIG, PROGRAMS["memchr"], "b")).unwrap()
    assert "package" not in rule["profile"]["release"]


def test_release_profile_keeps_only_speed_settings(tmp_path: Path) -> None:
    manifest = tmp_path / "Cargo.toml"
    manifest.write_text(
        textwrap.dedent(
            """\
            [package]
            name = "x"
            [profile.release]
            opt-level = 3
            lto = "thin"
            codegen-units = 1
            panic = "abort"
            debug = true
            strip = true
            rustflags = ["-Zevil"]
            incremental = true
            overflow-checks = "yes"
            [profile.release.build-override]
            opt-level = 0
            """
        )
    )
    assert release_profile(manifest) == {
        "opt-level": 3,
        "lto": "thin",
        "codegen-units": 1,
        "panic": "abort",
    }
    (tmp_path / "broken.toml").write_text("[profile")
    assert release_profile(tmp_path / "broken.toml") == {}
