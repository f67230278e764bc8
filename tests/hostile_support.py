"""Hostile checkouts for tests: the template crate plus planted programs that leave markers.

Every planted program only appends to a marker file and exits non-zero with garbage on stdout,
so a run that used one also fails visibly; a test asserts that no marker was written.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cli_in_process import run_in_process
from support import CRATES, write_offline_cargo_home

TEMPLATE = CRATES / "pitb-exec-cpu"
BURN_LINE = 9
BURN_COLUMN = 31

SMALL_BURN: dict[str, Any] = {
    "burn": {
        "0.22.1": {
            "features": {
                "default": ["std", "burn-flex?/default"],
                "std": ["burn-flex?/std"],
                "flex": ["dep:burn-flex"],
                "autodiff": [],
                "optim": [],
                "rayon": ["burn-flex?/rayon"],
                "simd": ["burn-flex?/simd"],
            },
            "dependencies": {
                "burn-flex": {"version": "0.22.1", "optional": True, "default-features": False},
            },
        }
    },
    "burn-flex": {
        "0.22.1": {
            "features": {
                "default": ["std", "rayon", "simd"],
                "std": ["gemm/std"],
                "rayon": ["dep:rayon", "gemm/rayon"],
                "simd": [],
            },
            "dependencies": {
                "burn-backend": {"version": "0.22.1", "default-features": False},
                "gemm": {"version": "0.19", "default-features": False},
                "rayon": {"version": "1", "optional": True},
            },
        }
    },
    "gemm": {
        "0.19.0": {
            "features": {"default": ["std", "rayon"], "std": [], "rayon": ["dep:rayon"]},
            "dependencies": {"rayon": {"version": "1", "optional": True}},
        }
    },
    "burn-backend": {"0.22.1": {}},
    "rayon": {"1.11.0": {}},
}
"""burn's path to FC001 in five synthetic crates (synthetic_registry.py): the template's
manifest resolves over them as over the stub registry's 968 burn stubs, with the same finding
at the same place and the same edit (test_stub_registry.py), in a tenth of cargo's time (each
cargo call over the stubs reads every one of them: ~0.45 s); only what the fix adds to the
build differs. For tests of what featcheck runs, reads and writes in a checkout, where the
size of burn's graph plays no part."""


@dataclass(frozen=True)
class SmallBurn:
    """The `small_burn` fixture (conftest.py): the template over SMALL_BURN."""

    template: Path
    registry: Path
    cargo_home: Path
    """An offline CARGO_HOME over the synthetic burn (the `small_cargo` fixture's)."""

    def home(self, where: Path) -> Path:
        """An offline CARGO_HOME at `where` over the synthetic burn."""
        return write_offline_cargo_home(where, self.registry)


def small_template(base: Path) -> SmallBurn:
    """The template crate over SMALL_BURN, with a Cargo.lock cargo wrote for it, under `base`."""
    from synthetic_registry import write_registry

    registry = write_registry(base / "small-registry", SMALL_BURN)
    template = base / "small-template"
    (template / "src").mkdir(parents=True)
    shutil.copy(TEMPLATE / "Cargo.toml", template / "Cargo.toml")
    (template / "src" / "main.rs").write_text("fn main() {}\n")
    home = write_offline_cargo_home(base / "small-cargo-home", registry)
    subprocess.run(
        ["cargo", "generate-lockfile", "--offline"],
        cwd=template,
        env={**os.environ, "CARGO_HOME": str(home), "CARGO_TARGET_DIR": str(home / "target")},
        capture_output=True,
        check=True,
    )
    return SmallBurn(template, registry, home)


MARKER_SCRIPT = """\
#!/bin/sh
echo "$0 $*" >> "{log}"
echo "garbage from a planted program"
exit 97
"""

PRELOAD_SOURCE = """\
#include <stdio.h>
__attribute__((constructor)) static void planted(void) {{
    FILE *log = fopen("{log}", "a");
    if (log) {{ fputs("shared object loaded\\n", log); fclose(log); }}
}}
"""


def _rustup_manages_cargo() -> bool:
    cargo, rustup = shutil.which("cargo"), shutil.which("rustup")
    if cargo is None or rustup is None:
        return False
    return os.path.samefile(cargo, rustup) or Path(os.path.realpath(cargo)).stem == "rustup"


RUSTUP = _rustup_manages_cargo()
CC = shutil.which("cc") or shutil.which("gcc")


@dataclass(frozen=True)
class Checkout:
    """One hostile project: where it is, and where its planted programs leave markers."""

    root: Path
    """The repository (the directory that holds the attack)."""
    project: Path
    """The directory featcheck audits."""
    markers: Path

    def marker_script(self, relative: str) -> str:
        """Plant an executable marker script at `relative` inside the repository."""
        path = self.root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(MARKER_SCRIPT.format(log=self.markers / path.name))
        path.chmod(0o755)
        return relative

    def shared_object(self, relative: str) -> Path:
        """Build a shared library whose constructor writes a marker (needs a C compiler)."""
        assert CC is not None
        source = self.markers.parent / "planted.c"
        source.write_text(PRELOAD_SOURCE.format(log=self.markers / "shared-object"))
        library = self.root / relative
        library.parent.mkdir(parents=True, exist_ok=True)
        subprocess.run([CC, "-shared", "-fPIC", "-o", str(library), str(source)], check=True)
        return library

    def cargo_config(self, text: str, name: str = "config.toml") -> None:
        directory = self.root / ".cargo"
        directory.mkdir(exist_ok=True)
        (directory / name).write_text(textwrap.dedent(text))

    def written(self) -> list[str]:
        return sorted(p.name for p in self.markers.iterdir())


def make_checkout(base: Path, nested: bool = False, template: Path = TEMPLATE) -> Checkout:
    """The template crate in `base/repo` (or `base/repo/crates/app` when nested); `template`:
    its Cargo.toml and Cargo.lock (`SmallBurn.template` for the synthetic burn)."""
    root = base / "repo"
    project = root / "crates" / "app" if nested else root
    (project / "src").mkdir(parents=True)
    shutil.copy(template / "Cargo.toml", project / "Cargo.toml")
    shutil.copy(template / "Cargo.lock", project / "Cargo.lock")
    (project / "src" / "main.rs").write_text("fn main() {}\n")
    markers = base / "markers"
    markers.mkdir()
    return Checkout(root, project, markers)


def run_isolated(
    args: list[str], cargo_home: Path, timeout: float = 240
) -> subprocess.CompletedProcess[str]:
    """featcheck as a subprocess with its own offline CARGO_HOME (runs go in parallel)."""
    # featcheck's cache, where cargo keeps rustc's answers, starts empty: the first cargo
    # call asks rustc, as a planted program would need.
    cache = cargo_home / "featcheck-cache"
    return run_with(args, {"CARGO_HOME": str(cargo_home), "XDG_CACHE_HOME": str(cache)}, timeout)


def run_with(
    args: list[str], environment: dict[str, str], timeout: float = 240
) -> subprocess.CompletedProcess[str]:
    """featcheck as a subprocess, outside GitHub Actions, with `environment` over the test's."""
    env = {
        **os.environ,
        "RUSTUP_HOME": os.environ.get("RUSTUP_HOME") or str(Path.home() / ".rustup"),
        "NO_COLOR": "1",
        "COLUMNS": "200",
        **environment,
    }
    env.pop("GITHUB_ACTIONS", None)
    return subprocess.run(
        [sys.executable, "-m", "featcheck", *args],
        capture_output=True,
        text=True,
        check=False,
        env=env,
        timeout=timeout,
    )


def in_process_with(
    args: list[str], environment: dict[str, str]
) -> subprocess.CompletedProcess[str]:
    """`run_with` in this process (cli_in_process.run_in_process): the same command line with
    the same environment over the test's, every cargo and git it starts a real process. For
    tests whose subject is what featcheck starts or reads, not the Python process itself."""
    rustup = os.environ.get("RUSTUP_HOME") or str(Path.home() / ".rustup")
    given = {"RUSTUP_HOME": rustup, **environment, "GITHUB_ACTIONS": None}
    return run_in_process(*args, environment=given)


def plant_cargo_home_inside(checkout: Checkout, registry: Path) -> Path:
    """CARGO_HOME at the checkout's `.cargo`, as GitLab CI caches usually lay it out, committed
    with the pull request: its config.toml names a rustc wrapper, rustflags that write a file,
    and (with a C compiler) a library for every process cargo starts."""
    home = checkout.root / ".cargo"
    write_offline_cargo_home(home, registry)
    wrapper = checkout.marker_script("tools/wrapper")
    planted = f"""\
        [build]
        rustc-wrapper = "{checkout.root / wrapper}"
        rustflags = ["--print=cfg={checkout.markers / "rustflag-wrote-this"}"]
        """
    if CC is not None:
        library = checkout.shared_object("tools/planted.so")
        planted += f'[env]\nLD_PRELOAD = "{library}"\n'
    with (home / "config.toml").open("a") as stream:
        stream.write(textwrap.dedent(planted))
    return home
