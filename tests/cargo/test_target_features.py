"""`-C target-feature` in the checkout's rustflags, as popular projects write it.

ripgrep, fd and bat link the C runtime statically on Windows MSVC (and ripgrep on musl) with
`-C target-feature=+crt-static` in `[target.<triple>] rustflags` of `.cargo/config.toml`
(fixtures/cargo-configs/ holds their files as they are upstream). A project carrying such a
file audits as the same project without it, in default mode and with --no-exec; where the
flag does decide a `cfg(target_feature = "crt-static")` table, both modes decide it as rustc
does.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from cli_in_process import run_in_process
from stub_registry import lock_packages
from support import CRATES, FIXTURES

from featcheck.cargo.argv_gate import TARGET_FEATURES, GateError
from featcheck.noexec.source import detect_host_triple

pytestmark = pytest.mark.usefixtures("remembered_cargo")
"""featcheck runs in this process; `cargo metadata` of one project is asked once for all its
targets (tests/cargo_memo.py). What decides the cfg tables, `rustc --print cfg` with the
checkout's target features, is rustc's own answer in every run."""

CONFIGS = FIXTURES / "cargo-configs"
WINDOWS = "x86_64-pc-windows-msvc"


def _project(tmp_path: Path, config: str | None) -> Path:
    """The minimal template (FC001: burn-flex without rayon) with `config` as its
    `.cargo/config.toml`."""
    project = tmp_path / "project"
    shutil.copytree(CRATES / "pitb-exec-cpu", project, ignore=shutil.ignore_patterns("target"))
    if config is not None:
        (project / ".cargo").mkdir()
        (project / ".cargo" / "config.toml").write_text(config)
    return project


@pytest.fixture(scope="module")
def no_exec_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A CARGO_HOME whose unpacked registry holds the stubs of the template's lockfile (every
    project here is the template with another `.cargo/config.toml`: the same lockfile). One
    for the module: featcheck reads each registry manifest once and keeps it, by path and
    stamp, in its user cache for the audits after."""
    home = tmp_path_factory.mktemp("noexec-home")
    source = home / "registry" / "src" / "index.crates.io-1949cf8c6b5b557f"
    source.mkdir(parents=True)
    for package in lock_packages(CRATES / "pitb-exec-cpu"):
        (source / package).symlink_to(FIXTURES / "registry" / package, target_is_directory=True)
    return home


def _codes(
    project: Path, targets: list[str], *args: str, cargo_home: Path, monkeypatch: pytest.MonkeyPatch
) -> tuple[int, dict[str, list[str]]]:
    """featcheck's exit code and each target's finding codes (JSON), its command line run in
    this process once for all `targets` (a finding names its target: each target's verdict is
    its own, as in a run for that target alone)."""
    monkeypatch.setenv("CARGO_HOME", str(cargo_home))
    chosen = [argument for target in targets for argument in ("--target", target)]
    done = run_in_process(str(project), "--format", "json", *chosen, *args)
    assert done.returncode in (0, 1), done.stdout + done.stderr
    report = json.loads(done.stdout)
    assert report["targets"] == targets
    by_target: dict[str, list[str]] = {target: [] for target in targets}
    for finding in report["findings"]:
        by_target[finding["target"]].append(finding["code"])
    return done.returncode, by_target


@pytest.mark.parametrize("name", ["ripgrep", "fd", "bat"])
def test_popular_projects_configuration_audits_in_every_mode(
    name: str,
    tmp_path: Path,
    offline_cargo_for: Callable[..., Path],
    no_exec_home: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The host, and Windows MSVC, whose table carries `+crt-static`: the same finding as
    without the file, in default mode, with --no-exec and with --no-exec --trust-checkout."""
    project = _project(tmp_path, (CONFIGS / f"{name}.toml").read_text())
    home = offline_cargo_for(project)
    targets = list(dict.fromkeys([detect_host_triple(), WINDOWS]))
    for mode, cargo_home in (
        ((), home),
        (("--no-exec",), no_exec_home),
        (("--no-exec", "--trust-checkout"), no_exec_home),
    ):
        seen = _codes(project, targets, *mode, cargo_home=cargo_home, monkeypatch=monkeypatch)
        assert seen == (1, {target: ["FC001"] for target in targets}), mode


@pytest.mark.parametrize(
    ("features", "codes"),
    [
        ("+crt-static", ["FC003"]),
        ("-crt-static", ["FC001"]),
        # rustc: any `+crt-static` wins, whatever its order (not the last word, as for others).
        ("+crt-static,-crt-static", ["FC003"]),
        ("-crt-static,+crt-static", ["FC003"]),
        # rustc warns about a name without `+`/`-` and ignores it; empty items are skipped.
        ("crt-static", ["FC001"]),
        ("+avx2,,+crt-static,", ["FC003"]),
    ],
)
def test_crt_static_decides_cfg_tables_as_rustc_does(
    features: str,
    codes: list[str],
    tmp_path: Path,
    offline_cargo_for: Callable[..., Path],
    no_exec_home: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """burn gets `rayon` only where `cfg(target_feature = "crt-static")` holds: default mode
    (rustc's own `--print cfg`) and --no-exec agree on the host and on Windows MSVC; on macOS,
    which ignores crt-static, neither turns it on."""
    table = "\n".join(
        f'[target.{target}]\nrustflags = ["-C", "target-feature={features}"]'
        for target in (detect_host_triple(), WINDOWS, "aarch64-apple-darwin")
    )
    project = _project(tmp_path, table + "\n")
    manifest = project / "Cargo.toml"
    manifest.write_text(
        manifest.read_text()
        + "\n[target.'cfg(target_feature = \"crt-static\")'.dependencies]\n"
        + 'burn = { version = "=0.22.1", default-features = false, features = ["rayon"] }\n'
    )
    home = offline_cargo_for(project)
    expected = {detect_host_triple(): codes, WINDOWS: codes, "aarch64-apple-darwin": ["FC001"]}
    for mode, cargo_home in (((), home), (("--no-exec",), no_exec_home)):
        seen = _codes(
            project, list(expected), *mode, cargo_home=cargo_home, monkeypatch=monkeypatch
        )
        assert seen == (1, expected), mode


@pytest.mark.parametrize(
    "value",
    ["+crt-static", "-crt-static", "+soft-float", "+sse4.1,-v8.1a", "+avx2,+fma", "+a_b", ""],
)
def test_target_feature_names_as_rustc_documents_them(value: str) -> None:
    assert TARGET_FEATURES.check(value) == value


@pytest.mark.parametrize("value", ["@x", "+@x", "+a b", "+avx2;x", "++a", "+=x", "+a\n", "+-x"])
def test_target_features_that_are_no_names_are_refused(value: str) -> None:
    with pytest.raises(GateError):
        TARGET_FEATURES.check(value)
