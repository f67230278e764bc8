"""The line between the user's and the checkout's, tested as an attacker draws it.

What featcheck trusts: the user's environment and the cargo home, rustup home and cache it
names, where they lie outside the checkout. What it never trusts: everything under the checkout
root, including a cargo home, rustup home or cache directory that happens to lie there (CI
caches often put CARGO_HOME in the project directory). Each attack is built in a temporary
directory as a pull request would build it; a local HTTP server on 127.0.0.1 stands in for the
attacker's host. featcheck runs in the test's process (hostile_support.in_process_with: the
subject is what it reads and the cargo it starts, each cargo a real process), but where the
test is about the environment featcheck's process hands on to cargo (rustflags).
"""

from __future__ import annotations

import http.server
import json
import os
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from hostile_support import (
    BURN_LINE,
    Checkout,
    SmallBurn,
    in_process_with,
    make_checkout,
    plant_cargo_home_inside,
    run_with,
)
from support import REPO, write_offline_cargo_home

from featcheck.cargo.argv_gate import filter_environment_rustflags

SECRET = "s3cret-token-of-the-user"


class _Recorder(http.server.BaseHTTPRequestHandler):
    """Asks for credentials the way a registry with `auth-required` does, and keeps every
    Authorization header it is sent."""

    seen: list[str]

    def do_GET(self) -> None:
        authorization = self.headers.get("Authorization")
        self.server.seen.append(authorization or "")  # type: ignore[attr-defined]
        if self.path.endswith("/config.json"):
            body = json.dumps({"dl": "http://127.0.0.1/dl", "auth-required": True}).encode()
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
        elif authorization is None:
            self.send_response(401)
            self.send_header("WWW-Authenticate", 'Cargo login_url="http://127.0.0.1/me"')
            self.end_headers()
        else:
            self.send_response(404)
            self.end_headers()

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture
def attacker() -> Iterator[http.server.HTTPServer]:
    """The attacker's registry host: on loopback, bounded to this test."""
    server = http.server.HTTPServer(("127.0.0.1", 0), _Recorder)
    server.seen = []  # type: ignore[attr-defined]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()


def _url(server: http.server.HTTPServer) -> str:
    return f"sparse+http://127.0.0.1:{server.server_address[1]}/"


def _one_error_line(done: subprocess.CompletedProcess[str]) -> str:
    assert done.returncode == 2, done.stdout + done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith("featcheck: error: ")
    return lines[0]


def _uses_private_registry(checkout: Checkout, registry: str) -> None:
    manifest = checkout.project / "Cargo.toml"
    text = manifest.read_text()
    manifest.write_text(
        text.replace(
            "[dependencies]\n",
            f'[dependencies]\ninternal-kernels = {{ version = "1", registry = "{registry}" }}\n',
            1,
        )
    )


# --- secrets: where cargo sends the user's credentials -----------------------------------------


def _online_with_tokens(home: Path, more: str = "") -> None:
    """The user's cargo home goes online and hands out tokens from the environment, as a CI
    job that reads a private registry is set up (crates.io stays the local stub registry)."""
    config = home / "config.toml"
    config.write_text(
        config.read_text().replace("offline = true", "offline = false\nretry = 0")
        + '[registry]\nglobal-credential-providers = ["cargo:token"]\n'
        + more
    )


def test_a_checkout_cannot_redirect_a_registry_whose_token_the_user_holds(
    tmp_path: Path, attacker: http.server.HTTPServer, small_burn: SmallBurn
) -> None:
    checkout = make_checkout(tmp_path, template=small_burn.template)
    _uses_private_registry(checkout, "company")
    checkout.cargo_config(f'[registries.company]\nindex = "{_url(attacker)}"\n')
    home = write_offline_cargo_home(tmp_path / "home", small_burn.registry)
    # The user's own definition of `company`, and its token, as CI sets it.
    _online_with_tokens(home, '[registries.company]\nindex = "sparse+http://127.0.0.1:9/"\n')
    done = in_process_with(
        [str(checkout.project)],
        {"CARGO_HOME": str(home), "CARGO_REGISTRIES_COMPANY_TOKEN": SECRET},
    )
    assert SECRET not in attacker.seen, done.stderr  # type: ignore[attr-defined]
    assert attacker.seen == []  # type: ignore[attr-defined]
    assert done.returncode == 2  # the user's own `company` does not answer
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize(
    ("config", "refused"),
    [
        (
            '[registries.company]\nindex = "URL"\n',
            "`[registries.company]` is defined by the checkout",
        ),
        (
            '[source.crates-io]\nreplace-with = "company"\n[source.company]\nregistry = "URL"\n',
            "`[source.company]` in the checkout names a remote registry",
        ),
    ],
    ids=["registry-definition", "source-replacement"],
)
def test_a_registry_only_the_checkout_defines_is_refused_before_cargo_asks_it(
    tmp_path: Path,
    attacker: http.server.HTTPServer,
    small_burn: SmallBurn,
    config: str,
    refused: str,
) -> None:
    checkout = make_checkout(tmp_path, template=small_burn.template)
    if config.startswith("[registries"):
        _uses_private_registry(checkout, "company")
    checkout.cargo_config(config.replace("URL", _url(attacker)))
    home = write_offline_cargo_home(tmp_path / "home", small_burn.registry)
    _online_with_tokens(home)
    done = in_process_with(
        [str(checkout.project)],
        {"CARGO_HOME": str(home), "CARGO_REGISTRIES_COMPANY_TOKEN": SECRET},
    )
    line = _one_error_line(done)
    assert refused in line
    assert ".cargo/config.toml:" in line  # where the checkout says it
    assert attacker.seen == []  # type: ignore[attr-defined]
    # The probe builds and runs what cargo fetches: refused even offline, and it says so.
    probed = in_process_with(
        ["probe", "--offline", "--yes", str(checkout.project)],
        {"CARGO_HOME": str(home), "CARGO_REGISTRIES_COMPANY_TOKEN": SECRET},
    )
    line = _one_error_line(probed)
    assert refused in line and "not the probe" in line
    assert attacker.seen == []  # type: ignore[attr-defined]


def test_a_vendored_checkout_still_audits(tmp_path: Path, small_burn: SmallBurn) -> None:
    """What `cargo vendor` writes (a local directory source, replacing crates.io and an
    alternative registry) passes: it sends nothing anywhere."""
    checkout = make_checkout(tmp_path, template=small_burn.template)
    registry = small_burn.registry
    checkout.cargo_config(
        f"""\
        [source.crates-io]
        replace-with = "vendored-sources"
        [source.company]
        registry = "sparse+http://127.0.0.1:9/"
        replace-with = "vendored-sources"
        [source.vendored-sources]
        directory = "{registry}"
        """
    )
    home = tmp_path / "home"
    home.mkdir()
    (home / "config.toml").write_text("[net]\noffline = true\n")
    done = in_process_with([str(checkout.project), "--format", "json"], {"CARGO_HOME": str(home)})
    assert done.returncode == 1, done.stderr
    findings = json.loads(done.stdout)["findings"]
    assert [(f["code"], f["location"]["line"]) for f in findings] == [("FC001", BURN_LINE)]


# --- homes and caches inside the checkout ------------------------------------------------------


def test_a_cargo_home_inside_the_checkout_is_not_obeyed(
    tmp_path: Path, small_burn: SmallBurn
) -> None:
    checkout = make_checkout(tmp_path, template=small_burn.template)
    home = plant_cargo_home_inside(checkout, small_burn.registry)
    done = in_process_with(
        [str(checkout.project), "--format", "json"],
        {"CARGO_HOME": str(home), "XDG_CACHE_HOME": str(tmp_path / "user-cache")},
    )
    assert checkout.written() == [], done.stderr
    assert done.returncode == 1, done.stderr
    findings = json.loads(done.stdout)["findings"]
    assert [(f["code"], f["location"]["line"]) for f in findings] == [("FC001", BURN_LINE)]


def test_a_cargo_home_and_cache_both_inside_the_checkout_are_refused(
    tmp_path: Path, small_burn: SmallBurn
) -> None:
    checkout = make_checkout(tmp_path, template=small_burn.template)
    home = plant_cargo_home_inside(checkout, small_burn.registry)
    done = in_process_with(
        [str(checkout.project)],
        {"CARGO_HOME": str(home), "XDG_CACHE_HOME": str(checkout.root / ".cache")},
    )
    assert checkout.written() == []
    assert "CARGO_HOME lies inside the audited checkout" in _one_error_line(done)


def _audit_with_cache(
    checkout: Checkout, home: Path, cache: Path
) -> subprocess.CompletedProcess[str]:
    return in_process_with(
        [str(checkout.project), "--format", "json"],
        {"CARGO_HOME": str(home), "XDG_CACHE_HOME": str(cache)},
    )


def test_nothing_is_kept_in_or_believed_from_a_cache_inside_the_checkout(
    tmp_path: Path, small_burn: SmallBurn
) -> None:
    """rustc's kept answers decide which target an audit is for: a checkout that could plant
    them (its cache directory lies inside it) could turn a finding into "no findings"."""
    checkout = make_checkout(tmp_path, template=small_burn.template)
    home = write_offline_cargo_home(tmp_path / "home", small_burn.registry)
    outside = tmp_path / "user-cache"
    assert _audit_with_cache(checkout, home, outside).returncode == 1
    answers = outside / "featcheck" / "rustc-answers.json"
    assert answers.is_file()
    # The attacker plants the same file, with another host, in a cache inside the checkout.
    inside = checkout.root / ".cache"
    planted = inside / "featcheck" / "rustc-answers.json"
    planted.parent.mkdir(parents=True)
    planted.write_text(
        answers.read_text().replace("x86_64-unknown-linux-gnu", "wasm32-unknown-unknown")
    )
    before = sorted(p.relative_to(inside) for p in inside.rglob("*"))
    done = _audit_with_cache(checkout, home, inside)
    assert done.returncode == 1, done.stdout + done.stderr
    findings = json.loads(done.stdout)["findings"]
    assert [(f["code"], f["target"]) for f in findings] == [("FC001", findings[0]["target"])]
    assert "wasm32" not in findings[0]["target"]
    assert sorted(p.relative_to(inside) for p in inside.rglob("*")) == before  # nothing kept
    assert not (checkout.root / "target").exists()  # nor in the checkout's target/


@pytest.mark.cargo
def test_a_rustup_home_inside_the_checkout_is_refused(tmp_path: Path) -> None:
    checkout = make_checkout(tmp_path)
    planted = checkout.root / "ci" / "rustup"
    (planted / "toolchains").mkdir(parents=True)
    done = in_process_with([str(checkout.project)], {"RUSTUP_HOME": str(planted)})
    if done.returncode == 2 and "rustup proxy" in done.stderr:
        pytest.skip("cargo on PATH is not managed by rustup here")
    assert checkout.written() == []
    line = _one_error_line(done)
    assert "lies inside the audited checkout" in line


def test_a_cargo_on_path_inside_the_checkout_is_not_run(tmp_path: Path) -> None:
    checkout = make_checkout(tmp_path)
    for program in ("cargo", "rustup", "rustc"):
        checkout.marker_script(f"node_modules/.bin/{program}")
    path = f"{checkout.root / 'node_modules/.bin'}{os.pathsep}{os.environ['PATH']}"
    done = in_process_with([str(checkout.project)], {"PATH": path})
    assert checkout.written() == [], done.stderr
    assert "cargo featcheck would run lies inside the audited checkout" in _one_error_line(done)


# --- the environment: rustflags go through the allow-list --------------------------------------


def _host() -> str:
    output = subprocess.run(["rustc", "-vV"], capture_output=True, text=True, check=True).stdout
    return next(line.split()[1] for line in output.splitlines() if line.startswith("host:"))


@pytest.mark.parametrize(
    "variable", ["RUSTFLAGS", "CARGO_ENCODED_RUSTFLAGS", "CARGO_BUILD_RUSTFLAGS", "TARGET"]
)
def test_rustflags_in_the_environment_reach_cargo_only_through_the_allow_list(
    tmp_path: Path, small_burn: SmallBurn, variable: str
) -> None:
    checkout = make_checkout(tmp_path, template=small_burn.template)
    home = write_offline_cargo_home(tmp_path / "home", small_burn.registry)
    marker = checkout.markers / "rustflag-wrote-this"
    if variable == "TARGET":
        variable = f"CARGO_TARGET_{_host().upper().replace('-', '_')}_RUSTFLAGS"
    separator = "\x1f" if variable == "CARGO_ENCODED_RUSTFLAGS" else " "
    flags = separator.join(["--cfg=kept", f"--print=cfg={marker}"])
    done = run_with(
        [str(checkout.project), "--format", "json"],
        {"CARGO_HOME": str(home), "XDG_CACHE_HOME": str(tmp_path / "cache"), variable: flags},
    )
    assert checkout.written() == [], done.stderr
    assert done.returncode == 1, done.stderr


def test_environment_rustflags_keep_their_meaning() -> None:
    environment = {
        "RUSTFLAGS": "--cfg tokio_unstable -Zcodegen-backend=evil.so",
        "CARGO_BUILD_RUSTFLAGS": "-Clinker=evil",
        "CARGO_TARGET_X86_64_UNKNOWN_LINUX_GNU_RUSTFLAGS": "-Clink-arg=-Wl,evil",
        "CARGO_TARGET_AARCH64_APPLE_DARWIN_RUSTFLAGS": "-Ctarget-cpu=native --print=cfg=x",
        "OTHER_RUSTFLAGS": "@left-alone",
    }
    filter_environment_rustflags(environment)
    assert environment == {
        "CARGO_ENCODED_RUSTFLAGS": "--cfg=tokio_unstable",
        # all flags dropped: still replaces [build]'s for that target, as it did
        "CARGO_TARGET_X86_64_UNKNOWN_LINUX_GNU_RUSTFLAGS": "-Ccodegen-units=1",
        "CARGO_TARGET_AARCH64_APPLE_DARWIN_RUSTFLAGS": "-Ctarget-cpu=native",
        "OTHER_RUSTFLAGS": "@left-alone",
    }


def test_an_argument_file_in_environment_rustflags_is_one_line(
    tmp_path: Path, small_burn: SmallBurn
) -> None:
    checkout = make_checkout(tmp_path, template=small_burn.template)
    home = write_offline_cargo_home(tmp_path / "home", small_burn.registry)
    done = in_process_with(
        [str(checkout.project)], {"CARGO_HOME": str(home), "RUSTFLAGS": "@flags"}
    )
    assert "RUSTFLAGS" in _one_error_line(done)


def _registry_home(home: Path) -> Path:
    """A cargo home whose unpacked crates.io registry holds every stub package, in the
    directory cargo names after crates.io's source id."""
    source = home / "registry" / "src" / "index.crates.io-1949cf8c6b5b557f"
    source.mkdir(parents=True)
    for package in (REPO / "fixtures" / "registry").iterdir():
        (source / package.name).symlink_to(package, target_is_directory=True)
    return home


def test_no_exec_reads_no_registry_of_a_cargoplant_cargo_home_inside(tmp_path: Path) -> None:
    """Packages "downloaded" into a cargo home inside the checkout are the checkout's files: a
    pull request could plant any manifest there. The audit says it could not read them."""
    checkout = make_checkout(tmp_path)
    outside = _registry_home(tmp_path / "home")
    done = in_process_with(
        ["--no-exec", str(checkout.project), "--format", "json"],
        {"CARGO_HOME": str(outside), "XDG_CACHE_HOME": str(tmp_path / "cache")},
    )
    assert done.returncode == 1, done.stderr
    assert [f["code"] for f in json.loads(done.stdout)["findings"]] == ["FC001"]
    inside = _registry_home(checkout.root / ".cargo")
    done = in_process_with(
        ["--no-exec", str(checkout.project), "--format", "json"],
        {"CARGO_HOME": str(inside), "XDG_CACHE_HOME": str(tmp_path / "cache")},
    )
    report = json.loads(done.stdout)
    assert done.returncode == 2, done.stdout + done.stderr
    assert report["complete"] is False
    assert report["findings"] == []
    assert any("CARGO_HOME lies inside the audited checkout" in n for n in report["notes"])
