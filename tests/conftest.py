"""Shared test setup: real cargo, offline, against the stub registry in fixtures/registry.

fixtures/registry is a cargo directory source whose crates carry the real manifests' features
and dependency declarations with empty sources, so `cargo tree`/`cargo metadata` resolve the
true feature graph without the network (see fixtures/README.md). `offline_cargo` points cargo
at all of it; `offline_cargo_for(workspace)` at a view holding only the stubs cargo can use for
that workspace (tests/stub_registry.py), which cargo loads in a fraction of the time.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from support import (
    WORKSPACES,
    RegistryViews,
    cargo_environment,
    write_offline_cargo_home,
)

if TYPE_CHECKING:
    from hostile_support import SmallBurn

CARGO_FIXTURES = frozenset(
    {"offline_cargo_home", "registry_views", "synthetic_cargo_home", "small_burn"}
)
"""Fixtures that give a test a cargo home over a stub registry: a test that uses one (directly
or through another fixture) runs cargo, and carries the `cargo` marker without saying so."""


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if CARGO_FIXTURES.intersection(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.cargo)


def pytest_configure(config: pytest.Config) -> None:
    """The tests run featcheck in a thousand subprocesses, as a user runs it: compile it once,
    as `pip install` does, so that none of them pays for Python's compiler again
    (PYTHONDONTWRITEBYTECODE, set on some machines, keeps each from saving what it compiled)."""
    import compileall

    import featcheck

    compileall.compile_dir(Path(featcheck.__file__).parent, quiet=1)


def _point_cargo_at(
    cargo_home: Path, monkeypatch: pytest.MonkeyPatch, *, cached_rustc: bool = False
) -> None:
    for name, value in cargo_environment(cargo_home, cached_rustc=cached_rustc).items():
        monkeypatch.setenv(name, value)


@pytest.fixture(autouse=True, scope="session")
def _outside_github_actions() -> Iterator[None]:
    """Run as on a developer's machine even when the suite itself runs inside GitHub Actions:
    featcheck picks its default format from GITHUB_ACTIONS, and its hints from PRE_COMMIT (a
    suite run from a hook). Tests that need these set them. The terminal size variables are
    cleared too (see below)."""
    saved = {
        k: os.environ.pop(k)
        for k in list(os.environ)
        if k.startswith("GITHUB_") or k == "PRE_COMMIT"
    }
    # pytest-xdist's workers set COLUMNS=80 and LINES=24, which featcheck's report honours: a
    # featcheck the tests start sees what a pipe gets (100 columns) unless the test says more.
    saved.update({k: os.environ.pop(k) for k in ("COLUMNS", "LINES") if k in os.environ})
    yield
    os.environ.update(saved)


@pytest.fixture(scope="session")
def offline_cargo_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One offline CARGO_HOME for the whole session."""
    if shutil.which("cargo") is None:
        pytest.skip("cargo is not installed")
    home = tmp_path_factory.mktemp("cargo-home")
    write_offline_cargo_home(home)
    return home


@pytest.fixture
def offline_cargo(offline_cargo_home: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Point every cargo that featcheck starts at the whole stub registry (offline)."""
    _point_cargo_at(offline_cargo_home, monkeypatch)
    return offline_cargo_home


@pytest.fixture(scope="session")
def registry_views(tmp_path_factory: pytest.TempPathFactory) -> RegistryViews:
    """The session's views of the stub registry (each xdist worker makes its own)."""
    if shutil.which("cargo") is None:
        pytest.skip("cargo is not installed")
    return RegistryViews(tmp_path_factory.mktemp("registry-views"))


@pytest.fixture
def offline_cargo_for(
    registry_views: RegistryViews, monkeypatch: pytest.MonkeyPatch
) -> Callable[..., Path]:
    """`offline_cargo_for(workspace, lock_only=False, cached_rustc=True, adding=())`: point
    every cargo that featcheck starts at the view of the stub registry that `workspace` needs
    (offline), keeping what rustc answered between cargo calls unless `cached_rustc` is false
    (see `cargo_environment`); its CARGO_HOME.

    Call it before the test removes or rewrites the workspace's Cargo.lock. A fix or edit
    that needs a crate the view lacks makes cargo fail loudly: name the stubs an edit adds in
    `adding` (`NAME-VERSION`), or use `offline_cargo` there."""

    def point(
        workspace: Path,
        *,
        lock_only: bool = False,
        cached_rustc: bool = True,
        adding: Iterable[str] = (),
    ) -> Path:
        home = registry_views.home(workspace, lock_only=lock_only, adding=adding)
        _point_cargo_at(home, monkeypatch, cached_rustc=cached_rustc)
        return home

    return point


@pytest.fixture(scope="session")
def small_burn(tmp_path_factory: pytest.TempPathFactory) -> SmallBurn:
    """The template crate over a synthetic burn of five crates (hostile_support.SMALL_BURN),
    written once: for tests of what featcheck runs, reads and writes in a checkout, where the
    size of burn's graph plays no part and cargo answers in a tenth of the time."""
    from hostile_support import small_template

    if shutil.which("cargo") is None:
        pytest.skip("cargo is not installed")
    return small_template(tmp_path_factory.mktemp("small-burn"))


@pytest.fixture
def small_cargo(small_burn: SmallBurn, monkeypatch: pytest.MonkeyPatch) -> SmallBurn:
    """Point every cargo that featcheck starts at the synthetic burn (offline), keeping what
    rustc answered between cargo calls; copy `.template` for the checkout."""
    _point_cargo_at(small_burn.cargo_home, monkeypatch, cached_rustc=True)
    return small_burn


@pytest.fixture(scope="session")
def synthetic_registry(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The rule fixtures' synthetic registry (fixtures/rules/registry.toml), written once: where
    cargo resolves them, and where their recorded answers say it lies (cargo_answers.py)."""
    from synthetic_registry import write_registry

    return write_registry(tmp_path_factory.mktemp("synthetic-registry"))


@pytest.fixture(scope="session")
def synthetic_cargo_home(
    tmp_path_factory: pytest.TempPathFactory, synthetic_registry: Path
) -> Path:
    """One CARGO_HOME over the rule fixtures' synthetic registry."""
    from synthetic_registry import write_cargo_home

    if shutil.which("cargo") is None:
        pytest.skip("cargo is not installed")
    return write_cargo_home(tmp_path_factory.mktemp("synthetic") / "cargo-home", synthetic_registry)


@pytest.fixture
def synthetic_cargo(synthetic_cargo_home: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Point every cargo that featcheck starts at the synthetic registry (offline)."""
    _point_cargo_at(synthetic_cargo_home, monkeypatch)
    return synthetic_cargo_home


@pytest.fixture
def workspace_copy(tmp_path: Path) -> Iterator[object]:
    """Copy a fixture workspace into a temporary directory (for tests that edit files)."""

    def copy(name: str, source: Path = WORKSPACES) -> Path:
        destination = tmp_path / name
        shutil.copytree(source / name, destination, ignore=shutil.ignore_patterns("target"))
        return destination

    yield copy


@pytest.fixture
def remembered_cargo() -> Iterator[object]:
    """Every audit this test runs in its own process (`run_in_process`, `audit_project`, the
    copy a fix is confirmed in) asks real cargo once per distinct question in the session and
    gets that answer back for an identical one (tests/cargo_memo.py). Not for tests of cargo's
    behaviour itself or of what featcheck runs: those ask cargo every time."""
    from cargo_memo import session_memo

    with session_memo().answering() as memo:
        yield memo


@pytest.fixture(autouse=True, scope="session")
def _user_cache_of_the_session(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """featcheck's user cache (`$XDG_CACHE_HOME/featcheck`) is the session's, empty at its start:
    the suite never writes into the home of whoever runs it, and no test passes on what an
    earlier run left there. A test that needs a cache of its own still sets one."""
    saved = os.environ.get("XDG_CACHE_HOME")
    os.environ["XDG_CACHE_HOME"] = str(tmp_path_factory.mktemp("user-cache"))
    yield
    if saved is None:
        del os.environ["XDG_CACHE_HOME"]
    else:
        os.environ["XDG_CACHE_HOME"] = saved
