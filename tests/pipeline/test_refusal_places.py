"""Where cargo refuses a workspace, the one line names the file, line and column that cause
it, in both modes: cargo names a package or the member it was loading ("failed to load
manifest for workspace member `app`" about a path dependency's line), and rarely a place."""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_in_process import run_in_process

pytestmark = pytest.mark.cargo

HEADER = '[package]\nname = "{}"\nversion = "0.1.0"\nedition = "2021"\n\n'
LOCK = (
    'version = 4\n\n[[package]]\nname = "app"\nversion = "0.1.0"\ndependencies = ["lib"]\n\n'
    '[[package]]\nname = "lib"\nversion = "0.1.0"\n'
)

# (what is wrong, the file and the text that is wrong in it, app's and lib's manifest after
# their [package] table, the root's extra text, the lockfile)
SHAPES = {
    "member-toml": ("app/Cargo.toml", "[dev-dependencies\n", "[dev-dependencies\n", "", "", LOCK),
    "inherits-nothing": (
        "lib/Cargo.toml",
        "memchr = { workspace = true }",
        "",
        "memchr = { workspace = true }\n",
        "",
        LOCK,
    ),
    "dep-names-nothing": ("app/Cargo.toml", '"dep:nosuch"', 'x = ["dep:nosuch"]\n', "", "", LOCK),
    "no-such-package": ("app/Cargo.toml", 'memchrr = "2"', 'memchrr = "2"\n', "", "", LOCK),
    "cfg-two-at-once": (
        "app/Cargo.toml",
        "[target.'cfg(unix, windows)'.dependencies]",
        "[target.'cfg(unix, windows)'.dependencies]\nmemchr = \"2\"\n",
        "",
        "",
        LOCK,
    ),
    "weak-on-required": ("app/Cargo.toml", '"lib?/std"', 'x = ["lib?/std"]\n', "", "", LOCK),
    "lock-version": ("Cargo.lock", "version = 99", "", "", "", LOCK.replace("= 4", "= 99")),
    "lock-toml": ("Cargo.lock", 'name = "lib', "", "", "", LOCK.replace('"lib"\nv', '"lib\nv')),
}


def _workspace(root: Path, shape: str) -> Path:
    _, _, app, lib, extra, lock = SHAPES[shape]
    (root / "Cargo.toml").write_text(
        '[workspace]\nmembers = ["app", "lib"]\nresolver = "2"\n' + extra
    )
    # A value naming a dependency goes in `[features]`, a line of its own under app's only
    # `[dependencies]`, anything else (a table header) after them.
    app_text = HEADER.format("app") + '[dependencies]\nlib = { path = "../lib" }\n'
    if "dep:" in app or "?/" in app:
        app_text += "\n[features]\n" + app
    elif "=" in app:
        app_text += app
    else:
        app_text += "\n" + app
    lib_text = HEADER.format("lib") + "[features]\nstd = []\n\n"
    lib_text += "[dependencies]\n" + lib if lib else ""
    for member, source, text in (("app", "main.rs", app_text), ("lib", "lib.rs", lib_text)):
        (root / member / "src").mkdir(parents=True)
        (root / member / "src" / source).write_text("")
        (root / member / "Cargo.toml").write_text(text)
    (root / "Cargo.lock").write_text(lock)
    return root


@pytest.mark.parametrize("mode", [(), ("--no-exec",)], ids=["cargo", "no-exec"])
@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_a_refused_workspace_is_one_line_at_the_place_that_causes_it(
    shape: str, mode: tuple[str, ...], tmp_path: Path
) -> None:
    if shape == "no-such-package" and mode:
        pytest.skip("--no-exec reads Cargo.lock, which lists no such package: it says so")
    if shape == "lock-version" and not mode:
        pytest.skip("cargo's own words: its version reads lock files up to its own")
    root = _workspace(tmp_path, shape)
    relative, wrong = SHAPES[shape][:2]
    file = root / relative
    first = wrong.split("\n")[0]
    (line,) = [n for n, t in enumerate(file.read_text().splitlines(), 1) if first in t]
    done = run_in_process(str(root), *mode, environment={"CARGO_NET_OFFLINE": "true"})
    assert (done.returncode, done.stdout, done.stderr.count("\n")) == (2, "", 1), done.stderr
    assert done.stderr.startswith(f"featcheck: error: {file}:{line}:"), done.stderr
    assert "Traceback" not in done.stderr
