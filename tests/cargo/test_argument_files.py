"""rustc argument files: no checkout value reaches a command line unchecked.

rustc expands any argument `@FILE` into the arguments written in FILE. A checkout value that
reached rustc as `--target @FILE` or `--cfg @FILE` (from featcheck.toml, the manifests'
featcheck tables, `.cargo/config.toml` rustflags, a toolchain file, or `--target` on the
command line) would let the checkout add `--print=cfg=PATH` (rustc writes PATH: any file) or,
on nightly, `-Zcodegen-backend=LIB` (rustc loads LIB). Each vector below is planted with an
argument file that makes rustc write a marker; featcheck must refuse it with one line naming
the file and line (exit 2) and leave no marker, in default mode and with --no-exec. Under
--trust-checkout, where cargo reads the checkout's configuration itself, the rustflags vectors
do write the marker: the fixtures are live. For the featcheck-only vectors (targets), plain
rustc shows the attack.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
from actions_support import host_triple
from cargo_tree_oracle import run_in_process_resolved_by
from cli_in_process import run_in_process
from hostile_support import (
    CC,
    RUSTUP,
    TEMPLATE,
    Checkout,
    SmallBurn,
    in_process_with,
    make_checkout,
    run_isolated,
)
from support import RegistryViews, elsewhere, trust_of, write_offline_cargo_home

from featcheck.cargo.argv_gate import (
    CFG,
    PACKAGE_SPEC,
    TARGET,
    TOOLCHAIN,
    GateError,
    Grammar,
    option,
    target_triple,
    word,
)
from featcheck.cargo.process import start_process
from featcheck.cargo.runner import CargoRunner
from featcheck.errors import FeatcheckError

TEMPLATE_LINES = len((TEMPLATE / "Cargo.toml").read_text().splitlines())


@dataclass(frozen=True)
class ArgumentFiles:
    """Argument files in the checkout that make rustc write `markers/print-cfg`."""

    target: Path
    """First line a target triple, then `--print=cfg=MARKER` (for `--target @FILE`)."""
    cfg: Path
    """First line a cfg name, then `--print=cfg=MARKER` (for `--cfg @FILE`)."""
    bare: Path
    """Only `--print=cfg=MARKER` (an argument file standing alone)."""


def plant_argument_files(checkout: Checkout) -> ArgumentFiles:
    directory = checkout.root / "evil"
    directory.mkdir(exist_ok=True)
    marker = f"--print=cfg={checkout.markers / 'print-cfg'}\n"
    files = ArgumentFiles(
        directory / "target.args", directory / "cfg.args", directory / "bare.args"
    )
    files.target.write_text(f"{host_triple()}\n{marker}")
    files.cfg.write_text(f"planted\n{marker}")
    files.bare.write_text(marker)
    return files


Plant = Callable[[Checkout, ArgumentFiles], list[str]]
"""Plants one vector; returns extra command-line arguments for featcheck."""


@dataclass(frozen=True)
class Vector:
    name: str
    plant: Plant
    refused_with: str
    """The one error line contains this (the file and line, or the option)."""
    trusted: str = "refused"
    """With --trust-checkout: "refused" as by default, "live" (cargo itself runs the attack:
    the marker is written), or "inert" (plain cargo passes it as one harmless argument)."""
    needs_rustup: bool = False


def _featcheck_toml(value: str) -> Plant:
    def plant(checkout: Checkout, files: ArgumentFiles) -> list[str]:
        text = value.format(target=files.target)
        (checkout.project / "featcheck.toml").write_text(f'targets = ["{text}"]\n')
        return []

    return plant


def _metadata_table(table: str) -> Plant:
    def plant(checkout: Checkout, files: ArgumentFiles) -> list[str]:
        manifest = checkout.project / "Cargo.toml"
        extra = "\n[workspace]\n" if table == "workspace" else "\n"
        manifest.write_text(
            manifest.read_text()
            + f'{extra}\n[{table}.metadata.featcheck]\ntargets = ["@{files.target}"]\n'
        )
        return []

    return plant


def _cli_target(value: str) -> Plant:
    def plant(checkout: Checkout, files: ArgumentFiles) -> list[str]:
        return [f"--target={value.format(target=files.target)}"]

    return plant


def _rustflags(text: str, name: str = "config.toml") -> Plant:
    def plant(checkout: Checkout, files: ArgumentFiles) -> list[str]:
        config = text.format(cfg=files.cfg, bare=files.bare, host=host_triple())
        if name != "config.toml":
            checkout.cargo_config(f'include = ["{name}"]\n')
        checkout.cargo_config(config, name=name)
        return []

    return plant


def _toolchain_channel(value: str) -> Plant:
    def plant(checkout: Checkout, files: ArgumentFiles) -> list[str]:
        channel = value.format(target=files.target)
        (checkout.root / "rust-toolchain.toml").write_text(f'[toolchain]\nchannel = "{channel}"\n')
        return []

    return plant


VECTORS = [
    Vector("featcheck-toml-targets", _featcheck_toml("@{target}"), "featcheck.toml:1:"),
    Vector(
        "featcheck-toml-target-is-an-option",
        _featcheck_toml("--print=cfg={target}"),
        "featcheck.toml:1:",
    ),
    Vector(
        "featcheck-toml-target-is-a-codegen-flag",
        _featcheck_toml("-Zcodegen-backend={target}"),
        "featcheck.toml:1:",
    ),
    Vector(
        "featcheck-toml-json-spec-outside-the-project",
        _featcheck_toml("../../x.json"),
        "featcheck.toml:1:",
    ),
    Vector(
        "workspace-metadata-targets",
        _metadata_table("workspace"),
        f"Cargo.toml:{TEMPLATE_LINES + 5}:",
    ),
    Vector(
        "package-metadata-targets", _metadata_table("package"), f"Cargo.toml:{TEMPLATE_LINES + 4}:"
    ),
    Vector("command-line-target", _cli_target("@{target}"), "--target:"),
    Vector("command-line-target-is-an-option", _cli_target("--print=cfg={target}"), "--target:"),
    Vector(
        "rustflags-cfg-argument-file",
        _rustflags('[build]\nrustflags = ["--cfg", "@{cfg}"]\n'),
        ".cargo/config.toml:2:",
        trusted="live",
    ),
    Vector(
        "rustflags-cfg-equals-argument-file",
        _rustflags('[build]\nrustflags = ["--cfg=@{cfg}"]\n'),
        ".cargo/config.toml:2:",
        trusted="inert",
    ),
    Vector(
        "rustflags-bare-argument-file",
        _rustflags('[build]\nrustflags = ["--cfg", "ok", "@{bare}"]\n'),
        ".cargo/config.toml:2:",
        trusted="live",
    ),
    Vector(
        "rustflags-string-with-argument-file",
        _rustflags('[build]\nrustflags = "--cfg @{cfg}"\n'),
        ".cargo/config.toml:2:",
        trusted="live",
    ),
    Vector(
        "rustflags-cfg-is-an-option",
        _rustflags('[build]\nrustflags = ["--cfg", "-Zcodegen-backend=evil.so"]\n'),
        ".cargo/config.toml:2:",
        trusted="inert",
    ),
    Vector(
        "target-triple-table-rustflags",
        _rustflags('[target.{host}]\nrustflags = [\n  "--cfg",\n  "@{cfg}",\n]\n'),
        ".cargo/config.toml:4:",
        trusted="live",
    ),
    Vector(
        "target-cfg-table-rustflags",
        _rustflags('[target.\'cfg(unix)\']\nrustflags = ["--cfg", "@{cfg}"]\n'),
        ".cargo/config.toml:2:",
        trusted="live",
    ),
    Vector(
        "included-config-rustflags",
        _rustflags('\n[build]\nrustflags = ["--cfg", "@{cfg}"]\n', name="extra.toml"),
        ".cargo/extra.toml:3:",
        trusted="live",
    ),
    Vector(
        "toolchain-channel-is-an-argument-file",
        _toolchain_channel("@{target}"),
        "rust-toolchain.toml:2:",
        trusted="inert",
        needs_rustup=True,
    ),
    Vector(
        "toolchain-channel-is-an-option",
        _toolchain_channel("--print=cfg={target}"),
        "rust-toolchain.toml:2:",
        trusted="inert",
        needs_rustup=True,
    ),
]

MODES = {"default": [], "no-exec": ["--no-exec"], "trust-checkout": ["--trust-checkout"]}


@dataclass(frozen=True)
class Outcome:
    checkout: Checkout
    done: subprocess.CompletedProcess[str]


@pytest.fixture(scope="module")
def outcomes(
    small_burn: SmallBurn, tmp_path_factory: pytest.TempPathFactory
) -> dict[tuple[str, str], Outcome]:
    """Every vector in every mode, each run with its own CARGO_HOME (over the synthetic burn)
    and an empty featcheck cache, where the first cargo call asks rustc, as
    a planted argument file needs. What is checked is what featcheck starts and reads (its own
    gate, and under --trust-checkout the cargo it starts, which reads the checkout itself, a
    real process): its command line runs in this process (`in_process_with`: the environment
    and directory `run_isolated` gives its process), one run after another."""
    jobs = [
        (vector, mode)
        for vector in VECTORS
        if not (vector.needs_rustup and not RUSTUP)
        for mode in MODES
    ]

    def audit(job: tuple[Vector, str]) -> Outcome:
        vector, mode = job
        base = tmp_path_factory.mktemp(f"{vector.name}-{mode}")
        checkout = make_checkout(base, template=small_burn.template)
        extra = vector.plant(checkout, plant_argument_files(checkout))
        home = small_burn.home(base / "cargo-home")
        arguments = [str(checkout.project), "--format", "json", *MODES[mode], *extra]
        environment = {"CARGO_HOME": str(home), "XDG_CACHE_HOME": str(home / "featcheck-cache")}
        return Outcome(checkout, in_process_with(arguments, environment))

    return {(vector.name, mode): audit((vector, mode)) for vector, mode in jobs}


def _assert_refused(done: subprocess.CompletedProcess[str], refused_with: str) -> None:
    assert done.returncode == 2, done.stdout + done.stderr
    lines = done.stderr.splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith("featcheck: error: "), done.stderr
    assert refused_with in lines[0], done.stderr


@pytest.mark.parametrize("mode", list(MODES))
@pytest.mark.parametrize("vector", VECTORS, ids=[v.name for v in VECTORS])
def test_argument_file_vectors(
    vector: Vector, mode: str, outcomes: dict[tuple[str, str], Outcome]
) -> None:
    if vector.needs_rustup and not RUSTUP:
        pytest.skip("cargo is not a rustup proxy here")
    outcome = outcomes[(vector.name, mode)]
    done = outcome.done
    assert "Traceback" not in done.stderr, done.stderr
    if mode == "default" or (mode == "trust-checkout" and vector.trusted == "refused"):
        _assert_refused(done, vector.refused_with)
        assert outcome.checkout.written() == []
    elif mode == "no-exec":
        # No process runs at all: whatever the audit makes of the value, rustc never sees it.
        assert done.returncode in (1, 2), done.stderr
        assert outcome.checkout.written() == []
    elif vector.trusted == "live":
        assert outcome.checkout.written() == ["print-cfg"], done.stderr
    else:
        assert outcome.checkout.written() == [], done.stderr


# --- the attack is real: rustc itself, as cargo or an unguarded featcheck would run it --------


def _rustc(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    rustc = shutil.which("rustc")
    if rustc is None:
        pytest.skip("rustc is not installed")
    return subprocess.run(
        [rustc, *args], capture_output=True, text=True, check=False, cwd=cwd, timeout=120
    )


@pytest.mark.cargo
def test_rustc_expands_an_argument_file_given_as_a_separate_value(tmp_path: Path) -> None:
    checkout = make_checkout(tmp_path)
    files = plant_argument_files(checkout)
    # One argument, `--target=@FILE`: rustc reads a target named "@FILE" and fails; harmless.
    _rustc("--print", "cfg", f"--target=@{files.target}", cwd=tmp_path)
    assert checkout.written() == []
    # Two arguments, `--target @FILE`: rustc reads FILE and writes the marker.
    _rustc("--print", "cfg", "--target", f"@{files.target}", cwd=tmp_path)
    assert checkout.written() == ["print-cfg"]


def test_an_argument_file_loads_a_codegen_backend_on_nightly(
    tmp_path: Path, registry_views: RegistryViews
) -> None:
    """What `targets = ["@FILE"]` gave a checkout with `channel = "nightly"`: a loaded library.
    featcheck refuses that featcheck.toml before any toolchain runs."""
    if CC is None:
        pytest.skip("no C compiler to build the planted shared object")
    if not RUSTUP:
        pytest.skip("cargo is not a rustup proxy here")
    checkout = make_checkout(tmp_path)
    library = checkout.shared_object("evil/backend.so")
    arguments = checkout.root / "evil" / "backend.args"
    arguments.write_text(f"{host_triple()}\n-Zcodegen-backend={library}\n")
    done = _rustc("+nightly", "--print", "cfg", "--target", f"@{arguments}", cwd=tmp_path)
    if "toolchain 'nightly" in done.stderr and "not installed" in done.stderr:
        pytest.skip("the nightly toolchain is not installed")
    assert checkout.written() == ["shared-object"], done.stderr
    for name in checkout.markers.iterdir():
        name.unlink()
    (checkout.root / "rust-toolchain.toml").write_text('[toolchain]\nchannel = "nightly"\n')
    (checkout.project / "featcheck.toml").write_text(f'targets = ["@{arguments}"]\n')
    home = write_offline_cargo_home(tmp_path / "cargo-home", registry_views.registry(TEMPLATE))
    _assert_refused(run_isolated([str(checkout.project)], home), "featcheck.toml:1:")
    assert checkout.written() == []


def test_the_probe_resolves_through_the_same_gate(
    tmp_path: Path, registry_views: RegistryViews
) -> None:
    checkout = make_checkout(tmp_path)
    files = plant_argument_files(checkout)
    checkout.cargo_config(f'[build]\nrustflags = ["--cfg", "@{files.cfg}"]\n')
    home = write_offline_cargo_home(tmp_path / "cargo-home", registry_views.registry(TEMPLATE))
    done = run_isolated(["probe", str(checkout.project), "--offline"], home)
    assert done.returncode == 2, done.stderr
    assert ".cargo/config.toml:2:" in done.stderr
    assert "Traceback" not in done.stderr
    assert checkout.written() == []


# --- the gate itself, whoever calls the runner -----------------------------------------------


@pytest.mark.parametrize(
    "call",
    [
        lambda runner, manifest: runner.tree(manifest, "@/tmp/evil.args", host_triple()),
        lambda runner, manifest: runner.tree(manifest, "-Zunstable-options", host_triple()),
        lambda runner, manifest: runner.tree(manifest, "app", "@/tmp/evil.args"),
        lambda runner, manifest: runner.tree(manifest, "app", "--print=cfg=/tmp/x"),
        lambda runner, manifest: runner.target_cfg("@/tmp/evil.args"),
        lambda runner, manifest: runner.target_cfg("-Zcodegen-backend=/tmp/x.so"),
        lambda runner, manifest: runner.target_cfg("../outside.json"),
    ],
    ids=["package-@", "package--", "target-@", "target--", "cfg-@", "cfg--", "json-outside"],
)
def test_the_runner_refuses_unchecked_values_from_any_caller(
    tmp_path: Path, offline_cargo: Path, call: Callable[[CargoRunner, Path], object]
) -> None:
    checkout = make_checkout(tmp_path)
    commands: list[list[str]] = []
    runner = CargoRunner(
        checkout.project, trust=trust_of(checkout.project), offline=True, on_command=commands.append
    )
    with pytest.raises(FeatcheckError):
        call(runner, checkout.project / "Cargo.toml")
    assert commands == []
    assert checkout.written() == []


def test_no_process_starts_with_an_argument_file(tmp_path: Path) -> None:
    for arguments in (["--version", "@/tmp/evil.args"], ["x\x00y"]):
        with pytest.raises(FeatcheckError):
            start_process(
                "/bin/true",
                arguments,
                trust=elsewhere(tmp_path),
                cwd=tmp_path,
                env={},
                timeout=10,
                what="`true`",
            )


@pytest.mark.parametrize(
    "triple",
    [
        "x86_64-unknown-linux-gnu",
        "aarch64-apple-darwin",
        "thumbv7em-none-eabihf",
        "wasm32-unknown-unknown",
        "armv7a-kmc-solid_asp3-eabi",
        "x86_64h-apple-darwin",
        "avr-none",
        "i686-pc-windows-msvc",
        "specs/custom.json",
    ],
)
def test_real_targets_pass_the_gate(triple: str) -> None:
    assert target_triple(triple) == triple
    assert option("--target", triple, TARGET) == f"--target={triple}"


@pytest.mark.parametrize(
    ("grammar", "good", "bad"),
    [
        (CFG, ["unix", "tokio_unstable", 'feature="simd"', 'target_os = "linux"'], ["@x", "-Z"]),
        (CFG, ['a="b"'], ['a="b" --print=cfg=x', "a b", 'a="\n"']),
        # What cargo reads back from rustc: ASCII names (a raw `r#name` too), no `_` alone
        # (rustc: no identifier), no escapes in the value (cargo cannot parse rustc's answer).
        (CFG, ["r#fast", "_private"], ["_", "r#", "é", "a::b", 'a="b\\"c"']),
        (
            TOOLCHAIN,
            ["stable", "1.85", "nightly-2026-01-01", "1.95.0-x86_64-unknown-linux-gnu"],
            [],
        ),
        (TOOLCHAIN, [], ["@x", "-x", "/opt/toolchain", "../x", ""]),
        (PACKAGE_SPEC, ["app", "app@0.1.0", "path+file:///src/app#0.1.0"], ["@x", "-p", ""]),
    ],
)
def test_grammars(grammar: Grammar, good: list[str], bad: list[str]) -> None:
    for value in good:
        assert grammar.check(value) == value
    for value in bad:
        with pytest.raises(GateError):
            grammar.check(value)


def test_only_fixed_words_are_words() -> None:
    assert [word(w) for w in ("tree", "--locked", "-vV")] == ["tree", "--locked", "-vV"]
    for text in ("@file", "a=b", "--flag=x", "tree x", ""):
        with pytest.raises(GateError):
            word(text)


# --- the kept rustflags count: both resolvers see the cfg values cargo sees --------------------


_FAST_ON_HOST = "CARGO_TARGET_{HOST}_RUSTFLAGS"


@pytest.mark.parametrize(
    ("config", "environment", "codes"),
    [
        ("", {}, ["FC001"]),
        ('[build]\nrustflags = ["--cfg", "fast"]\n', {}, ["FC003"]),
        ('[build]\nrustflags = "-Ctarget-feature=+avx2 --cfg=fast"\n', {}, ["FC003"]),
        # A matching [target] table replaces [build]'s flags, as in cargo.
        (
            '[build]\nrustflags = ["--cfg", "fast"]\n[target.{host}]\nrustflags = ["--cfg=x"]\n',
            {},
            ["FC001"],
        ),
        # ... even when featcheck keeps none of its flags (they change no cfg value).
        (
            '[build]\nrustflags = ["--cfg", "fast"]\n[target.{host}]\nrustflags = ["-C", "link-arg=-s"]\n',
            {},
            ["FC001"],
        ),
        ('[target.\'cfg(unix)\']\nrustflags = ["--cfg", "fast"]\n', {}, ["FC003"]),  # on unix
        # The environment's lists add to the files' lists, as cargo adds them.
        ("", {"CARGO_BUILD_RUSTFLAGS": "--cfg fast"}, ["FC003"]),
        (
            '[build]\nrustflags = ["--cfg", "fast"]\n',
            {"CARGO_BUILD_RUSTFLAGS": "-C target-feature=+avx2"},
            ["FC003"],
        ),
        ("", {_FAST_ON_HOST: "--cfg fast"}, ["FC003"]),
        ('[build]\nrustflags = ["--cfg", "fast"]\n', {_FAST_ON_HOST: "-C link-arg=-s"}, ["FC001"]),
    ],
    ids=[
        "none",
        "build",
        "build-string",
        "target-table-wins",
        "target-table-of-dropped-flags-wins",
        "cfg-table",
        "build-environment",
        "build-environment-adds-to-files",
        "target-environment",
        "target-environment-of-dropped-flags-wins",
    ],
)
@pytest.mark.usefixtures("remembered_cargo")
def test_kept_rustflags_decide_cfg_dependencies_as_in_cargo(
    tmp_path: Path,
    small_cargo: SmallBurn,
    monkeypatch: pytest.MonkeyPatch,
    config: str,
    environment: dict[str, str],
    codes: list[str],
) -> None:
    """Both resolvers see the cfg values cargo sees, and so does cargo itself in the checkout:
    `burn` gets `rayon` only where `cfg(fast)` holds."""
    checkout = make_checkout(tmp_path, template=small_cargo.template)
    manifest = checkout.project / "Cargo.toml"
    manifest.write_text(
        manifest.read_text()
        + "\n[target.'cfg(fast)'.dependencies]\n"
        + 'burn = { version = "=0.22.1", default-features = false, features = ["rayon"] }\n'
    )
    if config:
        checkout.cargo_config(config.format(host=host_triple()))
    host_variable = host_triple().upper().replace("-", "_").replace(".", "_")
    for name, value in environment.items():
        monkeypatch.setenv(name.format(HOST=host_variable), value)
    in_checkout = subprocess.run(
        ["cargo", "tree", "-e", "normal", "-i", "burn", "-f", "{f}", "--depth", "0"],
        cwd=checkout.project,
        capture_output=True,
        text=True,
        check=True,
    )
    fast = "rayon" in in_checkout.stdout.split(",")
    assert codes == (["FC003"] if fast else ["FC001"]), in_checkout.stdout
    for resolver in ("featcheck", "cargo"):
        done = run_in_process_resolved_by(resolver, str(checkout.project), "--format", "json")
        assert done.returncode == 1, done.stderr
        assert [f["code"] for f in json.loads(done.stdout)["findings"]] == codes, resolver


@pytest.mark.parametrize("variable", ["RUSTFLAGS", "CARGO_BUILD_RUSTFLAGS", _FAST_ON_HOST])
def test_an_argument_file_in_the_environments_rustflags_is_one_line(
    tmp_path: Path, offline_cargo: Path, monkeypatch: pytest.MonkeyPatch, variable: str
) -> None:
    """The environment's rustflags are the user's, yet an argument file there could set cfg
    values featcheck cannot see: refused in one line naming the variable, as in a file."""
    host_variable = host_triple().upper().replace("-", "_").replace(".", "_")
    name = variable.format(HOST=host_variable)
    monkeypatch.setenv(name, f"--cfg fast @{tmp_path / 'flags'}")
    done = run_in_process(str(make_checkout(tmp_path).project))
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stderr.startswith(f"featcheck: error: {name}: `@"), done.stderr
    assert len(done.stderr.splitlines()) == 1 and not done.stdout


@pytest.mark.usefixtures("remembered_cargo")
def test_rustflags_of_the_users_cargo_home_count_too(
    tmp_path: Path,
    offline_cargo: Path,
    registry_views: RegistryViews,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """cargo reads $CARGO_HOME/config.toml first; its `--cfg` decides as the checkout's does."""
    home = write_offline_cargo_home(tmp_path / "home", registry_views.registry(TEMPLATE))
    with (home / "config.toml").open("a") as config:
        config.write('[build]\nrustflags = ["--cfg", "fast"]\n')
    monkeypatch.setenv("CARGO_HOME", str(home))
    checkout = make_checkout(tmp_path)
    manifest = checkout.project / "Cargo.toml"
    manifest.write_text(
        manifest.read_text()
        + "\n[target.'cfg(fast)'.dependencies]\n"
        + 'burn = { version = "=0.22.1", default-features = false, features = ["rayon"] }\n'
    )
    for resolver in ("featcheck", "cargo"):
        done = run_in_process_resolved_by(resolver, str(checkout.project), "--format", "json")
        assert done.returncode == 1, done.stderr
        assert [f["code"] for f in json.loads(done.stdout)["findings"]] == ["FC003"], resolver
