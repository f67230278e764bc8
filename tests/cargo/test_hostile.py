"""Hostile checkouts: by default featcheck runs none of the audited project's programs.

Each case copies the template crate (crates/pitb-exec-cpu: Cargo.toml, Cargo.lock and a stub
main.rs) into a temporary directory and adds one way a repository can make `cargo metadata` or
`cargo tree` run its own code. Every planted program only appends to a marker file and exits
non-zero with garbage on stdout, so a run that used one also fails visibly. Default mode must
write zero markers and still give the right verdict (FC001 on the burn line); a `path`
toolchain is refused with one line naming the toolchain file. With --trust-checkout the same
checkouts do run their programs, which shows that the fixtures are live.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pytest
from actions_support import host_triple
from cli_in_process import run_in_process
from hostile_support import (
    BURN_COLUMN,
    BURN_LINE,
    CC,
    RUSTUP,
    TEMPLATE,
    Checkout,
    SmallBurn,
    make_checkout,
    run_isolated,
)
from support import RegistryViews, run_featcheck, trust_of, write_offline_cargo_home

from featcheck.cargo.process import NEUTRAL_DIRECTORY
from featcheck.cargo.runner import CargoRunner

# --- the attacks ------------------------------------------------------------------------------


def _path_toolchain(checkout: Checkout, file: str = "rust-toolchain.toml") -> None:
    checkout.marker_script("evil-toolchain/bin/cargo")
    checkout.marker_script("evil-toolchain/bin/rustc")
    # rustup 1.29 takes only an absolute path here; a CI checkout's path is easy to know.
    toolchain = json.dumps(str(checkout.root / "evil-toolchain"))
    (checkout.root / file).write_text(f"[toolchain]\npath = {toolchain}\n")


def _legacy_path_toolchain(checkout: Checkout) -> None:
    checkout.marker_script("evil-toolchain/bin/cargo")
    checkout.marker_script("evil-toolchain/bin/rustc")
    (checkout.root / "rust-toolchain").write_text("./evil-toolchain\n")


def _build_key(key: str) -> Callable[[Checkout], None]:
    def plant(checkout: Checkout) -> None:
        script = checkout.marker_script(f"evil/{key}")
        checkout.cargo_config(f'[build]\n{key} = "{script}"\n')

    return plant


def _legacy_config(checkout: Checkout) -> None:
    script = checkout.marker_script("evil/rustc")
    checkout.cargo_config(f'[build]\nrustc = "{script}"\n', name="config")


def _included_config(checkout: Checkout) -> None:
    script = checkout.marker_script("evil/rustc-wrapper")
    checkout.cargo_config('include = ["innocent.toml"]\n')
    checkout.cargo_config(f'[build]\nrustc-wrapper = "{script}"\n', name="innocent.toml")


def _env_ld_preload(checkout: Checkout) -> None:
    checkout.shared_object("evil/planted.so")
    checkout.cargo_config(
        """\
        [env]
        LD_PRELOAD = { value = "evil/planted.so", relative = true, force = true }
        """
    )


def _rustflags_codegen_backend(checkout: Checkout) -> None:
    library = checkout.shared_object("evil/backend.so")
    checkout.cargo_config(
        f"""\
        [build]
        rustflags = ["-Zcodegen-backend={library}", "--cfg", "planted"]
        [env]
        RUSTC_BOOTSTRAP = "1"
        """
    )


def _target_runner(checkout: Checkout) -> None:
    script = checkout.marker_script("evil/runner")
    checkout.cargo_config(f'[target.{host_triple()}]\nrunner = "{script}"\nlinker = "{script}"\n')


def _build_script(checkout: Checkout) -> None:
    log = checkout.markers / "build-rs"
    (checkout.project / "build.rs").write_text(
        f'fn main() {{ std::fs::write({json.dumps(str(log))}, b"build.rs ran").unwrap(); }}\n'
    )


def _proc_macro(checkout: Checkout) -> None:
    log = checkout.markers / "proc-macro"
    macros = checkout.root / "evil-macros"
    (macros / "src").mkdir(parents=True)
    (macros / "Cargo.toml").write_text(
        '[package]\nname = "evil-macros"\nversion = "0.1.0"\nedition = "2021"\n\n'
        "[lib]\nproc-macro = true\n"
    )
    (macros / "src" / "lib.rs").write_text(
        "use proc_macro::TokenStream;\n"
        "#[proc_macro]\n"
        "pub fn planted(_: TokenStream) -> TokenStream {\n"
        f'    std::fs::write({json.dumps(str(log))}, b"proc-macro ran").unwrap();\n'
        "    TokenStream::new()\n"
        "}\n"
    )
    manifest = checkout.project / "Cargo.toml"
    # After the burn line, so the finding stays on line 9.
    manifest.write_text(manifest.read_text() + 'evil-macros = { path = "evil-macros" }\n')
    (checkout.project / "src" / "main.rs").write_text("evil_macros::planted!();\nfn main() {}\n")


def _aliases(checkout: Checkout) -> None:
    tree = checkout.marker_script("evil/tree")
    metadata = checkout.marker_script("evil/metadata")
    checkout.cargo_config(f'[alias]\ntree = "{tree}"\nmetadata = ["{metadata}"]\n')


def _fifo_config(checkout: Checkout) -> None:
    (checkout.root / ".cargo").mkdir()
    os.mkfifo(checkout.root / ".cargo" / "config.toml")


def _fifo_toolchain(checkout: Checkout) -> None:
    os.mkfifo(checkout.root / "rust-toolchain.toml")


@dataclass(frozen=True)
class Attack:
    name: str
    plant: Callable[[Checkout], None]
    refused_with: str | None = None
    """Default mode refuses (exit 2) with a line containing this; None: audits normally."""
    live_under_metadata: bool = False
    """With --trust-checkout, `cargo metadata` itself runs the planted program."""
    nested: bool = False
    """The attack sits in a directory above the audited project."""
    needs_rustup: bool = False
    needs_cc: bool = False


ATTACKS = [
    Attack(
        "path-toolchain",
        _path_toolchain,
        "rust-toolchain.toml:2:",
        live_under_metadata=True,
        needs_rustup=True,
    ),
    Attack(
        "path-toolchain-above-project",
        _path_toolchain,
        "rust-toolchain.toml:2:",
        live_under_metadata=True,
        nested=True,
        needs_rustup=True,
    ),
    Attack(
        "path-toolchain-legacy-file",
        lambda checkout: _path_toolchain(checkout, "rust-toolchain"),
        "rust-toolchain:2:",
        live_under_metadata=True,
        needs_rustup=True,
    ),
    Attack(
        "legacy-channel-that-is-a-path",
        _legacy_path_toolchain,
        "rust-toolchain:1:",
        needs_rustup=True,
    ),
    Attack("build-rustc", _build_key("rustc"), live_under_metadata=True),
    Attack("build-rustc-wrapper", _build_key("rustc-wrapper"), live_under_metadata=True),
    Attack(
        "build-rustc-workspace-wrapper",
        _build_key("rustc-workspace-wrapper"),
        live_under_metadata=True,
    ),
    Attack("legacy-dot-cargo-config", _legacy_config, live_under_metadata=True),
    Attack("included-config", _included_config, live_under_metadata=True),
    Attack("config-above-project", _build_key("rustc"), live_under_metadata=True, nested=True),
    Attack("env-ld-preload", _env_ld_preload, live_under_metadata=True, needs_cc=True),
    Attack(
        "rustflags-codegen-backend",
        _rustflags_codegen_backend,
        live_under_metadata=True,
        needs_cc=True,
    ),
    Attack("target-runner-and-linker", _target_runner),
    Attack("build-script", _build_script),
    Attack("proc-macro-path-dependency", _proc_macro),
    Attack("aliases-for-tree-and-metadata", _aliases),
    Attack("config-is-a-fifo", _fifo_config, "config.toml: is not a regular file"),
    Attack(
        "toolchain-file-is-a-fifo",
        _fifo_toolchain,
        "rust-toolchain.toml: is not a regular file",
        needs_rustup=True,
    ),
]


def _skip_reason(attack: Attack) -> str | None:
    if attack.needs_rustup and not RUSTUP:
        return "cargo is not a rustup proxy here"
    if attack.needs_cc and CC is None:
        return "no C compiler to build the planted shared object"
    return None


@dataclass(frozen=True)
class Outcome:
    checkout: Checkout
    done: subprocess.CompletedProcess[str]
    lock_before: bytes


@pytest.fixture(scope="module")
def outcomes(small_burn: SmallBurn, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Outcome]:
    """Every attack audited in default mode, in parallel (each with its own CARGO_HOME, over
    the synthetic burn)."""
    runnable = [a for a in ATTACKS if _skip_reason(a) is None]

    def audit(attack: Attack) -> Outcome:
        base = tmp_path_factory.mktemp(attack.name)
        checkout = make_checkout(base, nested=attack.nested, template=small_burn.template)
        attack.plant(checkout)
        home = small_burn.home(base / "cargo-home")
        lock = (checkout.project / "Cargo.lock").read_bytes()
        done = run_isolated([str(checkout.project), "--format", "json"], home)
        return Outcome(checkout, done, lock)

    with ThreadPoolExecutor(max_workers=min(8, os.cpu_count() or 1)) as pool:
        return dict(zip((a.name for a in runnable), pool.map(audit, runnable), strict=True))


@pytest.mark.parametrize("attack", ATTACKS, ids=[a.name for a in ATTACKS])
def test_default_mode_runs_nothing_from_the_checkout(
    attack: Attack, outcomes: dict[str, Outcome]
) -> None:
    if (reason := _skip_reason(attack)) is not None:
        pytest.skip(reason)
    outcome = outcomes[attack.name]
    done = outcome.done
    assert outcome.checkout.written() == [], done.stderr
    assert "Traceback" not in done.stderr
    assert (outcome.checkout.project / "Cargo.lock").read_bytes() == outcome.lock_before
    if attack.refused_with is not None:
        assert done.returncode == 2, done.stdout + done.stderr
        lines = done.stderr.splitlines()
        assert len(lines) == 1, done.stderr
        assert lines[0].startswith("featcheck: error: ")
        assert attack.refused_with in lines[0]
        return
    assert done.returncode == 1, done.stderr
    findings = json.loads(done.stdout)["findings"]
    assert [(f["code"], f["location"]["file"], f["location"]["line"]) for f in findings] == [
        ("FC001", "Cargo.toml", BURN_LINE)
    ]
    assert findings[0]["location"]["column"] == BURN_COLUMN


LIVE = [a for a in ATTACKS if a.live_under_metadata]


@pytest.mark.parametrize("attack", LIVE, ids=[a.name for a in LIVE])
def test_trusting_the_checkout_runs_its_programs(
    attack: Attack, tmp_path: Path, offline_cargo_for: Callable[..., Path]
) -> None:
    """The fixtures are live: with --trust-checkout cargo runs what the checkout planted."""
    if (reason := _skip_reason(attack)) is not None:
        pytest.skip(reason)
    checkout = make_checkout(tmp_path, nested=attack.nested)
    # Every cargo call asks rustc again here: a kept answer would run no planted program.
    offline_cargo_for(checkout.project, cached_rustc=False)
    attack.plant(checkout)
    # In this process: what is tested is what the cargo featcheck starts runs.
    done = run_in_process(str(checkout.project), "--trust-checkout", "--format", "json")
    assert checkout.written() != [], done.stderr
    assert "Traceback" not in done.stderr


def test_a_channel_is_honoured_and_pinned(
    tmp_path: Path, offline_cargo_for: Callable[..., Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A channel in rust-toolchain.toml is used in both modes; by default featcheck runs that
    toolchain's own binaries and pins RUSTUP_TOOLCHAIN to it."""
    if not RUSTUP:
        pytest.skip("cargo is not a rustup proxy here")
    installed = subprocess.run(
        ["rustup", "which", "rustc", "--toolchain", "nightly"],
        capture_output=True,
        text=True,
        check=False,
        cwd=tmp_path,
    )
    if installed.returncode != 0:
        pytest.skip("the nightly toolchain is not installed")
    checkout = make_checkout(tmp_path)
    offline_cargo_for(checkout.project, cached_rustc=False)
    (checkout.root / "rust-toolchain.toml").write_text('[toolchain]\nchannel = "nightly"\n')
    monkeypatch.delenv("RUSTUP_TOOLCHAIN", raising=False)
    runner = CargoRunner(checkout.project, trust=trust_of(checkout.project))
    toolchain = runner.toolchain
    assert toolchain is not None
    assert toolchain.rustc == Path(installed.stdout.strip())
    assert toolchain.cargo.parent == toolchain.rustc.parent
    environment = dict(runner.prepared_setup().environment)
    assert environment["RUSTUP_TOOLCHAIN"] == "nightly"
    assert environment["RUSTC"] == environment["CARGO_BUILD_RUSTC"] == str(toolchain.rustc)
    for name in WRAPPER_VARIABLES:
        assert name not in environment
    for trust in ((), ("--trust-checkout",)):
        done = run_in_process(str(checkout.project), "--format", "json", *trust)
        assert done.returncode == 1, done.stderr
    assert checkout.written() == []


WRAPPER_VARIABLES = (
    "RUSTC_WRAPPER",
    "RUSTC_WORKSPACE_WRAPPER",
    "CARGO_BUILD_RUSTC_WRAPPER",
    "CARGO_BUILD_RUSTC_WORKSPACE_WRAPPER",
)


def test_the_users_rustc_wrapper_is_run_by_no_cargo_of_featcheck(
    tmp_path: Path, registry_views: RegistryViews, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A wrapper in the user's environment is left out of cargo's; one in CARGO_HOME's
    configuration is disabled with empty settings (only then: cargo keeps no rustc answer
    when a wrapper setting is empty). Neither runs; with --trust-checkout both would."""
    checkout = make_checkout(tmp_path)
    home = write_offline_cargo_home(tmp_path / "cargo-home", registry_views.registry(TEMPLATE))
    monkeypatch.setenv("CARGO_HOME", str(home))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    in_environment = checkout.root / checkout.marker_script("bin/environment-wrapper")
    monkeypatch.setenv("RUSTC_WRAPPER", str(in_environment))
    environment = dict(
        CargoRunner(checkout.project, trust=trust_of(checkout.project)).prepared_setup().environment
    )
    assert [name for name in WRAPPER_VARIABLES if name in environment] == []
    done = run_isolated([str(checkout.project), "--format", "json"], home)
    assert done.returncode == 1, done.stderr
    assert checkout.written() == []

    in_configuration = checkout.root / checkout.marker_script("bin/configured-wrapper")
    with (home / "config.toml").open("a") as config:
        config.write(f"[build]\nrustc-wrapper = {json.dumps(str(in_configuration))}\n")
    monkeypatch.delenv("RUSTC_WRAPPER")
    environment = dict(
        CargoRunner(checkout.project, trust=trust_of(checkout.project)).prepared_setup().environment
    )
    assert [environment.get(name) for name in WRAPPER_VARIABLES] == [""] * 4
    done = run_isolated([str(checkout.project), "--format", "json"], home)
    assert done.returncode == 1, done.stderr
    assert checkout.written() == []

    # The fixtures are live: plain cargo runs the configured wrapper.
    run_isolated([str(checkout.project), "--trust-checkout", "--format", "json"], home)
    assert checkout.written() == ["configured-wrapper"]


def test_cargo_keeps_what_rustc_answered_in_featchecks_cache(
    tmp_path: Path, offline_cargo_for: Callable[..., Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """In a project without target/, cargo has nowhere to keep `rustc -vV` and `--print cfg`:
    featcheck gives it a directory in its own cache, so that the second cargo call runs no
    rustc (an empty wrapper setting in the user's environment, which would stop cargo from
    keeping anything, is left out). The project gets no target/."""
    checkout = make_checkout(tmp_path)
    offline_cargo_for(checkout.project, cached_rustc=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setenv("RUSTC_WRAPPER", "")
    runner = CargoRunner(checkout.project, trust=trust_of(checkout.project))
    toolchain = runner.toolchain
    assert toolchain is not None
    environment = {**runner.prepared_setup().environment, "CARGO_LOG": "cargo::util::rustc=debug"}

    def rustc_log() -> str:
        done = subprocess.run(
            [
                str(toolchain.cargo),
                "metadata",
                "--format-version=1",
                f"--manifest-path={checkout.project / 'Cargo.toml'}",
            ],
            cwd=NEUTRAL_DIRECTORY,  # where featcheck runs cargo
            env=environment,
            capture_output=True,
            text=True,
            check=True,
        )
        return done.stderr

    first, second = rustc_log(), rustc_log()
    assert "running `" in first
    assert "rustc info cache hit" in second
    assert "running `" not in second
    assert not (checkout.project / "target").exists()
    kept = list((tmp_path / "cache" / "featcheck" / "cargo").glob("*/.rustc_info.json"))
    assert len(kept) == 1


def test_rustup_toolchain_in_the_environment_beats_the_file(
    tmp_path: Path, offline_cargo_for: Callable[..., Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """As for rustup: the user's RUSTUP_TOOLCHAIN wins, so the path toolchain is never used."""
    if not RUSTUP:
        pytest.skip("cargo is not a rustup proxy here")
    checkout = make_checkout(tmp_path)
    offline_cargo_for(checkout.project, cached_rustc=False)
    _path_toolchain(checkout)
    monkeypatch.setenv("RUSTUP_TOOLCHAIN", "stable")
    done = run_featcheck(str(checkout.project), "--format", "json")
    assert done.returncode == 1, done.stderr
    assert checkout.written() == []


def test_without_rustup_the_cargo_on_path_is_used(
    tmp_path: Path, offline_cargo_for: Callable[..., Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A cargo on PATH that is not a rustup proxy is run as is, with the rustc beside it;
    no proxy would read a toolchain file, so a `path` toolchain is no reason to refuse."""
    real_cargo = CargoRunner(tmp_path, trust=trust_of(tmp_path)).toolchain
    assert real_cargo is not None
    bin_dir = tmp_path / "plain-bin"
    bin_dir.mkdir()
    (bin_dir / "cargo").symlink_to(real_cargo.cargo)
    (bin_dir / "rustc").symlink_to(real_cargo.rustc)
    monkeypatch.setenv("PATH", os.pathsep.join([str(bin_dir), os.environ.get("PATH", "")]))
    monkeypatch.delenv("RUSTUP_TOOLCHAIN", raising=False)
    checkout = make_checkout(tmp_path / "checkout")
    offline_cargo_for(checkout.project, cached_rustc=False)
    _path_toolchain(checkout)
    _build_key("rustc")(checkout)
    toolchain = CargoRunner(checkout.project, trust=trust_of(checkout.project)).toolchain
    assert toolchain is not None
    assert (toolchain.cargo, toolchain.rustc, toolchain.rustup_name) == (
        bin_dir / "cargo",
        bin_dir / "rustc",
        None,
    )
    done = run_featcheck(str(checkout.project), "--format", "json")
    assert done.returncode == 1, done.stderr
    assert checkout.written() == []


# --- what the configuration allow-list keeps -------------------------------------------------


def test_refusal_does_not_depend_on_file_permissions(
    tmp_path: Path, offline_cargo_for: Callable[..., Path]
) -> None:
    """A toolchain file that cannot be read is an error, never a silent fallback."""
    if not RUSTUP:
        pytest.skip("cargo is not a rustup proxy here")
    checkout = make_checkout(tmp_path)
    offline_cargo_for(checkout.project, cached_rustc=False)
    _path_toolchain(checkout)
    toolchain = checkout.root / "rust-toolchain.toml"
    toolchain.chmod(0)
    try:
        if os.access(toolchain, os.R_OK):
            pytest.skip("running as a user who can read anything (root)")
        done = run_featcheck(str(checkout.project))
    finally:
        toolchain.chmod(stat.S_IRUSR | stat.S_IWUSR)
    assert done.returncode == 2
    assert checkout.written() == []
    assert "rust-toolchain.toml" in done.stderr
