"""`--no-exec`: the audit from files alone (manifests, Cargo.lock, local registry or vendor/).

The stub registry in fixtures/registry plays the local cargo registry: a temporary CARGO_HOME
holds `registry/src/index.crates.io-1949cf8c6b5b557f/NAME-VERSION` links to its packages (the
directory cargo 1.85+ names crates.io's) — all of them (a machine that built the project), none
(a fresh machine), or some. While featcheck audits with
--no-exec, PATH is empty and `subprocess.Popen` raises, so any process it tried to start would
fail the test. Verdicts are compared with the default audit (real cargo, offline).
"""

from __future__ import annotations

import contextlib
import functools
import io
import json
import os
import re
import shutil
import subprocess
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import pytest
from cli_in_process import run_in_process
from stub_registry import lock_packages
from support import CRATES, FIXTURES, WORKSPACES, trust_of

from featcheck.boundary import TrustContext
from featcheck.cli import run
from featcheck.errors import FeatcheckError
from featcheck.featureset import AuditOptions
from featcheck.manifest.document import ManifestDocument
from featcheck.noexec import packages
from featcheck.noexec.metadata import build_metadata
from featcheck.noexec.source import SUPPORTED_TARGETS, builtin_cfg, detect_host_triple
from featcheck.pipeline import audit_project
from featcheck.report import AuditResult, Location
from featcheck.severity import Confidence, FailOn, Severity
from featcheck.workspace.workspace import Workspace

REGISTRY = FIXTURES / "registry"


def _link_registry(directory: Path, only: Iterable[str] | None = None) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    wanted = None if only is None else set(only)
    for package in REGISTRY.iterdir():
        if wanted is None or package.name in wanted:
            (directory / package.name).symlink_to(package, target_is_directory=True)


def _home(path: Path, only: Iterable[str] | None = None) -> Path:
    """A CARGO_HOME whose unpacked registry holds the stub packages named `NAME-VERSION` in
    `only` (all of them when None); no config, so it would not even work for cargo."""
    _link_registry(path / "registry" / "src" / "index.crates.io-1949cf8c6b5b557f", only)
    return path


def _downloaded_home(path: Path, project: Path) -> Path:
    """A CARGO_HOME as `cargo fetch` leaves it for `project`: every registry package of its
    Cargo.lock. --no-exec looks a package up by the name and version the lockfile gives, never
    by listing the registry, so it reads here what it reads in a home holding all the stubs
    (half of them, linked in half the time)."""
    return _home(path, lock_packages(project))


def _env(home: Path, cache: Path | None = None) -> dict[str, str]:
    """An environment for `build_metadata`: this CARGO_HOME, and a cache kept out of ~/.cache
    (none at all unless `cache` is given)."""
    return {"CARGO_HOME": str(home), "XDG_CACHE_HOME": str(cache or home / "no-cache")}


@pytest.fixture(scope="session")
def registry_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A CARGO_HOME whose unpacked registry holds every stub package."""
    return _home(tmp_path_factory.mktemp("noexec-cargo-home"))


@pytest.fixture(scope="session")
def empty_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh machine's CARGO_HOME: nothing downloaded yet."""
    return tmp_path_factory.mktemp("noexec-empty-cargo-home")


class _NoProcess(Exception):
    pass


@pytest.fixture(scope="module")
def kept_manifests(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One user cache for the module's audits of the full registry: each stub manifest is read
    once and then taken from featcheck's own cache of distilled manifests (kept by path and
    stamp, as between a user's runs; test_registry_manifests_are_kept_between_runs_and_read_again_when_changed)."""
    return tmp_path_factory.mktemp("noexec-kept-manifests")


@pytest.fixture
def no_processes(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[None]:
    """No cargo/rustc on PATH, and starting any process raises."""
    empty = tmp_path / "empty-path"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))

    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise _NoProcess(f"--no-exec started a process: {args!r}")

    monkeypatch.setattr(subprocess, "Popen", refuse)
    monkeypatch.setattr(os, "system", refuse)
    if hasattr(os, "posix_spawn"):
        monkeypatch.setattr(os, "posix_spawn", refuse)
    yield


def _where(location: Location | None) -> str | None:
    if location is None:
        return None
    return f"{location.file}:{location.line}:{location.column}"


def _verdicts(result: AuditResult) -> set[tuple[Any, ...]]:
    return {
        (
            f.code,
            f.member,
            f.crate,
            f.crate_version,
            f.feature,
            f.target,
            f.severity,
            _where(f.location),
        )
        for f in result.findings
    }


def _no_exec_audit(
    path: Path,
    home: Path,
    monkeypatch: pytest.MonkeyPatch,
    targets: tuple[str, ...] = (),
    kept: Path | None = None,
) -> AuditResult:
    """The --no-exec audit of `path` over `home`, with the user cache `kept` where given (the
    module's `kept_manifests`, for an audit over `registry_home` in a test that is not about
    what featcheck keeps: the stub manifests are read once for the module, not once a test)."""
    monkeypatch.setenv("CARGO_HOME", str(home))
    own = os.environ["XDG_CACHE_HOME"]
    monkeypatch.setenv("XDG_CACHE_HOME", str(kept or own))
    try:
        return audit_project(path, AuditOptions(targets=targets, no_exec=True), trust_of(path))
    finally:
        monkeypatch.setenv("XDG_CACHE_HOME", own)  # the test's own cache again


@dataclass(frozen=True)
class _Invocation:
    exit_code: int
    stdout: str
    stderr: str


def _invoke(args: list[str]) -> _Invocation:
    """The CLI in process (no subprocess may start in these tests), its output captured."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = run(args)
    return _Invocation(code, out.getvalue(), err.getvalue())


def _exit(result: AuditResult) -> int:
    """The CLI's exit code for `result` (default failing level: warning)."""
    if any(f.severity >= Severity.WARNING for f in result.findings):
        return 1
    return 2 if result.incomplete else 0


CASES = [
    (CRATES / "pitb-exec-cpu", ()),
    (CRATES / "pitb-exec-cpu-simd", ()),
    (CRATES / "pitb-exec-cpu-default", ()),
    (CRATES / "pitb-exec-cpu-amx", ("aarch64-apple-darwin",)),
    (WORKSPACES / "target-specific", ("x86_64-pc-windows-msvc",)),
    (WORKSPACES / "target-specific", ("aarch64-apple-darwin", "wasm32-unknown-unknown")),
    (WORKSPACES / "workspace-inheritance" / "trainer", ()),  # one member: the root is found
    # Every fixture workspace on the host: workspace-unification, workspace-inheritance,
    # dev-only-rayon, renamed, two-versions, resolver-1, path dependencies, ...
    *((w, ()) for w in sorted(WORKSPACES.iterdir()) if (w / "Cargo.toml").is_file()),
]


@pytest.mark.parametrize(("path", "targets"), CASES, ids=lambda v: getattr(v, "name", str(v)))
def test_no_exec_equals_the_cargo_audit_and_is_never_clean_when_it_cannot_see(
    path: Path,
    targets: tuple[str, ...],
    offline_cargo_for: Callable[..., Path],
    registry_home: Path,
    empty_home: Path,
    kept_manifests: Path,
    monkeypatch: pytest.MonkeyPatch,
    request: pytest.FixtureRequest,
) -> None:
    offline_cargo_for(path, lock_only=True)  # cargo metadata of the fixture as committed
    host = detect_host_triple()
    with_cargo = audit_project(
        path,
        AuditOptions(targets=targets or (host,), offline=True, confirm_fixes=False),
        trust_of(path),
    )
    request.getfixturevalue("no_processes")
    # Everything downloaded: the same verdicts, complete.
    full = _no_exec_audit(path, registry_home, monkeypatch, targets or (host,), kept=kept_manifests)
    assert _verdicts(full) == _verdicts(with_cargo)
    assert full.members == with_cargo.members
    assert full.incomplete == []
    assert {f.confidence for f in full.findings} <= {Confidence.RESOLVED}
    assert all(f.fix is None or not f.fix.confirmed for f in full.findings)
    # A fresh machine: never clean where cargo flags a build; what it does say is true.
    fresh = _no_exec_audit(path, empty_home, monkeypatch, targets or (host,))
    flagged = {(f.member, f.target) for f in with_cargo.findings if f.code != "FC900"}
    seen = {(f.member, f.target) for f in fresh.findings} | {
        (g.member, g.target) for g in fresh.incomplete
    }
    assert flagged <= seen
    assert _exit(fresh) != 0 or _exit(with_cargo) == 0
    # A suppression the fresh audit could not match is reported as possibly unused, marked
    # incomplete: no claim about the build.
    said = _verdicts(replace(fresh, findings=[f for f in fresh.findings if f.code != "FC900"]))
    assert said <= _verdicts(with_cargo)


def test_json_lists_members_in_one_order_with_and_without_cargo(
    offline_cargo_for: Callable[..., Path], registry_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # cargo lists cli, backend, zlib-glue, omega, root-app (the `members` order, the root
    # last); a walk of the directories the root first: the report sorts by path either way.
    path = str(WORKSPACES / "member-order")
    offline_cargo_for(WORKSPACES / "member-order", lock_only=True)
    host = ("--target", "x86_64-unknown-linux-gnu")
    with_cargo = json.loads(_invoke(["check", path, *host, "--format", "json"]).stdout)
    monkeypatch.setenv("CARGO_HOME", str(registry_home))
    no_exec = json.loads(_invoke(["check", path, *host, "--no-exec", "--format", "json"]).stdout)
    in_path_order = ["root-app", "omega", "backend", "zlib-glue", "cli"]
    assert with_cargo["members"] == no_exec["members"] == in_path_order
    assert list(with_cargo["configurations"]) == list(no_exec["configurations"]) == in_path_order
    findings = [(f["member"], f["code"]) for f in with_cargo["findings"]]
    assert findings == [(f["member"], f["code"]) for f in no_exec["findings"]]
    assert findings == [("backend", "FC001"), ("omega", "FC001")]


def test_fresh_machine_names_what_it_could_not_read(
    empty_home: Path, monkeypatch: pytest.MonkeyPatch, no_processes: None
) -> None:
    monkeypatch.setenv("CARGO_HOME", str(empty_home))
    path = str(CRATES / "pitb-exec-cpu")
    text = _invoke(["check", path, "--no-exec"])
    assert text.exit_code == 2
    assert "incomplete audit: --no-exec could not read burn@0.22.1" in text.stdout
    assert "cargo fetch" in text.stdout
    assert "no findings, audit incomplete (1 member" in text.stdout
    report = _invoke(["check", path, "--no-exec", "--format", "json"])
    assert report.exit_code == 2
    document = json.loads(report.stdout)
    assert document["complete"] is False
    assert document["incomplete"] == [
        {
            "member": "pitb-exec-cpu",
            "target": detect_host_triple(),
            "unread": ["burn@0.22.1"],
            "reasons": ["not in the local cargo registry or vendor/"],
        }
    ]


@functools.cache
def _registry_packages(path: Path, home: Path) -> tuple[frozenset[str], frozenset[str]]:
    """`NAME-VERSION` of the registry packages in any audited build of the unchanged fixture
    `path` on the host, and of all those its lockfile holds (read once per test process)."""
    from featcheck.manifest.document import read_manifest
    from featcheck.resolution import resolve_builds, resolver_version

    read = build_metadata(path / "Cargo.toml", TrustContext.of(path / "Cargo.toml", _env(home)))
    cfg = builtin_cfg(detect_host_triple())
    graphs = resolve_builds(
        read,
        read.member_ids,
        [cfg],
        resolver_version(read_manifest(path / "Cargo.toml").data),
    )
    built = frozenset(
        f"{n.name}-{n.version}"
        for g in graphs.values()
        for n in g.nodes()
        if not n.package.is_local
    )
    locked = frozenset(
        f"{p.name}-{p.version}" for p in read.values() if not p.id.startswith("path+")
    )
    return built, locked


def _host_build_packages(path: Path, home: Path) -> frozenset[str]:
    """`NAME-VERSION` of the registry packages in any audited build of `path` on the host."""
    return _registry_packages(path, home)[0]


@pytest.mark.parametrize(
    "path", [CRATES / "pitb-exec-cpu", WORKSPACES / "target-specific", WORKSPACES / "lib-chain"]
)
def test_packages_no_build_reaches_are_absent_not_a_gap(
    path: Path,
    tmp_path: Path,
    registry_home: Path,
    kept_manifests: Path,
    monkeypatch: pytest.MonkeyPatch,
    no_processes: None,
) -> None:
    """What `cargo build` downloads, not what `cargo fetch` does: the optional dependencies
    nothing enables and other platforms' packages are missing, and the audit is complete."""
    needed, locked = _registry_packages(path, registry_home)
    assert needed < locked  # the lockfile holds packages no host build uses
    partial = _no_exec_audit(path, _home(tmp_path / "home", needed), monkeypatch)
    full = _no_exec_audit(path, registry_home, monkeypatch, kept=kept_manifests)
    assert partial.incomplete == []
    assert _verdicts(partial) == _verdicts(full)
    assert any("no audited verdict depends on them" in note for note in partial.notes)


def test_an_unread_backend_is_a_gap_not_a_verdict(
    tmp_path: Path, registry_home: Path, monkeypatch: pytest.MonkeyPatch, no_processes: None
) -> None:
    path = CRATES / "pitb-exec-cpu"
    needed = _host_build_packages(path, registry_home)
    # burn-flex itself unread: nothing can be said of its features.
    result = _no_exec_audit(path, _home(tmp_path / "a", needed - {"burn-flex-0.22.1"}), monkeypatch)
    assert result.findings == []
    assert [g.unread for g in result.incomplete] == [("burn-flex@0.22.1",)]
    assert _exit(result) == 2
    # A crate above it unread: what it would ask of burn-flex is unknown; the finding stays,
    # marked incomplete, and the audit is not called clean.
    above = needed - {"burn-dispatch-0.22.1"}
    result = _no_exec_audit(path, _home(tmp_path / "b", above), monkeypatch)
    assert [g.unread for g in result.incomplete] == [("burn-dispatch@0.22.1",)]
    assert all(
        f.crate != "burn-flex" or f.confidence is Confidence.INCOMPLETE for f in result.findings
    )
    assert _exit(result) != 0
    # An unread crate that reaches no checked crate changes nothing.
    ignorable = sorted(n for n in needed if n.startswith(("libm-", "bytemuck-")))
    assert ignorable
    result = _no_exec_audit(path, _home(tmp_path / "c", needed - set(ignorable)), monkeypatch)
    assert result.incomplete == []
    assert [(f.code, f.confidence) for f in result.findings] == [("FC001", Confidence.RESOLVED)]


def test_configuration_and_suppressions_apply(
    tmp_path: Path,
    empty_home: Path,
    registry_home: Path,
    kept_manifests: Path,
    monkeypatch: pytest.MonkeyPatch,
    no_processes: None,
) -> None:
    project = tmp_path / "project"
    shutil.copytree(CRATES / "pitb-exec-cpu", project, ignore=shutil.ignore_patterns("target"))
    config = project / "featcheck.toml"
    # FC003 would report the missing `simd` where FC001 does not stand: both off.
    config.write_text('ignore = ["FC001", "FC003"]\ntargets = ["aarch64-apple-darwin"]\n')
    result = _no_exec_audit(project, registry_home, monkeypatch, kept=kept_manifests)
    assert result.targets == ["aarch64-apple-darwin"]
    assert [f.code for f in result.findings] == []
    assert _exit(result) == 0
    config.write_text('severity = { FC001 = "info" }\nfail-on = "error"\n')
    result = _no_exec_audit(project, registry_home, monkeypatch, kept=kept_manifests)
    assert [(f.code, f.severity) for f in result.findings] == [("FC001", Severity.INFO)]
    assert result.fail_on is FailOn.ERROR
    config.write_text(
        '[[allow]]\ncode = "FC001"\nreason = "measured: one core is enough"\n\n'
        '[[allow]]\ncode = "FC003"\nreason = "bit-for-bit sums"\n'
    )
    result = _no_exec_audit(project, registry_home, monkeypatch, kept=kept_manifests)
    assert result.findings == [] and result.suppressed == {"FC001": 1, "FC003": 1}
    config.unlink()
    manifest = project / "Cargo.toml"
    text = manifest.read_text()
    manifest.write_text(
        text.replace(
            '"optim"] }', '"optim"] }  # featcheck: allow(FC001, FC003) single-threaded host'
        )
    )
    result = _no_exec_audit(project, registry_home, monkeypatch, kept=kept_manifests)
    assert result.findings == [] and result.suppressed == {"FC001": 1, "FC003": 1}
    # On a fresh machine featcheck.toml still decides: with every rule turned off, no verdict
    # depends on the unread burn and the audit is complete.
    config = project / "featcheck.toml"
    from featcheck.rules import Catalogue

    every_rule = ", ".join(f'"{rule.code}"' for rule in Catalogue.builtin().select())
    config.write_text(f'ignore = [{every_rule}]\ntargets = ["aarch64-apple-darwin"]\n')
    fresh = _no_exec_audit(project, empty_home, monkeypatch)
    assert (fresh.targets, fresh.findings, fresh.incomplete) == (["aarch64-apple-darwin"], [], [])
    assert any("no audited verdict depends on them" in note for note in fresh.notes)
    config.write_text('targets = ["aarch64-apple-darwin"]\n')
    fresh = _no_exec_audit(project, empty_home, monkeypatch)
    assert [(g.target, g.unread) for g in fresh.incomplete] == [
        ("aarch64-apple-darwin", ("burn@0.22.1",))
    ]
    config.unlink()
    # On a fresh machine the suppression cannot be matched: FC900 says so, marked incomplete.
    fresh = _no_exec_audit(project, empty_home, monkeypatch)
    assert [(f.code, f.confidence) for f in fresh.findings] == [
        ("FC900", Confidence.INCOMPLETE),  # one per code of the comment
        ("FC900", Confidence.INCOMPLETE),
    ]
    assert fresh.incomplete


_LIBRARY = """[package]
name = "model"
version = "0.1.0"
edition = "2024"
publish = false
{package}
[dependencies]
burn = {{ version = "=0.22.1", default-features = false, features = ["std", "flex"] }}
{tail}"""


@pytest.mark.parametrize(
    ("layout", "package", "tail"),
    [
        ({"src/bin/tool.rs": "fn main() {}"}, "", ""),
        ({"src/bin/tool/main.rs": "fn main() {}"}, "", ""),
        ({"src/bin/tool.rs": "fn main() {}"}, "autobins = false", '[[bin]]\nname = "tool"\n'),
    ],
    ids=["src-bin-file", "src-bin-dir", "autobins-false"],
)
def test_binaries_in_src_bin_are_final_artifacts(
    layout: dict[str, str],
    package: str,
    tail: str,
    tmp_path: Path,
    offline_cargo_for: Callable[..., Path],
    registry_home: Path,
    kept_manifests: Path,
    monkeypatch: pytest.MonkeyPatch,
    request: pytest.FixtureRequest,
) -> None:
    project = tmp_path / "model"
    shutil.copytree(WORKSPACES / "library-with-flex", project)
    offline_cargo_for(project)
    for name, body in layout.items():
        (project / name).parent.mkdir(parents=True, exist_ok=True)
        (project / name).write_text(body)
    (project / "Cargo.toml").write_text(_LIBRARY.format(package=package, tail=tail))
    host = detect_host_triple()
    with_cargo = audit_project(
        project,
        AuditOptions(targets=(host,), offline=True, confirm_fixes=False),
        trust_of(project),
    )
    request.getfixturevalue("no_processes")
    without = _no_exec_audit(project, registry_home, monkeypatch, (host,), kept=kept_manifests)
    assert [f.severity for f in with_cargo.findings if f.code == "FC001"] == [Severity.ERROR]
    assert _verdicts(without) == _verdicts(with_cargo)


def test_vendor_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, no_processes: None
) -> None:
    project = tmp_path / "project"
    shutil.copytree(CRATES / "pitb-exec-cpu", project, ignore=shutil.ignore_patterns("target"))
    vendor = project / "vendor"
    vendor.mkdir()
    # What `cargo vendor` writes: the packages of the lockfile.
    for index, package in enumerate(REGISTRY / p for p in sorted(lock_packages(project))):
        # Both layouts: `vendor/NAME-VERSION/` and `vendor/NAME/` (checked against its version).
        bare = re.match(r"(.+?)-\d+\.\d+\.\d+", package.name)
        assert bare is not None
        name = package.name if index % 2 else bare.group(1)
        destination = vendor / (package.name if (vendor / name).exists() else name)
        shutil.copytree(package, destination)
    result = _no_exec_audit(project, tmp_path / "empty-cargo-home", monkeypatch)
    assert [(f.code, _where(f.location)) for f in result.findings] == [("FC001", "Cargo.toml:9:31")]
    assert result.incomplete == []
    # A vendored package that links out of the checkout is not read.
    shutil.rmtree(vendor / "burn-flex-0.22.1", ignore_errors=True)
    shutil.rmtree(vendor / "burn-flex", ignore_errors=True)
    (vendor / "burn-flex-0.22.1").symlink_to(REGISTRY / "burn-flex-0.22.1")
    result = _no_exec_audit(project, tmp_path / "empty-cargo-home", monkeypatch)
    assert [g.unread for g in result.incomplete] == [("burn-flex@0.22.1",)]


def test_package_ids_match_cargo_metadata(
    offline_cargo_for: Callable[..., Path], registry_home: Path
) -> None:
    manifest = CRATES / "pitb-exec-cpu" / "Cargo.toml"
    offline_cargo_for(manifest.parent, lock_only=True)
    real = json.loads(
        subprocess.run(
            ["cargo", "metadata", "--format-version", "1", "--offline"],
            cwd=manifest.parent,
            capture_output=True,
            text=True,
            check=True,
        ).stdout
    )
    mine = build_metadata(manifest, TrustContext.of(manifest, _env(registry_home)))
    assert list(mine.member_ids) == real["workspace_members"]
    assert mine.resolve_root == real["resolve"]["root"]
    assert set(mine) == {p["id"] for p in real["packages"]}
    assert mine.root == Path(real["workspace_root"])


def test_unknown_target_names_the_supported_ones(
    registry_home: Path, monkeypatch: pytest.MonkeyPatch, no_processes: None
) -> None:
    with pytest.raises(FeatcheckError) as error:
        _no_exec_audit(CRATES / "pitb-exec-cpu", registry_home, monkeypatch, ("riscv64gc-x",))
    assert "riscv64gc-x" in str(error.value)
    assert all(t in str(error.value) for t in SUPPORTED_TARGETS)


def test_cli_no_exec(
    registry_home: Path, monkeypatch: pytest.MonkeyPatch, no_processes: None
) -> None:
    monkeypatch.setenv("CARGO_HOME", str(registry_home))
    path = str(CRATES / "pitb-exec-cpu")
    result = _invoke(["check", path, "--no-exec", "--format", "json"])
    assert result.exit_code == 1
    report = json.loads(result.stdout)
    assert report["version"] == 3  # files relative to the repository root (README: history)
    assert [(f["code"], f["confidence"]) for f in report["findings"]] == [("FC001", "resolved")]
    assert report["complete"] is True and report["incomplete"] == []
    unknown = _invoke(["check", path, "--no-exec", "--target", "mips-x"])
    assert unknown.exit_code == 2


def test_builtin_cfg_tables() -> None:
    windows = builtin_cfg("x86_64-pc-windows-msvc")
    assert windows.applies("cfg(windows)") and not windows.applies("cfg(unix)")
    wasm = builtin_cfg("wasm32-unknown-unknown")
    assert wasm.applies('cfg(target_arch = "wasm32")')
    assert builtin_cfg("aarch64-apple-darwin").applies('cfg(target_os = "macos")')


@pytest.mark.parametrize(
    ("system", "machine", "triple"),
    [
        ("linux", "x86_64", "x86_64-unknown-linux-gnu"),
        ("linux", "aarch64", "aarch64-unknown-linux-gnu"),
        ("darwin", "arm64", "aarch64-apple-darwin"),
        ("darwin", "x86_64", "x86_64-apple-darwin"),
        ("win32", "AMD64", "x86_64-pc-windows-msvc"),
    ],
)
def test_host_triple_detection(system: str, machine: str, triple: str) -> None:
    assert detect_host_triple(system, machine) == triple


def test_unknown_host_asks_for_target() -> None:
    with pytest.raises(FeatcheckError, match="--target"):
        detect_host_triple("freebsd14", "riscv64")


def test_member_globs_and_exclude(
    tmp_path: Path,
    registry_home: Path,
    kept_manifests: Path,
    monkeypatch: pytest.MonkeyPatch,
    no_processes: None,
) -> None:
    project = tmp_path / "ws"
    shutil.copytree(WORKSPACES / "workspace-unification", project)
    manifest = project / "Cargo.toml"
    manifest.write_text(manifest.read_text().replace('["app", "bench"]', '["*"]'))
    glob = _no_exec_audit(project, registry_home, monkeypatch, kept=kept_manifests)
    assert sorted(glob.members) == ["app", "bench"]
    manifest.write_text(manifest.read_text() + 'exclude = ["bench"]\n')
    built = build_metadata(manifest, TrustContext.of(manifest, _env(registry_home)))
    assert [m.rsplit("/", 1)[-1] for m in built.member_ids] == ["app#0.1.0"]


def test_registry_manifests_are_kept_between_runs_and_read_again_when_changed(
    tmp_path: Path, no_processes: None
) -> None:
    home = tmp_path / "home"
    source = home / "registry" / "src" / "index.crates.io-1949cf8c6b5b557f"
    shutil.copytree(REGISTRY / "burn-flex-0.22.1", source / "burn-flex-0.22.1")
    manifest = CRATES / "pitb-exec-cpu" / "Cargo.toml"
    # The rest of what `cargo fetch` downloads for the crate (see `_downloaded_home`).
    _link_registry(source, lock_packages(manifest.parent) - {"burn-flex-0.22.1"})
    cache = tmp_path / "cache"

    def flex_default() -> list[str]:
        built = build_metadata(manifest, TrustContext.of(manifest, _env(home, cache)))
        flex = next(p for p in built.values() if p.name == "burn-flex")
        return sorted(value.name for value in flex.features["default"])

    first = flex_default()
    kept = (cache / "featcheck" / "noexec-manifests").iterdir()
    assert any("burn-flex-0.22.1" in file.read_text() for file in kept)
    assert flex_default() == first  # from the cache
    flex_manifest = source / "burn-flex-0.22.1" / "Cargo.toml"
    text = flex_manifest.read_text()
    changed = 'changed = []\ndefault = ["changed", '
    flex_manifest.write_text(text.replace("default = [", changed, 1) + "\n")
    assert flex_default() == sorted([*first, "changed"])
    # A file of an earlier format (declarations as `cargo metadata`'s entries) is never taken
    # for the present one: the manifest is read again.
    for file in (cache / "featcheck" / "noexec-manifests").iterdir():
        kept = json.loads(file.read_text())
        if "burn-flex-0.22.1" in kept["manifest"]["path"]:
            kept["version"] = 2
            kept["manifest"]["data"]["features"]["default"].append("planted")
            file.write_text(json.dumps(kept))
    assert flex_default() == sorted([*first, "changed"])


def _model(workspace: Workspace) -> list[tuple[object, ...]]:
    """What the workspace model holds of each package, to compare two of them."""
    return [
        (
            p.id,
            p.features,
            p.declarations,
            p.edges,
            p.target_kinds,
            p.gated_binaries,
            p.manifest_path,
        )
        for p in workspace.values()
    ]


def test_an_audit_parses_the_manifests_its_builds_reach_once(
    tmp_path: Path, registry_home: Path, monkeypatch: pytest.MonkeyPatch, no_processes: None
) -> None:
    """A first run (a fresh CI machine) parses only what a build reaches of Cargo.lock: not
    another platform's packages, not the optional ones nothing turns on. The next run parses
    none of them: each was kept when it was read."""
    parsed: list[str] = []
    load = packages.read_manifest

    def counting(path: Path, *args: Any, **kw: Any) -> ManifestDocument:
        parsed.append(path.parent.name)
        return load(path, *args, **kw)

    monkeypatch.setattr(packages, "read_manifest", counting)
    path = CRATES / "pitb-exec-cpu"
    first = _no_exec_audit(path, registry_home, monkeypatch)
    assert "burn-flex-0.22.1" in parsed and "windows-sys-0.52.0" in lock_packages(path)
    assert "windows-sys-0.52.0" not in parsed
    assert len(parsed) < len(lock_packages(path)) / 2
    parsed.clear()
    again = _no_exec_audit(path, registry_home, monkeypatch)
    assert parsed == []
    assert _verdicts(again) == _verdicts(first) != set()


def test_a_temporary_cargo_homes_manifests_are_taken_over_by_the_next(
    tmp_path: Path, no_processes: None
) -> None:
    """A temporary cargo home (a CI job's, a benchmark's) leaves nothing behind for ever: the
    kept manifests are named by registry and package, not by the cargo home they were in."""
    cache = tmp_path / "cache"
    manifest = CRATES / "pitb-exec-cpu" / "Cargo.toml"
    kept = cache / "featcheck" / "noexec-manifests"
    gone = _downloaded_home(tmp_path / "gone", manifest.parent)
    _model(build_metadata(manifest, TrustContext.of(manifest, _env(gone, cache))))
    count = len(list(kept.iterdir()))
    assert count and str(gone) in next(kept.iterdir()).read_text()
    shutil.rmtree(gone)
    other = _downloaded_home(tmp_path / "other", manifest.parent)
    _model(build_metadata(manifest, TrustContext.of(manifest, _env(other, cache))))
    files = list(kept.iterdir())
    assert len(files) == count
    assert all(str(other) in file.read_text() for file in files)


def test_the_files_an_earlier_featcheck_kept_are_removed(
    tmp_path: Path, no_processes: None
) -> None:
    """Before a file per manifest, featcheck kept one of every manifest it distilled and one
    per workspace: megabytes each, read by nothing now."""
    cache = tmp_path / "cache"
    earlier = cache / "featcheck" / "noexec-manifests.json"
    per_workspace = cache / "featcheck" / "noexec" / "0123abcd.json"
    per_workspace.parent.mkdir(parents=True)
    for file in (earlier, per_workspace):
        file.write_text('{"version": 1, "manifests": {}}')
    manifest = CRATES / "pitb-exec-cpu" / "Cargo.toml"
    home = _downloaded_home(tmp_path / "home", manifest.parent)
    build_metadata(manifest, TrustContext.of(manifest, _env(home, cache)))
    assert sorted(p.name for p in (cache / "featcheck").iterdir()) == ["noexec-manifests"]


def test_the_checkouts_own_manifests_are_never_cached(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, no_processes: None
) -> None:
    project = tmp_path / "project"
    shutil.copytree(CRATES / "pitb-exec-cpu", project, ignore=shutil.ignore_patterns("target"))
    for package in lock_packages(project):  # what `cargo vendor` writes
        shutil.copytree(REGISTRY / package, project / "vendor" / package)
    cache = tmp_path / "cache"
    build_metadata(
        project / "Cargo.toml",
        TrustContext.of(project / "Cargo.toml", _env(tmp_path / "empty-home", cache)),
    )
    assert not (cache / "featcheck").exists()


@pytest.mark.parametrize("written_in", ["Cargo.toml", ".cargo/config.toml"])
def test_patched_path_package_is_read_like_cargo_reads_it(
    written_in: str,
    tmp_path: Path,
    offline_cargo_for: Callable[..., Path],
    registry_home: Path,
    kept_manifests: Path,
    monkeypatch: pytest.MonkeyPatch,
    request: pytest.FixtureRequest,
) -> None:
    """`[patch.crates-io]` with a path inside the checkout, in the root manifest or in the
    cargo configuration (stable cargo reads both): cargo builds the patched copy, whose
    defaults here lack `rayon` although the member keeps burn's defaults."""
    project = tmp_path / "project"
    shutil.copytree(
        CRATES / "pitb-exec-cpu-default", project, ignore=shutil.ignore_patterns("target")
    )
    offline_cargo_for(project)  # the lockfile is regenerated below
    patched = project / "patched" / "burn-flex"
    shutil.copytree(REGISTRY / "burn-flex-0.22.1", patched)
    flex = patched / "Cargo.toml"
    flex.write_text(
        flex.read_text().replace('default = ["std", "simd", "rayon"]', 'default = ["std"]')
    )
    for leftover in patched.glob(".cargo*"):
        leftover.unlink()
    settings = project / written_in
    settings.parent.mkdir(exist_ok=True)
    written = settings.read_text() if settings.exists() else ""
    settings.write_text(
        written + '\n[patch.crates-io]\nburn-flex = { path = "patched/burn-flex" }\n'
    )
    subprocess.run(
        ["cargo", "generate-lockfile", "--offline"], cwd=project, check=True, capture_output=True
    )
    host = detect_host_triple()
    with_cargo = audit_project(
        project,
        AuditOptions(targets=(host,), offline=True, confirm_fixes=False),
        trust_of(project),
    )
    assert [f.code for f in with_cargo.findings] == ["FC001"]
    request.getfixturevalue("no_processes")
    without = _no_exec_audit(project, registry_home, monkeypatch, (host,), kept=kept_manifests)
    assert _verdicts(without) == _verdicts(with_cargo)
    assert without.incomplete == []


def _pack_crate(package: Path, destination: Path) -> None:
    """`NAME-VERSION.crate` as cargo downloads it: a gzipped tar of `NAME-VERSION/...`."""
    import tarfile

    with tarfile.open(destination / f"{package.name}.crate", "w:gz") as tar:
        for path in sorted(package.rglob("*")):
            if path.is_file():
                tar.add(path, arcname=f"{package.name}/{path.relative_to(package).as_posix()}")


def test_downloaded_archives_are_read_when_nothing_is_unpacked(
    tmp_path: Path,
    registry_home: Path,
    kept_manifests: Path,
    monkeypatch: pytest.MonkeyPatch,
    no_processes: None,
) -> None:
    """A CI cache keeps `registry/cache` (the `.crate` downloads), not `registry/src`."""
    path = CRATES / "pitb-exec-cpu"
    needed = _host_build_packages(path, registry_home)
    cache = tmp_path / "home" / "registry" / "cache" / "index.crates.io-1949cf8c6b5b557f"
    cache.mkdir(parents=True)
    for name in needed:
        _pack_crate(REGISTRY / name, cache)
    (cache / "broken-0.1.0.crate").write_bytes(b"not a gzip file")
    from_archives = _no_exec_audit(path, tmp_path / "home", monkeypatch)
    full = _no_exec_audit(path, registry_home, monkeypatch, kept=kept_manifests)
    assert from_archives.incomplete == []
    assert _verdicts(from_archives) == _verdicts(full) != set()
    # Without the archive of burn-flex, the gap is named as before.
    (cache / "burn-flex-0.22.1.crate").unlink()
    result = _no_exec_audit(path, tmp_path / "home", monkeypatch)
    assert [g.unread for g in result.incomplete] == [("burn-flex@0.22.1",)]


@pytest.mark.parametrize(
    ("config", "codes"),
    [
        ("", ["FC001"]),
        ('[build]\nrustflags = ["--cfg", "fast"]\n', ["FC003"]),
        (
            '[build]\nrustflags = ["--cfg", "fast"]\n[target.{host}]\nrustflags = ["--cfg=x"]\n',
            ["FC001"],
        ),
    ],
    ids=["none", "build", "target-table-wins"],
)
def test_checkout_rustflags_decide_cfg_tables_as_in_the_default_mode(
    config: str,
    codes: list[str],
    tmp_path: Path,
    offline_cargo_for: Callable[..., Path],
    registry_home: Path,
    kept_manifests: Path,
    monkeypatch: pytest.MonkeyPatch,
    request: pytest.FixtureRequest,
) -> None:
    project = tmp_path / "project"
    shutil.copytree(CRATES / "pitb-exec-cpu", project, ignore=shutil.ignore_patterns("target"))
    offline_cargo_for(project)  # the cfg(fast) table below turns on burn's rayon
    manifest = project / "Cargo.toml"
    manifest.write_text(
        manifest.read_text()
        + "\n[target.'cfg(fast)'.dependencies]\n"
        + 'burn = { version = "=0.22.1", default-features = false, features = ["rayon"] }\n'
    )
    host = detect_host_triple()
    if config:
        (project / ".cargo").mkdir()
        (project / ".cargo" / "config.toml").write_text(config.format(host=host))
    with_cargo = audit_project(
        project, AuditOptions(offline=True, confirm_fixes=False), trust_of(project)
    )
    request.getfixturevalue("no_processes")
    without = _no_exec_audit(project, registry_home, monkeypatch, kept=kept_manifests)
    assert [f.code for f in with_cargo.findings] == codes
    assert _verdicts(without) == _verdicts(with_cargo)


def _app_and_lib(root: Path, app: str, lib: str) -> None:
    """A workspace of `app` depending on the path library `lib` and its Cargo.lock; `app` and
    `lib`: the rest of each manifest, after its [package] table."""
    (root / "Cargo.toml").write_text('[workspace]\nmembers = ["app", "lib"]\nresolver = "2"\n')
    header = '[package]\nname = "{}"\nversion = "0.1.0"\nedition = "2021"\n\n'
    for member, source, rest in (("app", "main.rs", app), ("lib", "lib.rs", lib)):
        (root / member / "src").mkdir(parents=True)
        (root / member / "src" / source).write_text("")
        (root / member / "Cargo.toml").write_text(header.format(member) + rest)
    (root / "Cargo.lock").write_text(
        'version = 4\n\n[[package]]\nname = "app"\nversion = "0.1.0"\ndependencies = ["lib"]\n\n'
        '[[package]]\nname = "lib"\nversion = "0.1.0"\n'
    )


_ASKED_SHAPES = {
    # where the line asking for the feature is written: (root's extra text, app's dependencies)
    "member": ("", 'lib = {{ path = "../lib", features = ["{}"] }}\n'),
    "workspace": (
        '\n[workspace.dependencies]\nlib = {{ path = "lib", features = ["{}"] }}\n',
        "lib = {{ workspace = true }}\n",
    ),
    "features-table": ("", 'lib = {{ path = "../lib" }}\n\n[features]\nfast = ["lib/{}"]\n'),
}


@pytest.mark.parametrize("no_exec", [True, False], ids=["no-exec", "cargo"])
@pytest.mark.parametrize("shape", sorted(_ASKED_SHAPES))
@pytest.mark.parametrize("asked", ["nosuch", "real"])
def test_a_line_asking_for_a_feature_the_package_lacks_is_refused_at_that_line(
    asked: str, shape: str, no_exec: bool, tmp_path: Path
) -> None:
    """cargo: "package `app` depends on `lib` with feature `nosuch` but `lib` does not have
    that feature", naming no file, in every build (a `[features]` value off by default too).
    `--no-exec` audited such a workspace and exited 0; both modes named no line, or the
    member's manifest where the line is the workspace root's."""
    root_extra, dependencies = _ASKED_SHAPES[shape]
    _app_and_lib(
        tmp_path, "[dependencies]\n" + dependencies.format(asked), "[features]\nreal = []\n"
    )
    manifest = tmp_path / ("Cargo.toml" if shape == "workspace" else "app/Cargo.toml")
    with (tmp_path / "Cargo.toml").open("a") as root:
        root.write(root_extra.format(asked))
    done = run_in_process(str(tmp_path), *(["--no-exec"] if no_exec else []))
    if asked == "real":
        assert done.returncode == 0, done.stdout + done.stderr
        return
    assert done.returncode == 2 and not done.stdout
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr
    quoted = '"lib/nosuch"' if shape == "features-table" else '"nosuch"'
    ((line, text),) = [
        (n, t) for n, t in enumerate(manifest.read_text().splitlines(), 1) if quoted in t
    ]
    column = text.index(quoted) + 1
    assert done.stderr.startswith(f"featcheck: error: {manifest}:{line}:{column}: "), done.stderr
    assert "depends on `lib` with feature `nosuch` but `lib` does not have that feature" in (
        done.stderr
    )


@pytest.mark.parametrize(
    ("values", "cargo_says"),
    [
        ('["dep:nope"]', "includes `dep:nope`, but `nope` is not listed as a dependency"),
        ('["dep:lib"]', "includes `dep:lib`, but `lib` is not an optional dependency"),
        ('["nope/std"]', "includes `nope/std`, but `nope` is not a dependency"),
        ('["slow"]', "includes `slow` which is neither a dependency nor another feature"),
        ('["lib/std"]', ""),
    ],
)
def test_a_feature_naming_nothing_is_refused_as_cargo_does(
    values: str, cargo_says: str, tmp_path: Path
) -> None:
    """`--no-exec` audited `fast = ["dep:nope"]`, where cargo refuses the manifest (burn_dino,
    broken by hand)."""
    app = f'[features]\ndefault = ["fast"]\nfast = {values}\n\n[dependencies]\nlib = {{ path = "../lib" }}\n'
    _app_and_lib(tmp_path, app, "[features]\nstd = []\n")
    cargo = subprocess.run(
        ["cargo", "metadata", "--format-version", "1", "--offline"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
    )
    assert (cargo_says in cargo.stderr) if cargo_says else cargo.returncode == 0, cargo.stderr
    done = run_in_process(str(tmp_path), "--no-exec")
    if not cargo_says:
        assert done.returncode == 0, done.stdout + done.stderr
        return
    assert done.returncode == 2 and not done.stdout
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr
    # At the value (`fast` is line 8): cargo's words name the feature, not the line.
    assert re.search(rf"app/Cargo.toml:8:\d+: feature `fast` {re.escape(cargo_says)}", done.stderr)


def test_a_fix_only_cargo_confirms_places_the_finding_where_cargo_does(
    offline_cargo_for: Callable[..., Path],
    registry_home: Path,
    kept_manifests: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """repro-core's finding chooses the workspace entry, which clears lin's too; the fix needs
    cargo (Cargo.lock gains thread-tree). Where cargo confirms it, lin's finding takes that one
    edit; `--no-exec` confirms nothing and still places lin's finding there, not on lin's own
    line (scirs: 20 of 30 findings moved)."""
    path = WORKSPACES.parent / "noexec" / "shared-fix-lock-gain"
    offline_cargo_for(path, adding=["thread-tree-0.3.3"])
    host = (detect_host_triple(),)
    confirmed = audit_project(path, AuditOptions(targets=host, offline=True), trust_of(path))
    places = {(f.member, _where(f.location)) for f in confirmed.findings}
    entry = "fixtures/noexec/shared-fix-lock-gain/Cargo.toml:9:1"  # [workspace.dependencies]
    assert places == {("lin", entry), ("repro-core", entry)}
    assert all(f.fix is not None and f.fix.safe for f in confirmed.findings)
    unconfirmed = _no_exec_audit(path, registry_home, monkeypatch, host, kept=kept_manifests)
    assert _verdicts(unconfirmed) == _verdicts(confirmed)


@pytest.mark.parametrize(
    "written",
    ['default-features = "false"', 'optional = "yes"', 'workspace = "true"', "optional = true"],
)
def test_a_flag_that_is_no_boolean_is_refused_as_cargo_does(written: str, tmp_path: Path) -> None:
    """cargo: "invalid type: string "false", expected a boolean". `--no-exec` read the string as
    true and audited lib with its defaults, a build cargo refuses to make."""
    dependency = f'[dependencies]\nlib = {{ path = "../lib", {written} }}\n'
    if written == "optional = true":
        dependency += '\n[features]\nwith-lib = ["dep:lib"]\n'
    _app_and_lib(tmp_path, dependency, "")
    done = run_in_process(str(tmp_path), "--no-exec")
    if written == "optional = true":
        assert done.returncode == 0, done.stdout + done.stderr
        return
    flag = written.split(" = ")[0]
    assert done.returncode == 2 and not done.stdout
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr
    assert "app/Cargo.toml" in done.stderr
    assert f"`{flag}` of dependency `lib` must be true or false" in done.stderr
