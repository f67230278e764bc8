"""A two-member workspace in a git repository made by the test, over a synthetic registry that
also holds a patch release of regex (1.11.1 and 1.11.2), for baselines and `--new-since`."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from cli_in_process import run_in_process
from support import cargo_environment
from synthetic_registry import REGISTRY_SPEC, write_cargo_home, write_registry

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

ROOT_MANIFEST = '[workspace]\nmembers = ["a", "b"]\nresolver = "2"\n'

TRIMMED_REGEX = 'regex = { version = "1.11", default-features = false, features = ["std"] }\n'
TRIMMED_MEMCHR = 'memchr = { version = "2.8", default-features = false }\n'
PLAIN_MEMCHR = 'memchr = "2.8"\n'


def registry_home(base: Path) -> Path:
    """A CARGO_HOME over the rule fixtures' registry plus regex 1.11.2."""
    spec = tomllib.loads(REGISTRY_SPEC.read_text())
    spec["regex"]["1.11.2"] = spec["regex"]["1.11.1"]
    return write_cargo_home(base / "cargo-home", write_registry(base / "registry", spec))


def environment(home: Path) -> dict[str, str]:
    return {**os.environ, **cargo_environment(home), "NO_COLOR": "1", "COLUMNS": "200"}


def member(name: str, dependencies: str, *, comments: int = 0) -> str:
    """A member's manifest; `comments` lines put above its dependencies move them down."""
    moved = "".join(f"# note {n}\n" for n in range(comments))
    return (
        f'[package]\nname = "{name}"\nversion = "0.1.0"\nedition = "2021"\n\n'
        f"{moved}[dependencies]\n{dependencies}"
    )


def write_member(repository: Path, name: str, manifest: str) -> None:
    (repository / name / "src").mkdir(parents=True, exist_ok=True)
    (repository / name / "src" / "main.rs").write_text("fn main() {}\n")
    (repository / name / "Cargo.toml").write_text(manifest)


def git(repository: Path, *arguments: str) -> str:
    done = subprocess.run(
        ["git", "-C", str(repository), *arguments],
        capture_output=True,
        text=True,
        check=True,
        env={
            **os.environ,
            "GIT_AUTHOR_NAME": "t",
            "GIT_AUTHOR_EMAIL": "t@example.com",
            "GIT_COMMITTER_NAME": "t",
            "GIT_COMMITTER_EMAIL": "t@example.com",
        },
    )
    return done.stdout


def new_repository(path: Path, home: Path, a: str, b: str) -> Path:
    """A repository at `path` with the workspace and its Cargo.lock (regex 1.11.1), committed."""
    path.mkdir()
    git(path, "init", "-q", "-b", "main")
    (path / "Cargo.toml").write_text(ROOT_MANIFEST)
    write_member(path, "a", a)
    write_member(path, "b", b)
    cargo(path, home, "generate-lockfile")
    lock_regex(path, "1.11.1")
    commit(path, "first")
    return path


def lock_regex(repository: Path, version: str) -> None:
    """Cargo.lock with regex at `version` (`cargo update --precise` does not move a directory
    source's lock; the registry has no checksums to keep)."""
    lock = repository / "Cargo.lock"
    text = lock.read_text()
    start = text.index('name = "regex"\nversion = "') + len('name = "regex"\nversion = "')
    end = text.index('"', start)
    lock.write_text(text[:start] + version + text[end:])


def cargo(repository: Path, home: Path, *arguments: str) -> None:
    subprocess.run(
        ["cargo", *arguments, "--offline", "--manifest-path", str(repository / "Cargo.toml")],
        capture_output=True,
        check=True,
        env=environment(home),
    )


def commit(repository: Path, message: str) -> None:
    git(repository, "add", "-A")
    git(repository, "commit", "-q", "-m", message)


def featcheck(repository: Path, home: Path, *arguments: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "featcheck", str(repository), *arguments],
        capture_output=True,
        text=True,
        check=False,
        env=environment(home),
    )


def featcheck_in_process(
    repository: Path, home: Path, *arguments: str
) -> subprocess.CompletedProcess[str]:
    """`featcheck` above without the process: the same command line in the same environment
    (cli_in_process.run_in_process gives NO_COLOR and COLUMNS=200), its streams captured."""
    return run_in_process(str(repository), *arguments, environment=cargo_environment(home))
