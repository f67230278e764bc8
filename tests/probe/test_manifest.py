"""The probe's generated Cargo.toml (probe/manifest.py)."""

from __future__ import annotations

import textwrap
from pathlib import Path

import tomlkit
from probe_support import CONFIG

from featcheck.probe.manifest import render_cargo_toml
from featcheck.probe.resolve import release_profile


def test_manifest_pins_the_resolved_features_exactly() -> None:
    text = render_cargo_toml(CONFIG, "featcheck-probe-abc", mlp=False)
    document = tomlkit.parse(text).unwrap()
    dependencies = document["dependencies"]
    assert dependencies["burn"] == {
        "version": "=0.22.1",
        "default-features": False,
        "features": ["std", "flex"],
    }
    assert dependencies["burn-flex"] == {
        "version": "=0.22.1",
        "default-features": False,
        "features": ["std"],
    }
    assert dependencies["gemm-common"]["features"] == ["f16", "half", "std", "sysctl"]
    assert set(dependencies) == {"burn", "burn-flex", "gemm", "gemm-common"}
    assert document["target"]["cfg(unix)"]["dependencies"] == {"libc": "0.2"}
    assert document["bin"] == [{"name": "featcheck-probe-abc", "path": "src/main.rs"}]
    assert document["features"] == {"default": [], "mlp": ["burn/autodiff", "burn/optim"]}
    assert document["profile"]["release"] == {
        "debug": False,
        "codegen-units": 1,
        "lto": "fat",
        "opt-level": 3,
    }
    assert document["workspace"] == {}
    assert "/" not in document["package"]["name"]


def test_manifest_with_mlp_turns_the_workload_on() -> None:
    document = tomlkit.parse(render_cargo_toml(CONFIG, "p", mlp=True)).unwrap()
    assert document["features"]["default"] == ["mlp"]


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
