"""What the tests share beside their fixtures: the repository's paths, an offline cargo home over
the stub registry in fixtures/registry, and featcheck run as a user runs it (conftest.py holds
the fixtures built from these)."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterable
from pathlib import Path

from featcheck.boundary import TrustContext
from featcheck.workspace.model import (
    NORMAL,
    Declaration,
    Package,
    PackageRef,
    parse_feature_values,
)

REPO = Path(__file__).resolve().parent.parent


FIXTURES = REPO / "fixtures"


WORKSPACES = FIXTURES / "workspaces"


TREES = FIXTURES / "trees"


CRATES = REPO / "crates"


# What `rustc --print cfg` answers for x86_64-unknown-linux-gnu (tests that evaluate cfg tables).
LINUX_CFG = """debug_assertions
panic="unwind"
target_arch="x86_64"
target_endian="little"
target_env="gnu"
target_family="unix"
target_os="linux"
target_pointer_width="64"
unix
"""


def write_offline_cargo_home(cargo_home: Path, registry: Path = FIXTURES / "registry") -> Path:
    """A CARGO_HOME whose config replaces crates.io with the stub registry (or a view of it,
    see tests/stub_registry.py), offline."""
    cargo_home.mkdir(parents=True, exist_ok=True)
    (cargo_home / "config.toml").write_text(
        "[source.crates-io]\n"
        'replace-with = "featcheck-fixtures"\n'
        "[source.featcheck-fixtures]\n"
        f'directory = "{registry.as_posix()}"\n'
        "[net]\n"
        "offline = true\n"
    )
    return cargo_home


def cargo_environment(cargo_home: Path, *, cached_rustc: bool = True) -> dict[str, str]:
    """What cargo needs in the environment to use `cargo_home`: CARGO_HOME, RUSTUP_HOME (rustup
    finds its toolchains through it, default ~/.rustup; kept when a test changes HOME) and,
    with `cached_rustc`, CARGO_TARGET_DIR in the home, where cargo keeps what rustc answered
    (`.rustc_info.json`, as in a project's target/) so that the calls after the first start
    no `rustc -vV` or `--print cfg`: 0.06 s of each call. (By default featcheck gives its own
    cargo a target directory in its user cache; this one serves the cargo tests run themselves
    and `--trust-checkout`.) Tests of what cargo runs from a checkout (test_hostile.py) go
    without, with an empty user cache: there the first call asks rustc again."""
    environment = {
        "CARGO_HOME": str(cargo_home),
        "RUSTUP_HOME": os.environ.get("RUSTUP_HOME") or str(Path.home() / ".rustup"),
    }
    if cached_rustc:
        target = cargo_home / "target"
        target.mkdir(exist_ok=True)
        environment["CARGO_TARGET_DIR"] = str(target)
    return environment


_WHOLE_REGISTRY: frozenset[str] = frozenset({"*"})
"""The view key that stands for fixtures/registry itself."""


class RegistryViews:
    """Offline CARGO_HOMEs over views of the stub registry, each made once per test process."""

    def __init__(self, base: Path) -> None:
        self.base = base
        self._views: dict[frozenset[str], Path] = {}
        self._homes: dict[tuple[frozenset[str], int], Path] = {}

    def _packages(
        self, workspace: Path, lock_only: bool, adding: Iterable[str] = ()
    ) -> frozenset[str]:
        from stub_registry import find_lockfile, lock_packages, reachable_packages, write_view

        if find_lockfile(workspace) is None:
            # Nothing to read (the probe crate's lockfile is not committed): cargo writes a
            # lockfile from the whole registry, as it would on a user's machine.
            self._views[_WHOLE_REGISTRY] = FIXTURES / "registry"
            return _WHOLE_REGISTRY
        packages = lock_packages(workspace) | frozenset(adding)
        if not lock_only:
            packages = reachable_packages(packages)
        if packages not in self._views:
            self._views[packages] = write_view(self.base / f"view-{len(self._views)}", packages)
        return packages

    def registry(self, workspace: Path, *, lock_only: bool = False) -> Path:
        """The view for `workspace` (its Cargo.lock, read now), as a directory source for a
        CARGO_HOME the test writes itself (`write_offline_cargo_home(home, registry)`): with
        `lock_only`, exactly the lockfile's packages (cargo over the workspace as committed);
        otherwise also everything those can select (features turned on, fixes, a regenerated
        lockfile)."""
        return self._views[self._packages(workspace, lock_only)]

    def home(
        self,
        workspace: Path,
        *,
        lock_only: bool = False,
        slot: int = 0,
        adding: Iterable[str] = (),
    ) -> Path:
        """An offline CARGO_HOME over `registry(workspace, lock_only=...)`, with the stubs
        `adding` names (`NAME-VERSION`: what an edit of the test adds to the workspace) and,
        unless `lock_only`, all they can select too. Different `slot`s give different homes
        over the same view: cargo serializes the processes that share a CARGO_HOME."""
        packages = self._packages(workspace, lock_only, adding)
        key = (packages, slot)
        if key not in self._homes:
            home = self.base / f"home-{len(self._homes)}"
            self._homes[key] = write_offline_cargo_home(home, self._views[packages])
            # Every home's target directory (`cargo_environment`) is the same one: rustc is
            # asked once per target in this process, not once per home and target (cargo's
            # answer cache is keyed by the rustc and its arguments, never by the home).
            shared = self.base / "rustc-answers"
            shared.mkdir(exist_ok=True)
            (home / "target").symlink_to(shared, target_is_directory=True)
        return self._homes[key]


def run_featcheck(
    *args: str, cwd: Path | None = None, stdin: str | None = None, columns: int = 200
) -> subprocess.CompletedProcess[str]:
    """Run the CLI as a user would, in a subprocess (inherits the test's environment), with a
    report `columns` wide."""
    return subprocess.run(
        [sys.executable, "-m", "featcheck", *args],
        cwd=cwd,
        input=stdin,
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, "NO_COLOR": "1", "COLUMNS": str(columns)},
    )


def run_in_terminal(
    args: list[str], env: dict[str, str], *, columns: int | None = None, stderr_too: bool = True
) -> str:
    """Run featcheck with stdout (and stderr, unless not `stderr_too`) on a pseudo-terminal,
    `columns` wide when given; return all it drew, line ends as written."""
    import fcntl
    import pty
    import struct
    import termios

    leader, follower = pty.openpty()
    if columns is not None:
        fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 40, columns, 0, 0))
    process = subprocess.Popen(
        [sys.executable, "-m", "featcheck", *args],
        stdin=subprocess.DEVNULL,
        stdout=follower,
        stderr=follower if stderr_too else subprocess.DEVNULL,
        env=env,
    )
    os.close(follower)
    chunks: list[bytes] = []
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # EIO: the child closed the terminal
            break
        if not chunk:
            break
        chunks.append(chunk)
    process.wait(timeout=120)
    os.close(leader)
    return b"".join(chunks).decode("utf-8", errors="replace")


def trust_of(audited: Path, *, trust_checkout: bool = False) -> TrustContext:
    """The trust context an entry point computes for the path the user named, in the test's
    environment (the library's callers compute it once, as the command line does)."""
    return TrustContext.of(audited, os.environ, trust_checkout=trust_checkout)


def elsewhere(tmp_path: Path) -> TrustContext:
    """The context of a checkout beside `tmp_path`'s other files, for a test that starts a
    process of its own in `tmp_path` (the launcher runs nothing inside the checkout)."""
    checkout = tmp_path / "the-checkout"
    checkout.mkdir(exist_ok=True)
    return trust_of(checkout)


def workspace_member(
    name: str,
    features: dict[str, list[str]],
    *,
    required: Iterable[str] = (),
    optional: Iterable[str] = (),
) -> Package:
    """A member as either source reads it into the model (`{name}-id` its id): its
    `[features]` as written, and plain `[dependencies]` on the packages named."""
    declared = [(dep, False) for dep in required] + [(dep, True) for dep in optional]
    return Package(
        index=0,
        id=f"{name}-id",
        ref=PackageRef(name, "0.1.0", f"/ws/{name}", f"{name}-id"),
        manifest_path=Path(f"/ws/{name}/Cargo.toml"),
        target_kinds=frozenset({"lib"}),
        proc_macro=False,
        features={feature: parse_feature_values(values) for feature, values in features.items()},
        declarations=tuple(
            Declaration(dep, None, "*", NORMAL, None, is_optional, True, (), None)
            for dep, is_optional in declared
        ),
    )
