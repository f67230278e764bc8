"""What of a checkout's cargo configuration reaches cargo: data keys only, and no credentials."""

from __future__ import annotations

from pathlib import Path

import pytest
from hostile_support import make_checkout

from featcheck.cargo.checkout_config import read_checkout_config
from featcheck.errors import FeatcheckError


def test_only_data_keys_of_the_checkout_configuration_reach_cargo(tmp_path: Path) -> None:
    checkout = make_checkout(tmp_path)
    checkout.cargo_config(
        """\
        paths = ["overrides/one"]
        [build]
        rustc = "evil"
        rustc-wrapper = "evil"
        rustflags = "--cfg from_string -Zcodegen-backend=evil.so -C target-feature=+avx2"
        target-dir = "elsewhere"
        [target.x86_64-unknown-linux-gnu]
        runner = "evil"
        linker = "evil"
        rustflags = ["-Clinker=evil", "-Ctarget-cpu=native", "--cfg=planted"]
        [env]
        LD_PRELOAD = "evil.so"
        [alias]
        tree = "evil"
        [source.crates-io]
        replace-with = "vendored"
        [source.vendored]
        directory = "vendor"
        [registries.internal]
        index = "sparse+https://registry.example/index/"
        credential-provider = ["evil"]
        token = "leaked"
        [registry]
        default = "internal"
        credential-provider = "evil"
        global-credential-providers = ["evil"]
        [patch.crates-io]
        rayon = { path = "patches/rayon" }
        [net]
        offline = true
        git-fetch-with-cli = true
        [http]
        proxy = "evil.example:8080"
        [unstable]
        build-std = ["std"]
        [credential-alias]
        evil = ["evil"]
        """
    )
    args = read_checkout_config(checkout.project, {}, None).arguments
    assert all(a.startswith("--config=") for a in args)  # one argument each
    pairs = [a.removeprefix("--config=") for a in args]
    root = checkout.root
    assert pairs == [
        f'paths=["{root / "overrides/one"}"]',
        'source.crates-io.replace-with="vendored"',
        f'source.vendored.directory="{root / "vendor"}"',
        # forwarded only because the checkout keeps cargo offline (below): no token leaves
        'registries.internal.index="sparse+https://registry.example/index/"',
        f'patch.crates-io.rayon.path="{root / "patches/rayon"}"',
        "net.offline=true",
        'build.rustflags=["--cfg=from_string", "-Ctarget-feature=+avx2"]',
        'target.x86_64-unknown-linux-gnu.rustflags=["-Ctarget-cpu=native", "--cfg=planted"]',
    ]
    # A key the user set in the environment is the environment's; so is a registry the user
    # defines there (the checkout's definition of it is dropped).
    environment = {"CARGO_NET_OFFLINE": "false", "CARGO_REGISTRIES_INTERNAL_INDEX": "x"}
    args = read_checkout_config(checkout.project, environment, None).arguments
    assert "--config=net.offline=true" not in args
    assert not [a for a in args if "registries" in a]
    # Online, a registry only the checkout defines is refused where it is written.
    with pytest.raises(FeatcheckError, match=r"config.toml:20:9: `\[registries.internal\]`"):
        read_checkout_config(checkout.project, {"CARGO_NET_OFFLINE": "false"}, None)


def test_false_and_zero_reach_cargo_as_written(tmp_path: Path) -> None:
    # Only rustflags the gate emptied become the neutral flags; `false` or `0` elsewhere once
    # became `["-Ccodegen-units=1"]`, which cargo refuses for a patch's default-features.
    checkout = make_checkout(tmp_path)
    checkout.cargo_config(
        """\
        [build]
        rustflags = ["-Clinker=evil"]
        [patch.crates-io]
        rayon = { path = "patches/rayon", default-features = false }
        [net]
        offline = true
        retry = 0
        """
    )
    args = read_checkout_config(checkout.project, {}, None).arguments
    pairs = [a.removeprefix("--config=") for a in args]
    assert "patch.crates-io.rayon.default-features=false" in pairs
    assert "net.retry=0" in pairs
    assert 'build.rustflags=["-Ccodegen-units=1"]' in pairs


@pytest.mark.parametrize(
    ("setting", "line", "column", "said"),
    [
        ("[build]\nrustflags = 5\n", 2, 13, "must be a string or an array of strings"),
        ('[build]\nrustflags = ["--cfg=x", 3]\n', 2, 13, "must be a string or an array"),
        ("[target.x86_64-unknown-linux-gnu]\nrustflags = 7\n", 2, 13, "must be a string or"),
        ("[build]\ntarget = 5\n", 2, 10, "must be a string or an array of strings"),
        ('[build]\ntarget = "spec.json"\n', 2, 10, "does not follow a target file"),
        ('[build]\ntarget = ["wasm32-unknown-unknown", "--x"]\n', 2, 10, "is not a target triple"),
    ],
)
def test_a_setting_cargo_refuses_for_its_type_is_refused_at_its_line(
    setting: str, line: int, column: int, said: str, tmp_path: Path
) -> None:
    """cargo refuses each ("expected a string or array of strings, but found a integer"):
    featcheck ignored the setting, audited, and `--fix` wrote the manifests."""
    checkout = make_checkout(tmp_path)
    config = checkout.project / ".cargo" / "config.toml"
    config.parent.mkdir(exist_ok=True)
    config.write_text(setting)
    with pytest.raises(FeatcheckError) as refused:
        read_checkout_config(checkout.project, {}, None)
    error = refused.value
    assert (error.line, error.column) == (line, column)
    assert Path(str(error.path)).name == "config.toml" and said in error.message
