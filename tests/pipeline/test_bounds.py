"""featcheck's own limits on what a checkout can make it do: numbers and names of any size give
one line naming the file and exit 2 (never a traceback), in the default mode and `--no-exec`;
nesting and chains of any depth reach no recursion limit and take seconds, not minutes; and
`--timeout` bounds featcheck's own work, all of a `--no-exec` audit's reading included.
"""

from __future__ import annotations

import shutil
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from hostile_support import TEMPLATE, run_isolated
from support import (
    RegistryViews,
    run_featcheck,
    trust_of,
    workspace_member,
    write_offline_cargo_home,
)

HUGE = "1" * 5000
"""Past Python's int-string limit (4,300 digits) and cargo's u64."""


def _package_version(project: Path) -> str:
    manifest = project / "Cargo.toml"
    manifest.write_text(
        manifest.read_text().replace('version = "0.1.0"', f'version = "0.1.{HUGE}"')
    )
    return "Cargo.toml"


def _requirement(project: Path) -> str:
    manifest = project / "Cargo.toml"
    manifest.write_text(manifest.read_text().replace('"=0.22.1"', f'"=0.22.{HUGE}"'))
    return "Cargo.toml"


def _locked_version(project: Path) -> str:
    lock = project / "Cargo.lock"
    text = lock.read_text()
    lock.write_text(
        text.replace(
            'name = "burn-flex"\nversion = "0.22.1"', f'name = "burn-flex"\nversion = "0.22.{HUGE}"'
        )
    )
    return "Cargo.lock"


def _lockfile_format(project: Path) -> str:
    lock = project / "Cargo.lock"
    lock.write_text(lock.read_text().replace("version = 4", f"version = {HUGE}", 1))
    return "Cargo.lock"


def _rule_versions(project: Path) -> str:
    (project / "featcheck.toml").write_text(
        '[[rule]]\ncode = "ACME001"\nname = "regex-without-perf"\nseverity = "error"\n'
        f'summary = "s"\ncrates = [{{ name = "regex", versions = ">=1.{HUGE}" }}]\n'
        'feature = "perf"\n\n[rule.doc]\nwhy = "w"\n'
    )
    return "featcheck.toml"


@pytest.fixture(scope="module")
def cargo_home(registry_views: RegistryViews, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An offline CARGO_HOME over the template's stubs, with the registry unpacked for --no-exec."""
    registry = registry_views.registry(TEMPLATE)
    home = write_offline_cargo_home(tmp_path_factory.mktemp("bounds") / "cargo-home", registry)
    unpacked = home / "registry" / "src" / "index.crates.io-1949cf8c6b5b557f"
    unpacked.mkdir(parents=True)
    for package in registry.iterdir():
        (unpacked / package.name).symlink_to(package.resolve(), target_is_directory=True)
    return home


def _project(base: Path) -> Path:
    project = base / "project"
    shutil.copytree(TEMPLATE, project, ignore=shutil.ignore_patterns("target"))
    return project


def _one_line(done: subprocess.CompletedProcess[str], file: str) -> str:
    assert done.returncode == 2, done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    [line] = done.stderr.splitlines()
    assert line.startswith("featcheck: error: ") and file in line, line
    assert len(line) < 600, line  # a number of any size is shown cut
    return line


@pytest.mark.parametrize("mode", [[], ["--no-exec"]], ids=["default", "no-exec"])
@pytest.mark.parametrize(
    "plant",
    [_package_version, _requirement, _locked_version, _lockfile_format, _rule_versions],
)
def test_a_number_of_any_size_is_one_line_naming_the_file(
    tmp_path: Path, cargo_home: Path, plant: Callable[[Path], str], mode: list[str]
) -> None:
    project = _project(tmp_path)
    file = plant(project)
    _one_line(run_isolated([str(project), *mode], cargo_home), file)


def test_a_registry_name_too_long_for_a_file_is_one_line_naming_the_lockfile(
    tmp_path: Path, cargo_home: Path
) -> None:
    project = _project(tmp_path)
    lock = project / "Cargo.lock"
    lock.write_text(lock.read_text().replace('"burn-flex"', '"' + "b" * 300 + '"'))
    line = _one_line(run_isolated([str(project), "--no-exec"], cargo_home), "Cargo.lock")
    assert "do not fit in a file name" in line
    # cargo itself drops an entry it cannot use and resolves again: the audit stands.
    done = run_isolated([str(project)], cargo_home)
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr


def test_a_saved_tree_with_an_enormous_depth_is_one_line(tmp_path: Path) -> None:
    tree = tmp_path / "tree.txt"
    tree.write_text(f"0app v0.1.0 (/x) [default]\n{HUGE}burn-flex v0.22.1 [std]\n")
    _one_line(run_featcheck("--tree", str(tree)), "tree.txt:2")


# --- each-feature over a long chain of features, and the budget of featcheck's own work -------


def _chain(base: Path, count: int, *, burn_at: int | None = None) -> Path:
    """A crate whose features form a chain f0 -> f1 -> ... (the template's burn line when
    `burn_at` is given, whose feature also asks burn for rayon and simd), each-feature on."""
    project = base / f"chain-{count}"
    if burn_at is None:
        (project / "src").mkdir(parents=True)
        (project / "src" / "lib.rs").write_text("")
        (project / "Cargo.toml").write_text(
            '[package]\nname = "chain"\nversion = "0.1.0"\nedition = "2021"\n'
        )
        (project / "Cargo.lock").write_text(
            'version = 4\n\n[[package]]\nname = "chain"\nversion = "0.1.0"\n'
        )
    else:
        shutil.copytree(TEMPLATE, project, ignore=shutil.ignore_patterns("target"))
    features = [f'f{i} = ["f{i + 1}"]' for i in range(count - 1)] + [f"f{count - 1} = []"]
    if burn_at is not None:
        features[burn_at] = f'f{burn_at} = ["f{burn_at + 1}", "burn/rayon", "burn/simd"]'
    with (project / "Cargo.toml").open("a") as manifest:
        manifest.write("\n[features]\n" + "\n".join(features) + "\n")
    (project / "featcheck.toml").write_text("each-feature = true\n")
    return project


def test_each_feature_over_a_chain_resolves_each_distinct_build_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from featcheck.featureset import AuditOptions
    from featcheck.pipeline import audit_project
    from featcheck.resolution.session import TargetSession

    resolved: list[object] = []
    graph = TargetSession.graph

    def counting(self: TargetSession, *args: object, **kwargs: object) -> object:
        resolved.append(args)
        return graph(self, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(TargetSession, "graph", counting)
    monkeypatch.setenv("CARGO_HOME", str(tmp_path / "no-cargo-home"))
    chain = _chain(tmp_path, 2000)
    result = audit_project(chain, AuditOptions(no_exec=True), trust_of(chain))
    assert len(result.configurations["chain"]) == 2002  # defaults, none, each feature alone
    # Every feature reaches nothing outside the crate: the build with none stands for them all.
    assert len(resolved) == 2


def test_each_feature_classes_keep_every_verdict(tmp_path: Path, cargo_home: Path) -> None:
    """Features before f5 reach burn's rayon through the chain, the others do not: one finding,
    in exactly the builds without it."""
    project = _chain(tmp_path, 12, burn_at=5)
    done = run_isolated([str(project), "--format", "json"], cargo_home)
    assert done.returncode == 1, done.stderr
    import json

    [finding] = json.loads(done.stdout)["findings"]
    built = {
        tuple(c["features"]) if c["no_default_features"] else "default"
        for c in finding["configurations"]
    }
    assert built == {"default", (), *((f"f{i}",) for i in range(6, 12))}


def test_the_timeout_bounds_featchecks_own_work(tmp_path: Path, cargo_home: Path) -> None:
    project = _chain(tmp_path, 3000)
    done = run_isolated([str(project), "--no-exec", "--timeout", "0.05"], cargo_home)
    line = _one_line(done, "did not finish within 0.05 s (--timeout)")
    # --no-exec's budget runs from its start: it ends reading the files or planning the builds.
    assert any(step in line for step in ("reading the checkout", "configurations")), line


def test_the_deadline_stops_the_plan() -> None:
    from featcheck.deadline import Deadline
    from featcheck.errors import FeatcheckError
    from featcheck.matrix import plan_configurations

    now = [0.0]
    deadline = Deadline(10, clock=lambda: now[0])
    member = workspace_member("m", {"a": [], "b": []})
    plan_configurations([member], [], each=True, deadline=deadline)  # within the budget
    now[0] = 11.0
    with pytest.raises(FeatcheckError, match=r"planning the build configurations did not finish"):
        plan_configurations([member], [], each=True, deadline=deadline)


def test_the_deadline_stops_reading_the_members_settings(tmp_path: Path) -> None:
    """Many members' manifests are read after cargo's answer: within the budget too."""
    from featcheck.deadline import Deadline
    from featcheck.errors import FeatcheckError
    from featcheck.policy.load import load_config

    members = {}
    for name in ("a", "b"):
        manifest = tmp_path / name / "Cargo.toml"
        manifest.parent.mkdir()
        manifest.write_text(f'[package]\nname = "{name}"\nversion = "0.1.0"\n')
        members[name] = manifest
    spent = Deadline(10, clock=iter([0.0, 11.0, 11.0]).__next__)
    with pytest.raises(FeatcheckError, match=r"^reading the members' settings did not finish"):
        load_config(tmp_path, members, deadline=spent)


# --- nesting and chains of any depth: no recursion limit is the checkout's to reach ----------

MODES = pytest.mark.parametrize("mode", [[], ["--no-exec"]], ids=["default", "no-exec"])


def _deep_cfg(depth: int) -> str:
    """`cfg(not(not(...unix...)))`, `depth` times `not`: true on unix when `depth` is even."""
    return "cfg(" + "not(" * depth + "unix" + ")" * depth + ")"


@MODES
def test_a_cfg_nested_thousands_deep_is_evaluated(
    tmp_path: Path, cargo_home: Path, mode: list[str]
) -> None:
    """cargo takes `not(...)` 10,000 deep (1.95; its stack overflows past about 20,000)."""
    project = _project(tmp_path)
    with (project / "Cargo.toml").open("a") as manifest:
        manifest.write(f"\n[target.'{_deep_cfg(3000)}'.dependencies]\ncfg-if = \"1\"\n")
    lock = project / "Cargo.lock"
    lock.write_text(lock.read_text().replace(' "burn",\n]', ' "burn",\n "cfg-if",\n]', 1))
    done = run_isolated([str(project), *mode, "--format", "json"], cargo_home)
    assert done.returncode == 1, done.stderr
    import json

    assert [f["code"] for f in json.loads(done.stdout)["findings"]] == ["FC001"]


@MODES
def test_a_configuration_key_too_long_to_pass_on_is_one_line(
    tmp_path: Path, cargo_home: Path, mode: list[str]
) -> None:
    project = _project(tmp_path)
    (project / ".cargo").mkdir()
    (project / ".cargo" / "config.toml").write_text(
        f"[target.'{_deep_cfg(3000)}']\nrustflags = [\"--cfg=deep\"]\n"
    )
    line = _one_line(run_isolated([str(project), *mode], cargo_home), ".cargo/config.toml:2:")
    assert "cannot pass this setting to cargo" in line


@MODES
def test_a_chain_of_a_thousand_path_dependencies_is_read_in_seconds(
    tmp_path: Path, cargo_home: Path, mode: list[str]
) -> None:
    """--no-exec looked for a cycle from every package along every path: minutes for this."""
    project = _project(tmp_path)
    count = 1000
    with (project / "Cargo.toml").open("a") as manifest:
        manifest.write('\n[dependencies.p0]\npath = "chain/p0"\n')
    lock = project / "Cargo.lock"
    entries = "".join(
        f'\n[[package]]\nname = "p{i}"\nversion = "0.1.0"\n'
        + (f'dependencies = [\n "p{i + 1}",\n]\n' if i + 1 < count else "")
        for i in range(count)
    )
    text = lock.read_text().replace(' "burn",\n]', ' "burn",\n "p0",\n]', 1)
    lock.write_text(text + entries)
    for i in range(count):
        package = project / "chain" / f"p{i}"
        (package / "src").mkdir(parents=True)
        (package / "src" / "lib.rs").write_text("")
        following = f'\n[dependencies.p{i + 1}]\npath = "../p{i + 1}"\n' if i + 1 < count else ""
        (package / "Cargo.toml").write_text(
            f'[package]\nname = "p{i}"\nversion = "0.1.0"\nedition = "2021"\n{following}'
        )
    started = time.monotonic()
    done = run_isolated([str(project), *mode], cargo_home, timeout=120)
    assert done.returncode == 1, done.stderr
    assert time.monotonic() - started < 30


def test_a_member_pattern_thousands_of_directories_deep_is_one_line(
    tmp_path: Path, cargo_home: Path
) -> None:
    project = _project(tmp_path)
    with (project / "Cargo.toml").open("a") as manifest:
        manifest.write(f'\n[workspace]\nmembers = ["{"m*/" * 3000}x"]\n')
    line = _one_line(run_isolated([str(project), "--no-exec"], cargo_home), "Cargo.toml: ")
    assert "directories down" in line


# --- the budget in --no-exec: reading the checkout is featcheck's own work too -----------------


def _large_lockfile(project: Path, count: int, *, layout: str) -> None:
    """The template's lockfile with `count` more registry packages, each depending on the next
    two. `cargo`: in the layout cargo writes (featcheck's line reader); `general`: one comment
    after a value sends it to the general TOML parsers, and a key given twice at its very end
    makes the second one (which says where) read it all too."""
    source = "registry+https://github.com/rust-lang/crates.io-index"
    entries = [
        f'\n[[package]]\nname = "p{i}"\nversion = "1.0.0"\nsource = "{source}"\n'
        f'checksum = "{"0" * 64}"\n'
        + "".join(f'dependencies = [\n "p{j}",\n]\n' for j in (i + 1,) if j < count)
        for i in range(count)
    ]
    lock = project / "Cargo.lock"
    text = lock.read_text() + "".join(entries)
    if layout == "general":
        text = text.replace("version = 4\n", "version = 4 # written by hand\n", 1)
        text += '\n[[package]]\nname = "q"\nversion = "1.0.0"\nversion = "2.0.0"\n'
    lock.write_text(text)


@pytest.mark.parametrize("layout", ["cargo", "general"])
def test_the_timeout_bounds_reading_a_large_lockfile(
    tmp_path: Path, cargo_home: Path, layout: str
) -> None:
    """Before, --no-exec read on past --timeout: 100,000 packages took 6 s in cargo's layout
    and 31 s through the general parsers with `--timeout 5` (250,000: 80 s)."""
    project = _project(tmp_path)
    _large_lockfile(project, 40_000, layout=layout)
    started = time.monotonic()
    done = run_isolated([str(project), "--no-exec", "--timeout", "1"], cargo_home)
    took = time.monotonic() - started
    line = _one_line(done, "reading the checkout (--no-exec) did not finish within 1 s")
    assert "raise --timeout" in line
    assert took < 8, took  # the interpreter's start and end, on a loaded machine, included


def test_the_alarm_stops_one_long_call() -> None:
    """A single call that never checks the budget (a parser) is stopped at the deadline."""
    import signal

    from featcheck.deadline import Deadline
    from featcheck.errors import FeatcheckError

    deadline = Deadline(0.2)
    started = time.monotonic()
    spent = r"^spinning did not finish within 0.2 s"
    with pytest.raises(FeatcheckError, match=spent), deadline.bounding("spinning"):
        while time.monotonic() - started < 30:
            pass
    assert time.monotonic() - started < 5
    assert signal.getsignal(signal.SIGALRM) == signal.SIG_DFL  # put back as it was
    assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)
    with Deadline(60).bounding("quick"):
        pass  # a block that ends in time leaves no alarm behind
    assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)


# The alarm may go off inside a garbage-collector callback (hypothesis installs one), where
# Python prints and drops the error as unraisable; it goes off again (`deadline._AGAIN`), which is
# what stops the parse here.
@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
def test_the_alarm_stops_parsing_a_large_toml_file() -> None:
    """A compiled parser holds Python's signal handlers until it returns (seconds for a 64 MiB
    lockfile): a text too large for it goes to a parser the alarm stops at once."""
    from featcheck.deadline import Deadline
    from featcheck.errors import FeatcheckError
    from featcheck.toml_read import COMPILED_AT_MOST, toml_data

    entry = '[[package]]\nname = "p{0}"\nversion = "1.0.{0}"\ndependencies = [\n "a",\n]\n\n'
    text = "".join(entry.format(n) for n in range(400_000))
    assert len(text) > 16 * COMPILED_AT_MOST
    started = time.monotonic()
    spent = r"^reading did not finish within 0.2 s"
    with pytest.raises(FeatcheckError, match=spent), Deadline(0.2).bounding("reading"):
        toml_data(text)
    assert time.monotonic() - started < 1.5


@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
def test_an_alarm_dropped_in_a_finalizer_goes_off_again() -> None:
    """An alarm that goes off while Python runs a `__del__` raises there, and Python prints and
    drops the error: the block ran on to its end (the test above failed so, now and then, with
    one warning in the run's summary)."""
    from featcheck.deadline import Deadline
    from featcheck.errors import FeatcheckError

    class SlowToFinalize:
        def __del__(self) -> None:
            end = time.monotonic() + 0.4
            while time.monotonic() < end:
                pass

    started = time.monotonic()
    spent = r"^reading did not finish within 0.2 s"
    with pytest.raises(FeatcheckError, match=spent), Deadline(0.2).bounding("reading"):
        SlowToFinalize()  # finalized at once, the alarm going off inside it
        while time.monotonic() - started < 30:
            pass
    assert time.monotonic() - started < 1.5


@pytest.mark.parametrize("caught", ["said otherwise", "swallowed"])
def test_the_alarm_is_said_as_such_whatever_a_reader_makes_of_it(caught: str) -> None:
    """Readers turn an error into their own (a file outside the project is not quoted) or
    into an unread package: once the alarm went off, the block still ends in its one line."""
    from featcheck.deadline import Deadline
    from featcheck.errors import FeatcheckError

    started = time.monotonic()
    spent = r"^reading did not finish within 0.2 s"
    with pytest.raises(FeatcheckError, match=spent), Deadline(0.2).bounding("reading"):
        try:
            while time.monotonic() - started < 30:
                pass
        except FeatcheckError:
            if caught == "said otherwise":
                raise FeatcheckError("cannot be read as a cargo configuration file") from None
    assert time.monotonic() - started < 5
