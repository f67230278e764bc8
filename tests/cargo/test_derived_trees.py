"""Trees featcheck makes from the checkout are the checkout: they get the run's trust context.

`--fix` and `--diff` resolve in a temporary copy, `--new-since` audits a revision's tree in the
cache, `probe --compare-fix` resolves the fix in a copy before it asks to build. Each of these
lies elsewhere than the checkout; a context computed from its own path would find a cargo home
inside the checkout (GitLab's usual `CARGO_HOME=$CI_PROJECT_DIR/.cargo`) "outside", trust it, and
cargo would obey its `config.toml`: `[env] LD_PRELOAD`, a rustc wrapper, rustflags that write.
featcheck runs in the test's process: what is tested is the cargo it starts, a real process.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest
from hostile_support import (
    Checkout,
    SmallBurn,
    in_process_with,
    make_checkout,
    plant_cargo_home_inside,
)
from support import trust_of

import featcheck.cargo.runner as runner_module
import featcheck.noexec.source as source_module
from featcheck.boundary import TrustContext

pytestmark = pytest.mark.cargo

_GIT_IDENTITY = {
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@example.com",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@example.com",
}


def _git(repository: Path, *arguments: str) -> None:
    subprocess.run(
        ["git", "-C", str(repository), *arguments],
        check=True,
        capture_output=True,
        env={**os.environ, **_GIT_IDENTITY},
    )


def _committed(checkout: Checkout) -> None:
    _git(checkout.root, "init", "-q", "-b", "main")
    _git(checkout.root, "add", "-A")
    _git(checkout.root, "commit", "-q", "-m", "the pull request")


@dataclass
class Hostile:
    """One checkout with a cargo home planted inside, built once for the module (a C compiler
    and three git processes) and kept as built: each run gets it back as built, at the same
    path (the planted programs name their marker directory and each other by absolute path),
    with no marker and an empty user cache of its own, as a checkout made for it would be."""

    checkout: Checkout
    pristine: Path
    caches: Path
    made: int = 0

    def fresh(self) -> tuple[Checkout, dict[str, str]]:
        shutil.rmtree(self.checkout.root)
        shutil.copytree(self.pristine, self.checkout.root, symlinks=True)
        for marker in self.checkout.markers.iterdir():
            marker.unlink()
        self.made += 1
        cache = self.caches / f"user-cache-{self.made}"
        home = self.checkout.root / ".cargo"
        return self.checkout, {"CARGO_HOME": str(home), "XDG_CACHE_HOME": str(cache)}


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory, small_burn: SmallBurn) -> Hostile:
    base = tmp_path_factory.mktemp("derived")
    checkout = make_checkout(base, template=small_burn.template)
    plant_cargo_home_inside(checkout, small_burn.registry)
    _committed(checkout)
    pristine = base / "pristine"
    shutil.copytree(checkout.root, pristine, symlinks=True)
    return Hostile(checkout, pristine, base)


@pytest.fixture
def hostile(built: Hostile) -> tuple[Checkout, dict[str, str]]:
    return built.fresh()


DERIVED = {
    "diff": ["--diff"],
    "fix": ["--fix"],
    "new-since": ["--new-since", "HEAD"],
    "new-since-no-exec": ["--new-since", "HEAD", "--no-exec"],
}
"""The command lines that make a tree from the checkout and audit it (the probe's below)."""


@dataclass(frozen=True)
class DerivedRun:
    done: subprocess.CompletedProcess[str]
    written: list[str]
    """The markers the planted programs left during the run."""
    original: TrustContext
    """The context computed for the path the user named, in the run's environment."""
    seen: list[tuple[str, Path, TrustContext]]
    """Every (source kind, workdir, context) a cargo runner or files source was made with."""


@pytest.fixture(scope="module")
def derived_runs(built: Hostile) -> dict[str, DerivedRun]:
    """Each command line of DERIVED run once, in this process, on the checkout as built, with
    every runner's and source's context recorded (the two tests below assert different things
    of the same run: that nothing planted ran, and which context each tree got)."""
    runs = {}
    for name, arguments in DERIVED.items():
        checkout, environment = built.fresh()
        with pytest.MonkeyPatch.context() as patch:
            for variable, value in environment.items():
                patch.setenv(variable, value)
            original = trust_of(checkout.project)
            seen = _recorded_contexts(patch)
            done = in_process_with(
                [str(checkout.project), *arguments, "--format", "json"], environment
            )
        runs[name] = DerivedRun(done, checkout.written(), original, seen)
    return runs


@pytest.mark.parametrize("arguments", [*DERIVED, "probe-compare-fix"])
def test_a_tree_made_from_the_checkout_does_not_obey_its_cargo_home(
    derived_runs: dict[str, DerivedRun], built: Hostile, arguments: str
) -> None:
    if arguments == "probe-compare-fix":
        checkout, environment = built.fresh()
        # Offline: the probe resolves its own crate in featcheck's cache, which would fetch the
        # crates.io index; the derived tree, the copy the fix is resolved in, comes before it.
        done = in_process_with(
            ["probe", "--compare-fix", "--offline", str(checkout.project)], environment
        )
        written = checkout.written()
    else:
        done, written = derived_runs[arguments].done, derived_runs[arguments].written
    assert written == [], done.stderr
    assert "Traceback" not in done.stderr
    assert done.returncode in (0, 1, 2), done.stderr


def _recorded_contexts(
    monkeypatch: pytest.MonkeyPatch,
) -> list[tuple[str, Path, TrustContext]]:
    """Every (source kind, workdir, context) a cargo runner or files source is made with."""
    seen: list[tuple[str, Path, TrustContext]] = []
    for module, name in ((runner_module, "CargoRunner"), (source_module, "FileSource")):
        original = getattr(module, name).__init__

        def recording(
            self: object, workdir: Path, *args: object, _original=original, _name=name, **kw: object
        ) -> None:
            trust = kw["trust"] if "trust" in kw else args[-1]
            assert isinstance(trust, TrustContext)
            seen.append((_name, Path(workdir), trust))
            _original(self, workdir, *args, **kw)

        monkeypatch.setattr(getattr(module, name), "__init__", recording)
    return seen


@pytest.mark.parametrize("arguments", list(DERIVED))
def test_every_derived_tree_gets_the_runs_context(
    derived_runs: dict[str, DerivedRun], arguments: str
) -> None:
    """The class, not the instance: whatever tree a runner or source is made for, its
    context is the one computed from the path the user named, derived for that tree."""
    ran = derived_runs[arguments]
    original, seen, done = ran.original, ran.seen, ran.done
    assert original.untrusted_cargo_home is not None  # the attack's premise
    # --no-exec reads no package of an untrusted cargo home: its audit is incomplete (exit 2).
    assert done.returncode in (0, 1) or "incomplete audit" in done.stderr, done.stderr
    trees = {trust.root for _, _, trust in seen}
    assert len(trees) >= 2, seen  # the checkout and at least one tree made from it
    for _, workdir, trust in seen:
        assert trust.checkout == original.checkout
        assert trust.untrusted_cargo_home == original.untrusted_cargo_home
        assert trust.cargo_home is None
        assert trust.cache == original.cache
        assert workdir.resolve().is_relative_to(trust.root)
    assert ran.written == []


def test_a_context_handed_to_a_tree_it_was_not_derived_for_is_a_bug(tmp_path: Path) -> None:
    """A runner for a copy with the checkout's context underived would read the copy as if
    it were outside the checkout: refused before anything runs."""
    checkout = tmp_path / "checkout"
    copy = tmp_path / "copy"
    checkout.mkdir()
    copy.mkdir()
    with pytest.raises(RuntimeError, match="derive the context"):
        runner_module.CargoRunner(copy, trust=trust_of(checkout))
    derived = trust_of(checkout).derive(copy)
    assert runner_module.CargoRunner(copy, trust=derived).checkout == copy.resolve()


def test_derive_keeps_the_checkouts_places_and_drops_those_inside_the_tree(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    checkout, copy = tmp_path / "checkout", tmp_path / "copy"
    (checkout / ".cargo").mkdir(parents=True)
    copy.mkdir()
    monkeypatch.setenv("CARGO_HOME", str(checkout / ".cargo"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(copy / "cache"))
    original = trust_of(checkout)
    assert (original.cargo_home, original.untrusted_cargo_home) == (None, checkout / ".cargo")
    assert original.cache == copy / "cache" / "featcheck"  # outside the checkout
    derived = original.derive(copy)
    # The cargo home stays the checkout's; a cache inside the tree is no longer trusted.
    assert (derived.cargo_home, derived.untrusted_cargo_home) == (None, checkout / ".cargo")
    assert derived.cache is None
    assert (derived.checkout, derived.root) == (original.checkout, copy.resolve())


def test_the_json_report_of_a_fix_in_a_hostile_checkout_is_the_plain_one(
    hostile: tuple[Checkout, dict[str, str]],
) -> None:
    """--diff still works with the cargo home left unobeyed: the fix is resolved and shown."""
    checkout, environment = hostile
    done = in_process_with([str(checkout.project), "--format", "json"], environment)
    assert done.returncode == 1, done.stderr
    findings = json.loads(done.stdout)["findings"]
    assert [f["code"] for f in findings] == ["FC001"]
    assert checkout.written() == []
