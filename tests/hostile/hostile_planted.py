"""The planted checkout: attacks featcheck must ignore while it still audits (see
hostile_family.py), and the homes and cache prepared inside it for the columns that point
CARGO_HOME, XDG_CACHE_HOME or RUSTUP_HOME there (hostile_matrix.py)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

from hostile_family import Checkout, append_to_manifest, copy_template, revision_sha
from hostile_git import HOSTILE_REFS, hostile_history, victim_repository
from hostile_support import CC, PRELOAD_SOURCE
from hostile_world import World
from support import write_offline_cargo_home

PYTHON_MARKER = '''\
"""Planted by the checkout: runs only if Python imports modules from the checkout."""
import os as _os
import sys as _sys

with open({log!r}, "a") as _stream:
    _stream.write("imported " + __name__ + " from " + __file__ + "\\n")
'''

PYTHON_HANDOVER = """
# The real module then takes over, so that the program goes on unaware.
import importlib.util as _util
import sysconfig as _sysconfig

_spec = _util.spec_from_file_location(
    __name__, _os.path.join(_sysconfig.get_paths()["stdlib"], {file!r})
)
_real = _util.module_from_spec(_spec)
_sys.modules[__name__] = _real
_spec.loader.exec_module(_real)
"""

SHADOWED = ("hashlib", "shlex", "argparse", "tempfile")
"""Standard modules the Action's scripts, featcheck or pip import, shadowed at the root."""


def _python_plants(root: Path, world: World) -> None:
    def plant(relative: str, tail: str = "") -> None:
        log = str(world.markers / f"python-{relative.replace('/', '.')}")
        (root / relative).parent.mkdir(parents=True, exist_ok=True)
        (root / relative).write_text(PYTHON_MARKER.format(log=log) + tail)

    plant("featcheck/__init__.py")
    plant("featcheck/__main__.py", "print('garbage from a planted featcheck')\n_sys.exit(97)\n")
    for name in ("sitecustomize", "usercustomize"):
        plant(f"{name}.py")
    for name in SHADOWED:
        plant(f"{name}.py", PYTHON_HANDOVER.format(file=f"{name}.py"))


def _shared_object(world: World, library: Path) -> str:
    """A library whose constructor leaves a marker, or "" without a C compiler (the keys that
    name it then name a missing file, which cargo would still try to load)."""
    library.parent.mkdir(parents=True, exist_ok=True)
    if CC is None:
        return str(library)
    source = world.base / "planted.c"
    source.write_text(PRELOAD_SOURCE.format(log=world.markers / "shared-object"))
    subprocess.run([CC, "-shared", "-fPIC", "-o", str(library), str(source)], check=True)
    return str(library)


def _build_time_programs(root: Path, world: World) -> None:
    """A build script and a proc-macro path dependency: only a build would run them."""
    (root / "build.rs").write_text(
        f'fn main() {{ std::fs::write({json.dumps(str(world.markers / "build-rs"))}, b"ran")'
        ".unwrap(); }\n"
    )
    macros = root / "evil-macros"
    (macros / "src").mkdir(parents=True)
    (macros / "Cargo.toml").write_text(
        '[package]\nname = "evil-macros"\nversion = "0.1.0"\nedition = "2021"\n\n'
        "[lib]\nproc-macro = true\n"
    )
    log = json.dumps(str(world.markers / "proc-macro"))
    (macros / "src" / "lib.rs").write_text(
        "#[proc_macro]\npub fn planted(_: proc_macro::TokenStream) -> proc_macro::TokenStream {\n"
        f'    std::fs::write({log}, b"ran").unwrap();\n    proc_macro::TokenStream::new()\n}}\n'
    )
    append_to_manifest(root / "Cargo.toml", 'evil-macros = { path = "evil-macros" }\n')
    (root / "src" / "main.rs").write_text("evil_macros::planted!();\nfn main() {}\n")


PLANTED_CONFIG = """\
include = ["more.toml"]

[source.crates-io]
replace-with = "vendored"
[source.vendored]
directory = "{registry}"

[build]
rustc = "evil/rustc"
rustc-wrapper = "evil/rustc-wrapper"
rustc-workspace-wrapper = "evil/rustc-workspace-wrapper"
rustflags = ["--print=cfg={markers}/rustflag-print", "-Zcodegen-backend={library}", "--cfg", "planted"]
target-dir = "{victim}/target-dir"

[env]
LD_PRELOAD = {{ value = "evil/planted.so", relative = true, force = true }}
RUSTC_BOOTSTRAP = "1"

[target.{host}]
runner = "evil/runner"
linker = "evil/linker"

[alias]
metadata = ["{evil}/alias-metadata"]
tree = "{evil}/alias-tree"
featcheck = "{evil}/alias-featcheck"

[registry]
global-credential-providers = ["{evil}/credential-provider"]
[credential-alias]
planted = ["{evil}/credential-provider"]

[http]
proxy = "{host_address}"
[net]
git-fetch-with-cli = true
"""

MORE_CONFIG = """\
[env]
RUSTC_WRAPPER = { value = "evil/env-wrapper", relative = true, force = true }
"""

EVIL_PROGRAMS = (
    "rustc",
    "rustc-wrapper",
    "rustc-workspace-wrapper",
    "env-wrapper",
    "runner",
    "linker",
    "alias-metadata",
    "alias-tree",
    "alias-featcheck",
    "credential-provider",
)


PLANTED_ATTACKS = (
    "python-modules-at-the-root",
    "cargo-config-programs",
    "ld-preload",
    "rustflags-writing-files",
    "codegen-backend",
    "aliases",
    "credential-providers",
    "http-proxy",
    "target-dir-outside",
    "build-script",
    "proc-macro",
    "git-config-programs",
    "git-hooks",
    "git-alternates-outside",
    "git-link-and-directory",
    "git-tree-bomb",
    "git-blob-bomb",
    "git-promisor-fetch",
)


def planted(world: World, template: Path, registry: Path, host: str) -> Checkout:
    root = world.base / "family" / "planted"
    copy_template(root, template)
    _build_time_programs(root, world)
    _lock_path_dependencies(root, registry, world.base)
    _python_plants(root, world)
    evil = root / "evil"
    for name in EVIL_PROGRAMS:
        world.marker_script(evil / name)
    library = _shared_object(world, evil / "planted.so")
    # The stub registry again, by another name: the user's cargo home names it too, and cargo
    # refuses two sources of one directory.
    vendored = world.base / "vendored"
    vendored.symlink_to(registry, target_is_directory=True)
    (root / ".cargo").mkdir()
    (root / ".cargo" / "config.toml").write_text(
        PLANTED_CONFIG.format(
            registry=vendored,
            markers=world.markers,
            library=library,
            victim=world.victim,
            host=host,
            evil=evil,
            host_address=world.host.address,
        )
    )
    (root / ".cargo" / "more.toml").write_text(MORE_CONFIG)
    (root / "featcheck.toml").write_text('baseline = "featcheck-baseline.txt"\n')
    (root / "featcheck-baseline.txt").write_text("# accepted findings\n")
    (root / ".gitattributes").write_text("* filter=evil diff=evil merge=evil\n")
    _rustup_home(root / "rustup", world)
    hostile_history(root, world, victim_repository(world))
    return Checkout(
        "planted",
        root,
        ".",
        HOSTILE_REFS,
        "0" * 39 + "1",  # a base the partial clone lacks: git would fetch it from the promisor
        PLANTED_ATTACKS,
    )


def _lock_path_dependencies(root: Path, registry: Path, base: Path) -> None:
    """Cargo.lock with the proc-macro crate, written before anything is planted (--locked
    then passes): cargo, offline, from a cargo home of the test's own."""
    home = write_offline_cargo_home(base / "build-cargo-home", registry)
    subprocess.run(
        [
            "cargo",
            "metadata",
            "--format-version=1",
            "--offline",
            "--manifest-path",
            str(root / "Cargo.toml"),
        ],
        env={**os.environ, "CARGO_HOME": str(home), "CARGO_TARGET_DIR": str(home / "target")},
        capture_output=True,
        check=True,
    )


def _rustup_home(home: Path, world: World) -> None:
    """A rustup home whose default toolchain is the checkout's programs."""
    toolchain = "stable-x86_64-unknown-linux-gnu"
    for program in ("cargo", "rustc", "rustup"):
        world.marker_script(home / "toolchains" / toolchain / "bin" / program)
    (home / "settings.toml").write_text(f'version = "12"\ndefault_toolchain = "{toolchain}"\n')


def plant_cache(root: Path, template: Path, seed: Path, world: World, host: str) -> None:
    """A featcheck cache at `root/.cache` (for XDG_CACHE_HOME inside the checkout): a real one,
    its answers turned to another target, featcheck's own cargo home configured to run the
    checkout's programs, and the tree of HEAD (for --new-since) with a configuration that does."""
    cache = root / ".cache"
    shutil.copytree(seed, cache, symlinks=True)
    for path in cache.rglob("*.json"):
        path.write_text(path.read_text().replace(host, "wasm32-unknown-unknown"))
    wrapper = world.marker_script(root / "evil" / "cached-wrapper")
    planted = (
        f'[build]\nrustc-wrapper = "{wrapper}"\n[env]\nLD_PRELOAD = "{root}/evil/planted.so"\n'
    )
    home = cache / "featcheck" / "cargo-home"
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.toml").write_text(planted)
    tree = cache / "featcheck" / "revisions" / revision_sha(root, "HEAD")
    copy_template(tree, template)
    (tree / ".git").mkdir()
    (tree / ".cargo").mkdir()
    (tree / ".cargo" / "config.toml").write_text(planted)
