"""Limits like cargo's: what featcheck reads and how long it waits, on a hostile checkout.

A byte order mark is accepted (cargo accepts one); a manifest over MAX_MANIFEST_BYTES, a FIFO or
device in place of a manifest or lockfile, and a cargo configuration `include` of anything but
a `.toml` file are refused at once with one line (exit 2); an include outside the checkout is
refused unread, and an included file outside the project is never quoted; `--timeout` bounds rustup too and ends everything it started; a cargo failure
is one line.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from history_support import git
from hostile_support import (
    BURN_COLUMN,
    BURN_LINE,
    RUSTUP,
    SmallBurn,
    make_checkout,
    run_isolated,
)
from support import run_featcheck

from featcheck.boundary import MAX_MANIFEST_BYTES

BOM = b"\xef\xbb\xbf"


def _one_line_refusal(done: subprocess.CompletedProcess[str], *parts: str) -> str:
    assert done.returncode == 2, done.stdout + done.stderr
    lines = done.stderr.splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith("featcheck: error: "), done.stderr
    for part in parts:
        assert part in lines[0], done.stderr
    return lines[0]


def test_a_byte_order_mark_is_accepted_everywhere_cargo_accepts_it(
    tmp_path: Path, small_burn: SmallBurn
) -> None:
    checkout = make_checkout(tmp_path, template=small_burn.template)
    manifest = checkout.project / "Cargo.toml"
    manifest.write_bytes(BOM + manifest.read_bytes())
    (checkout.project / "featcheck.toml").write_bytes(BOM + b'fail-on = "warning"\n')
    checkout.cargo_config("[net]\nretry = 2\n")
    config = checkout.root / ".cargo" / "config.toml"
    config.write_bytes(BOM + config.read_bytes())
    if RUSTUP:
        (checkout.root / "rust-toolchain.toml").write_bytes(
            BOM + b'[toolchain]\nchannel = "stable"\n'
        )
    home = small_burn.home(tmp_path / "cargo-home")
    done = run_isolated([str(checkout.project), "--format", "json"], home)
    assert done.returncode == 1, done.stderr
    findings = json.loads(done.stdout)["findings"]
    # The mark is not a column: the finding points where an editor shows `default-features`.
    assert [(f["code"], f["location"]["line"], f["location"]["column"]) for f in findings] == [
        ("FC001", BURN_LINE, BURN_COLUMN)
    ]
    fixed = run_isolated([str(checkout.project), "--fix"], home)
    assert fixed.returncode in (0, 1), fixed.stderr
    text = manifest.read_bytes()
    assert text.startswith(BOM) and text.count(BOM) == 1
    assert b'"rayon"' in text


def test_a_manifest_over_the_limit_is_refused_at_once(
    tmp_path: Path, small_burn: SmallBurn
) -> None:
    checkout = make_checkout(tmp_path, template=small_burn.template)
    manifest = checkout.project / "Cargo.toml"
    padding = b"# " + b"x" * 1000 + b"\n"
    manifest.write_bytes(manifest.read_bytes() + padding * (MAX_MANIFEST_BYTES // len(padding) + 1))
    for number, mode in enumerate(([], ["--no-exec"])):
        started = time.monotonic()
        done = run_isolated(
            [str(checkout.project), *mode], small_burn.home(tmp_path / str(number) / "cargo-home")
        )
        _one_line_refusal(done, "Cargo.toml: is larger than 2 MiB")
        assert time.monotonic() - started < 60


@pytest.mark.parametrize("name", ["Cargo.toml", "Cargo.lock", "featcheck.toml"])
@pytest.mark.parametrize("mode", ["default", "no-exec"])
def test_a_fifo_is_refused_without_waiting_on_it(
    tmp_path: Path, small_burn: SmallBurn, name: str, mode: str
) -> None:
    checkout = make_checkout(tmp_path, template=small_burn.template)
    fifo = checkout.project / name
    fifo.unlink(missing_ok=True)
    os.mkfifo(fifo)
    extra = ["--no-exec"] if mode == "no-exec" else []
    started = time.monotonic()
    # --timeout is the 300 s default: a reader waiting on the FIFO would hit the test's timeout.
    done = run_isolated(
        [str(checkout.project), *extra], small_burn.home(tmp_path / "cargo-home"), timeout=90
    )
    assert time.monotonic() - started < 60
    assert "Traceback" not in done.stderr
    _one_line_refusal(done, name, "not a")


def test_include_takes_only_toml_files(tmp_path: Path, small_burn: SmallBurn) -> None:
    checkout = make_checkout(tmp_path, template=small_burn.template)
    checkout.cargo_config('include = ["extra.txt"]\n')
    checkout.cargo_config("[build]\nrustc = 'evil'\n", name="extra.txt")
    done = run_isolated([str(checkout.project)], small_burn.home(tmp_path / "cargo-home"))
    _one_line_refusal(done, ".cargo/config.toml:1:", "only `.toml` files")


def test_an_included_file_outside_the_checkout_is_refused_unread(
    tmp_path: Path, small_burn: SmallBurn
) -> None:
    checkout = make_checkout(tmp_path, template=small_burn.template)
    outside = tmp_path / "elsewhere" / "secret.toml"
    outside.parent.mkdir()
    outside.write_text("root:S3CRET-HASH:19000:0:99999:7:::\n")
    checkout.cargo_config(f'include = ["{outside}"]\n')
    done = run_isolated([str(checkout.project)], small_burn.home(tmp_path / "cargo-home"))
    line = _one_line_refusal(done, ".cargo/config.toml:1:12: ", "outside the checkout")
    assert "S3CRET" not in line


def test_an_included_file_outside_the_project_is_never_quoted(
    tmp_path: Path, small_burn: SmallBurn
) -> None:
    """A file of the checkout outside the project that includes it (a repository's shared
    configuration, included by a crate's) is read, but never quoted."""
    checkout = make_checkout(tmp_path, nested=True, template=small_burn.template)
    (checkout.root / ".git").mkdir()  # the repository: the checkout's root
    outside = checkout.root / "elsewhere" / "secret.toml"
    outside.parent.mkdir()
    outside.write_text("root:S3CRET-HASH:19000:0:99999:7:::\n")
    config = checkout.project / ".cargo" / "config.toml"
    config.parent.mkdir()
    config.write_text('include = ["../../../elsewhere/secret.toml"]\n')
    done = run_isolated([str(checkout.project)], small_burn.home(tmp_path / "cargo-home"))
    line = _one_line_refusal(done, "secret.toml: ", "its text is not shown")
    assert "S3CRET" not in line and "root" not in line.split("secret.toml")[1]
    # Valid TOML whose values featcheck refuses (a rustflag, an include) is not quoted either.
    for text in ('[build]\nrustflags = ["@S3CRET-VALUE"]\n', 'include = ["S3CRET.txt"]\n'):
        outside.write_text(text)
        done = run_isolated(
            [str(checkout.project)], small_burn.home(tmp_path / "refused" / "cargo-home")
        )
        line = _one_line_refusal(done, "secret.toml: ", "its text is not shown")
        assert "S3CRET" not in line
    # Inside the project, the TOML error is shown as usual.
    inside = checkout.project / ".cargo" / "broken.toml"
    inside.write_text("x = = 1\n")
    config.write_text('include = ["broken.toml"]\n')
    done = run_isolated([str(checkout.project)], small_burn.home(tmp_path / "2" / "cargo-home"))
    _one_line_refusal(done, "broken.toml:1:", "invalid TOML")


@pytest.mark.parametrize(
    ("settings", "question"),
    [
        (None, "`rustup default`"),  # no settings file: rustup is asked for its default
        ('default_toolchain = "stable"\n', "`rustup which cargo --toolchain=stable`"),
    ],
)
def test_timeout_bounds_rustup_and_ends_what_it_started(
    tmp_path: Path, settings: str | None, question: str
) -> None:
    """A rustup that hangs (and leaves a child behind) gets --timeout, not a fixed minute,
    whether featcheck asks for the default toolchain or (both at once) for its binaries."""
    pid_file = tmp_path / "child.pid"
    bin_dir = _stand_in_rustup(tmp_path, f'sleep 300 &\necho $! >> "{pid_file}"\nwait\n')
    rustup_home = tmp_path / "rustup-home"
    rustup_home.mkdir()
    if settings is not None:
        (rustup_home / "settings.toml").write_text(settings)
    checkout = make_checkout(tmp_path / "c")
    env = {k: v for k, v in os.environ.items() if k != "RUSTUP_TOOLCHAIN"}
    env["PATH"] = f"{bin_dir}{os.pathsep}{env.get('PATH', '')}"
    env["RUSTUP_HOME"] = str(rustup_home)
    started = time.monotonic()
    done = _featcheck_under(env, str(checkout.project), "--timeout", "1")
    elapsed = time.monotonic() - started
    _one_line_refusal(done, f"{question} did not finish within 1 s")
    assert elapsed < 60
    children = [int(line) for line in pid_file.read_text().split()]
    assert children
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and any(_alive(child) for child in children):
        time.sleep(0.2)
    assert not any(_alive(child) for child in children), "rustup's child outlived the timeout"


# rustup's settings file, written as rustup writes it and in other TOML (a literal string, an
# escape), which featcheck's quick reader leaves to the TOML parser: `{dir}` is the checkout.
_RUSTUP_SETTINGS = {
    "default": 'default_toolchain = "pinned-1"\n',
    "override-as-rustup-writes-it": (
        'version = "12"\ndefault_toolchain = "missing-9"\nprofile = "default"\n\n'
        '[overrides]\n"/elsewhere" = "missing-9"\n"{dir}" = "pinned-1"\n'
    ),
    "override-in-other-toml": (
        "default_toolchain = 'missing-9'  # a literal string\n"
        '[overrides]\n"{dir}" = "pinned\\u002d1"\n'
    ),
}


@pytest.mark.parametrize("settings", _RUSTUP_SETTINGS.values(), ids=_RUSTUP_SETTINGS.keys())
def test_an_installed_toolchain_is_used_without_starting_rustup(
    tmp_path: Path, small_burn: SmallBurn, settings: str
) -> None:
    """The binaries of an installed toolchain are where rustup keeps them: featcheck takes them
    from RUSTUP_HOME/toolchains/NAME/bin and starts rustup for nothing (here it would fail),
    whether rustup's default or an override of the checkout's directory names it; the same
    toolchain answers for the copy a fix is confirmed in (the synthetic burn's Cargo.lock
    lacks the `rayon` the fix adds), which an override of the checkout's directory misses."""
    checkout, env, marker = _pinned_toolchain(tmp_path, small_burn, settings)
    done = _featcheck_under(env, str(checkout), "-v")
    assert done.returncode == 1, done.stdout + done.stderr
    assert f"--> Cargo.toml:{BURN_LINE}:{BURN_COLUMN}" in done.stdout
    assert not marker.exists(), "rustup was started"
    assert "`--fix` applies it" in done.stdout  # confirmed by cargo in a copy, as pinned here


@pytest.mark.parametrize("command", ["--diff", "--fix", "--new-since"])
def test_the_trees_made_from_the_checkout_get_its_toolchain(
    tmp_path: Path, small_burn: SmallBurn, command: str
) -> None:
    """An override of the checkout's directory names the only installed toolchain, and
    rustup's default is missing. The copy `--diff` and `--fix` resolve and audit, and the tree
    of the revision `--new-since` audits, lie elsewhere, which the override does not cover:
    they get the run's toolchain, and rustup is not started (here it fails, and took the
    fixes or the revision's findings with it)."""
    settings = _RUSTUP_SETTINGS["override-as-rustup-writes-it"]
    checkout, env, marker = _pinned_toolchain(tmp_path, small_burn, settings)
    git(checkout, "init", "-q")
    git(checkout, "add", "-A")
    git(checkout, "commit", "-q", "-m", "the template")
    arguments = [command, "HEAD"] if command == "--new-since" else [command]
    done = _featcheck_under(env, str(checkout), *arguments)
    assert not marker.exists(), "rustup was started"
    said = done.stdout + done.stderr
    if command == "--new-since":  # the finding is the revision's too: nothing new, exit 0
        assert done.returncode == 0, said
        assert "0 new, 1 also on HEAD" in done.stdout, said
    elif command == "--diff":
        assert done.returncode == 1, said
        assert "featcheck: 2 files would change" in done.stderr, said
    else:  # fixed, then the fixed checkout's audit: clean
        assert done.returncode == 0, said
        assert "featcheck: fixed 2 files" in done.stderr, said
        assert '"rayon"' in (checkout / "Cargo.toml").read_text()


def _pinned_toolchain(
    tmp_path: Path, small_burn: SmallBurn, settings: str
) -> tuple[Path, dict[str, str], Path]:
    """A checkout of the template over the synthetic burn, the environment of a rustup home
    whose `pinned-1` is this machine's toolchain and whose settings are `settings` (`{dir}`:
    the checkout), and the marker a stand-in rustup leaves when it is started."""
    sysroot = subprocess.run(
        ["rustc", "--print", "sysroot"], capture_output=True, text=True, check=True
    ).stdout.strip()
    marker = tmp_path / "rustup-ran"
    bin_dir = _stand_in_rustup(tmp_path, f'touch "{marker}"\nexit 1\n')
    rustup_home = tmp_path / "rustup-home"
    (rustup_home / "toolchains").mkdir(parents=True)
    (rustup_home / "toolchains" / "pinned-1").symlink_to(sysroot, target_is_directory=True)
    checkout = make_checkout(tmp_path / "c", template=small_burn.template)
    (rustup_home / "settings.toml").write_text(settings.replace("{dir}", str(checkout.project)))
    env = {k: v for k, v in os.environ.items() if k not in ("RUSTUP_TOOLCHAIN", "GITHUB_ACTIONS")}
    env.update(
        PATH=f"{bin_dir}{os.pathsep}{env.get('PATH', '')}",
        RUSTUP_HOME=str(rustup_home),
        CARGO_HOME=str(small_burn.home(tmp_path / "cargo-home")),
        NO_COLOR="1",
    )
    return checkout.project, env, marker


def test_a_default_toolchain_that_is_no_name_is_one_line(tmp_path: Path) -> None:
    """rustup's settings file is the user's, yet its default becomes a path below the rustup
    home and an argument: one that is not a plain toolchain name is refused in one line."""
    bin_dir = _stand_in_rustup(tmp_path, "exit 1\n")
    rustup_home = tmp_path / "rustup-home"
    rustup_home.mkdir()
    (rustup_home / "settings.toml").write_text('default_toolchain = "../elsewhere"\n')
    env = {k: v for k, v in os.environ.items() if k != "RUSTUP_TOOLCHAIN"}
    env.update(PATH=f"{bin_dir}{os.pathsep}{env.get('PATH', '')}", RUSTUP_HOME=str(rustup_home))
    done = _featcheck_under(env, str(make_checkout(tmp_path / "c").project))
    _one_line_refusal(done, "rustup's default toolchain: `../elsewhere` is not a toolchain name")


def _stand_in_rustup(tmp_path: Path, script: str) -> Path:
    """A bin directory whose `rustup` runs `script` and whose `cargo` is a rustup proxy (a link
    to it, as rustup installs them), so featcheck asks rustup first."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    rustup = bin_dir / "rustup"
    rustup.write_text("#!/bin/sh\n" + script)
    rustup.chmod(0o755)
    (bin_dir / "cargo").symlink_to(rustup)
    return bin_dir


def _featcheck_under(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    """featcheck with exactly `env` (a PATH with a stand-in rustup, a RUSTUP_HOME of the test's)."""
    return subprocess.run(
        [sys.executable, "-m", "featcheck", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=240,
        check=False,
    )


def _alive(pid: int) -> bool:
    """Running (a zombie waiting for its parent to reap it counts as ended)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"


def test_a_cargo_failure_is_one_line(
    tmp_path: Path, offline_cargo_for: Callable[..., Path]
) -> None:
    checkout = make_checkout(tmp_path)
    offline_cargo_for(checkout.project)
    manifest = checkout.project / "Cargo.toml"
    manifest.write_text(manifest.read_text().replace('version = "=0.22.1"', 'version = "=9.9.9"'))
    (checkout.project / "Cargo.lock").unlink()
    done = run_featcheck(str(checkout.project), "--offline")
    line = _one_line_refusal(done, "cargo metadata failed")
    assert "9.9.9" in line


@pytest.mark.parametrize("mode", ["default", "no-exec"])
def test_a_fifo_member_manifest_is_refused_before_cargo_waits_on_it(
    tmp_path: Path, small_burn: SmallBurn, mode: str
) -> None:
    checkout = make_checkout(tmp_path, template=small_burn.template)
    manifest = checkout.project / "Cargo.toml"
    manifest.write_text(manifest.read_text() + '\n[workspace]\nmembers = [".", "crates/*"]\n')
    (checkout.project / "crates" / "evil").mkdir(parents=True)
    os.mkfifo(checkout.project / "crates" / "evil" / "Cargo.toml")
    extra = ["--no-exec"] if mode == "no-exec" else []
    started = time.monotonic()
    done = run_isolated(
        [str(checkout.project), *extra], small_burn.home(tmp_path / "cargo-home"), timeout=90
    )
    assert time.monotonic() - started < 60
    assert "Traceback" not in done.stderr
    if mode == "default":
        _one_line_refusal(done, "crates/evil/Cargo.toml: is not a regular file")
    else:
        assert done.returncode == 2, done.stderr
