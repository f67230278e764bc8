""" "Confirmed" means what `--fix`'s cargo check says: a Cargo.lock out of date before any fix
confirms nothing, and `--fix` writes every fix cargo accepts, naming the one it refuses.

featcheck runs in the test's process (the command line's own code, real cargo) where only what
it prints and writes is tested; where a cargo on PATH stands in for the real one, it runs as a
user runs it, finding that cargo as a new process does."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
from cargo_tree_oracle import run_in_process_resolved_by
from cli_in_process import run_in_process
from support import WORKSPACES, trust_of
from synthetic_registry import (
    GEMMISH_RULE,
    PACKAGE,
    POOLED_REGISTRY,
    locked_packages,
    project_rule,
    use_registry,
    write_project,
)

import featcheck.placement
from featcheck.cargo.runner import CargoRunner


def _copy(name: str, tmp_path: Path, offline_cargo_for: Callable[..., Path]) -> Path:
    project = tmp_path / name
    shutil.copytree(WORKSPACES / name, project)
    offline_cargo_for(project)
    return project


def _cargo(project: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["cargo", *args], cwd=project, capture_output=True, text=True, check=False
    )


def test_an_out_of_date_lockfile_is_said_once_and_confirms_no_fix(
    tmp_path: Path, offline_cargo_for: Callable[..., Path]
) -> None:
    project = _copy("library-backend-feature", tmp_path, offline_cargo_for)
    manifest = project / "gpu-app" / "Cargo.toml"
    # A version bump cargo has not written into Cargo.lock yet.
    manifest.write_text(manifest.read_text().replace('version = "0.1.0"', 'version = "0.1.1"'))
    lockfile = (project / "Cargo.lock").read_bytes()
    assert _cargo(project, "metadata", "--locked", "--format-version", "1").returncode != 0

    result = run_in_process(str(project), "--format", "json")
    assert result.returncode == 1, result.stderr
    report = json.loads(result.stdout)
    assert [n for n in report["notes"] if "Cargo.lock is out of date" in n] == [
        "Cargo.lock is out of date with the manifests (cargo rewrites it before any fix): no "
        "fix is confirmed; `--fix` asks cargo for each and applies those it accepts"
    ]
    fixes = [f["fix"] for f in report["findings"]]
    assert fixes and all(fix["safe"] and not fix["confirmed"] for fix in fixes)
    assert all(not a["confirmed"] for f in report["findings"] for a in f["alternatives"])
    text = run_in_process(str(project))
    said = " ".join(text.stdout.split())
    assert said.count("Cargo.lock is out of date") == 1
    assert "`--fix` applies it" not in said and "`--fix` asks cargo for it first" in said
    assert (project / "Cargo.lock").read_bytes() == lockfile

    fixed = run_in_process(str(project), "--fix", "--fix-level", "info")
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr
    assert "dep:burn-ndarray" in (project / "lib" / "Cargo.toml").read_text()
    assert _cargo(project, "metadata", "--locked", "--format-version", "1").returncode == 0


def _cargo_refusing(tmp_path: Path, marker: str, manifest: str) -> Path:
    """A cargo on PATH that runs the real one, except over featcheck's fixed copy of the
    workspace when the copy's `manifest` holds `marker`: there it refuses as cargo refuses a
    version it cannot pick (exit 101)."""
    toolchain = CargoRunner(tmp_path, trust=trust_of(tmp_path)).toolchain
    assert toolchain is not None
    bin_dir = tmp_path / "refusing-bin"
    bin_dir.mkdir()
    script = bin_dir / "cargo"
    script.write_text(
        "#!/bin/sh\n"
        "copy=$(printf '%s\\n' \"$PWD\" \"$@\" | sed -n 's#^[^/]*\\(/.*featcheck-fix-[^/]*/workspace\\).*#\\1#p'"
        " | head -n 1)\n"
        f'if [ -n "$copy" ] && grep -q \'{marker}\' "$copy/{manifest}" 2>/dev/null; then\n'
        "  echo 'error: failed to select a version for `memchr`.' >&2\n"
        "  exit 101\n"
        "fi\n"
        f'exec "{toolchain.cargo}" "$@"\n'
    )
    script.chmod(0o755)
    (bin_dir / "rustc").symlink_to(toolchain.rustc)
    return bin_dir


def test_a_fix_cargo_refuses_keeps_no_other_fix_out(
    tmp_path: Path, offline_cargo_for: Callable[..., Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    project = _copy("workspace-declared-backend", tmp_path, offline_cargo_for)
    report = json.loads(run_in_process(str(project), "--format", "json").stdout)
    fixed_members = {f["member"]: f["crate"] for f in report["findings"] if f["fix"]["safe"]}
    assert fixed_members == {"app": "burn-ndarray", "trainer": "burn-ndarray", "bench": "memchr"}
    bench = (project / "bench" / "Cargo.toml").read_bytes()
    bin_dir = _cargo_refusing(tmp_path, "^memchr", "bench/Cargo.toml")
    monkeypatch.setenv("PATH", os.pathsep.join([str(bin_dir), os.environ.get("PATH", "")]))
    monkeypatch.delenv("RUSTUP_TOOLCHAIN", raising=False)

    # In this process: the cargo featcheck starts is the one on PATH for this run as well.
    result = run_in_process(str(project), "--fix", "--fix-level", "info", "--format", "json")
    # memchr's finding (info) is left in the audit of the fixed checkout.
    assert result.returncode == 0, result.stderr
    (refused,) = [line for line in result.stderr.splitlines() if "not applied" in line]
    assert refused.startswith("featcheck: bench: FC012 memchr: not applied: cargo cannot resolve")
    assert refused.endswith("failed to select a version for `memchr`.")
    assert "featcheck: fixed 3 files" in result.stderr
    left = [(f["member"], f["crate"]) for f in json.loads(result.stdout)["findings"]]
    assert left == [("bench", "memchr")]
    assert (project / "bench" / "Cargo.toml").read_bytes() == bench
    for member in ("app", "trainer"):
        assert "burn-ndarray = { workspace = true" in (project / member / "Cargo.toml").read_text()
    assert _cargo(project, "metadata", "--locked", "--format-version", "1").returncode == 0


TWO_NEW = {
    "poolish": {"1.0.0": {}},
    "rayonish": {"1.0.0": {"dependencies": {"poolish": {"version": "1"}}}},
    "fastish": {"1.0.0": {}},
    "gemmish": {
        "0.1.0": {
            "features": {"default": [], "rayon": ["dep:rayonish"]},
            "dependencies": {"rayonish": {"version": "1", "optional": True}},
        }
    },
    "zipish": {
        "0.1.0": {
            "features": {"default": [], "fast": ["dep:fastish"]},
            "dependencies": {"fastish": {"version": "1", "optional": True}},
        }
    },
}


def test_fixes_cargo_confirms_together_each_count_what_they_add(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Both fixes turn on packages Cargo.lock lacks, so cargo resolves them in one copy; each
    said it added what both do (Kokoros: 11 packages each, against 4, 2 and 5 alone)."""
    use_registry(tmp_path_factory.mktemp("registry"), TWO_NEW, monkeypatch)
    manifest = PACKAGE.format("app") + (
        '[dependencies]\ngemmish = { version = "0.1", default-features = false }\nzipish = "0.1"\n'
    )
    project = write_project(
        tmp_path / "app", {"src/main.rs": "fn main() {}", "Cargo.toml": manifest}
    )
    rules = project / "featcheck.toml"
    rules.write_text(rules.read_text() + "\n" + project_rule("ACME002", "zipish", "fast"))
    assert "rayonish" not in (project / "Cargo.lock").read_text()

    report = run_in_process(str(project), "--format", "json")
    assert report.returncode == 1, report.stdout + report.stderr
    added = {
        f["crate"]: (f["fix"]["confirmed"], f["fix"]["added_packages"])
        for f in json.loads(report.stdout)["findings"]
    }
    assert added == {"gemmish": (True, 2), "zipish": (True, 1)}


def test_a_library_cargo_was_not_asked_about_is_given_no_reason(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """app's own line comes first and cargo confirms it; lib's line, which would need rayonish
    too, was never asked about. "there it turns on dependencies Cargo.lock holds no version of
    yet" was given as the reason, which app's fix shares (burn_automata). (lib builds arr only
    with the feature app turns on: its own build has no finding that lib's line would clear.)"""
    # arr passes nothing on to gemmish (burn no `multi-threads` to burn-ndarray): each fix is a
    # new line, app's own first.
    arr = {"0.1.0": {"dependencies": {"gemmish": {"version": "0.1", "default-features": False}}}}
    use_registry(tmp_path_factory.mktemp("registry"), {**TWO_NEW, "arr": arr}, monkeypatch)
    files = {
        "Cargo.toml": '[workspace]\nresolver = "2"\nmembers = ["app", "lib"]\n',
        "lib/Cargo.toml": PACKAGE.format("lib")
        + '[features]\narrays = ["dep:arr"]\n\n[dependencies]\narr = { version = "0.1", optional = true }\n',
        "lib/src/lib.rs": "",
        "app/Cargo.toml": PACKAGE.format("app")
        + '[dependencies]\nlib = { path = "../lib", features = ["arrays"] }\n',
        "app/src/main.rs": "fn main() {}",
    }
    project = write_project(tmp_path / "app", files)
    report = run_in_process(str(project), "--format", "json", "-p", "app")
    [finding] = json.loads(report.stdout)["findings"]
    assert finding["fix"]["edits"][0]["file"] == "app/Cargo.toml"
    assert finding["placement"] == "in app's own manifest, to keep lib lean"


def test_a_plain_report_says_what_cargo_refused_as_the_verbose_one_does(
    tmp_path: Path, offline_cargo_for: Callable[..., Path]
) -> None:
    """Both of faer's fixes need a package the offline registry lacks. Without `-v` the search
    stops at the first that waits for cargo; once cargo refused it, the rest are resolved and
    asked too, each once, and the fix line is the verbose report's, with cargo's reason."""
    project = _copy("faer-direct", tmp_path, offline_cargo_for)
    plain = run_in_process(str(project)).stdout.splitlines()
    verbose = run_in_process(str(project), "-v").stdout.splitlines()
    [fix] = [line for line in plain if line.startswith("  = fix:")]
    assert fix in verbose
    assert fix.startswith(
        "  = fix: remove `default-features = false` from faer: cargo cannot resolve it: cargo "
        "metadata failed: no matching package found"
    )


def test_a_fix_line_says_what_cargo_refused_when_the_rounds_run_out(
    tmp_path: Path, offline_cargo_for: Callable[..., Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """dl_pytorch_rust_challenge: cargo refused burn's `fusion` on the workspace entry and on
    the members' lines, and the rounds of checks ran out with one candidate left unasked. The
    fix line was the plain suggestion, as if nothing had been refused. With one round, faer's
    second fix is left unasked the same way."""
    monkeypatch.setattr(featcheck.placement, "_ROUNDS", 1)
    project = _copy("faer-direct", tmp_path, offline_cargo_for)
    plain = run_in_process(str(project)).stdout.splitlines()
    [fix] = [line for line in plain if line.startswith("  = fix:")]
    assert fix.startswith("  = fix: ") and ": cargo cannot resolve it: cargo metadata failed" in fix
    report = json.loads(run_in_process(str(project), "--format", "json").stdout)
    [finding] = report["findings"]
    assert finding["fix"] is None
    refused = fix.removeprefix("  = fix: ").split(":")[0]
    assert refused not in [a["description"] for a in finding["alternatives"]]


def test_fixes_cargo_confirms_together_each_count_what_cargo_lock_gains_with_them(
    tmp_path: Path, offline_cargo_for: Callable[..., Path]
) -> None:
    """burn's `fusion` and `autotune` on wgpu: cargo confirms both findings' fixes in one copy,
    and each says what Cargo.lock gains with it, as `--fix` writes it: `fusion` brings
    burn-fusion and burn-remote's tokio features (below a package the lock already held),
    `autotune` (burn-cubecl's) nothing."""
    project = _copy("gpu-only", tmp_path, offline_cargo_for)
    locked = locked_packages(project)
    report = json.loads(run_in_process(str(project), "--format", "json").stdout)
    counts = [
        (f["fix"]["added_packages"], f["fix"]["lockfile_added_packages"])
        for f in report["findings"]
    ]
    assert run_in_process(str(project), "--fix").returncode == 0
    gained = locked_packages(project) - locked
    assert ("tokio-macros", "2.7.2") in gained
    assert counts == [(2, len(gained)), (0, 0)]


def _leaf_twice(
    tmp_path: Path, features: str, *, app: str = "", la: str = "", leaf: str = ""
) -> Path:
    """diffsol's shape: app depends on la, whose `one` and `two` bring leaf under two names
    (cargo refuses a build with both, so `cargo metadata --all-features` fails). `features`
    follows `one` in la's [features]; `app`, `la` and `leaf` add lines to those manifests."""
    la_manifest = PACKAGE.format("la") + (
        f'[features]\none = ["dep:leaf1"]\n{features}\n[dependencies]\n{la}'
        'leaf1 = { package = "leaf", path = "../leaf", optional = true }\n'
        'leaf2 = { package = "leaf", path = "../leaf", optional = true }\n'
    )
    return write_project(
        tmp_path / "ws",
        {
            "Cargo.toml": '[workspace]\nresolver = "2"\nmembers = ["app", "la"]\n',
            "app/Cargo.toml": PACKAGE.format("app")
            + f'[dependencies]\nla = {{ path = "../la" }}\n{app}',
            "app/src/main.rs": "fn main() {}\n",
            "la/Cargo.toml": la_manifest,
            "la/src/lib.rs": "",
            "leaf/Cargo.toml": PACKAGE.format("leaf") + leaf,
            "leaf/src/lib.rs": "",
        },
    )


def test_a_fix_is_checked_with_the_features_the_audit_resolved(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """diffsol: its features for LLVM 15 to 21 exclude each other, so `cargo metadata
    --all-features` fails where the default build resolves. The fix check asked cargo with
    `--all-features` though the audit had not: each fix was "not confirmed" over that old error,
    and `--fix` wrote none."""
    use_registry(tmp_path_factory.mktemp("registry"), POOLED_REGISTRY, monkeypatch)
    # Two names for one package: cargo refuses the build that turns both on.
    project = _leaf_twice(tmp_path, 'two = ["dep:leaf2"]\n', app='gemmish = "0.1.0"\n')
    assert _cargo(project, "metadata", "--format-version", "1", "--all-features").returncode
    report = json.loads(run_in_process(str(project), "--format", "json").stdout)
    [finding] = report["findings"]
    assert finding["fix"]["description"] == 'add "rayon" to the features of gemmish'
    assert finding["fix"]["confirmed"], finding["fix"]
    fixed = run_in_process(str(project), "--fix")
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr
    assert (
        'gemmish = { version = "0.1.0", features = ["rayon"] }'
        in (project / "app" / "Cargo.toml").read_text()
    )


def test_builds_cargo_cannot_resolve_together_are_audited_apart(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """diffsol again: `cargo metadata --all-features` fails, so `--each-feature` and
    `--features` stopped with its error. Each build is resolved over metadata asked with its
    own features, as cargo tree resolves it; one cargo refuses even alone is said, not
    audited."""
    use_registry(tmp_path_factory.mktemp("registry"), POOLED_REGISTRY, monkeypatch)
    # Two names for one package: cargo refuses `both`, and `--all-features`.
    features = 'two = ["dep:leaf2", "gemmish/rayon"]\nboth = ["one", "two"]\n'
    project = _leaf_twice(
        tmp_path,
        features,
        la='gemmish = { version = "0.1.0", optional = true }\n',
        leaf='[dependencies]\ngemmish = "0.1.0"\n',
    )
    assert _cargo(project, "metadata", "--format-version", "1", "--all-features").returncode
    args = (str(project), "--each-feature", "--format", "json")
    each = run_in_process(*args)
    refused = (
        "configuration `--features both --no-default-features`: cargo metadata failed: the "
        "crate `la v0.1.0 ("
    )
    assert each.returncode == 2
    assert each.stderr.startswith(f"featcheck: error: {refused}") and each.stderr.count("\n") == 1
    report = json.loads(each.stdout)
    [error] = report["configuration_errors"]
    assert error.startswith(refused) and error.endswith("multiple times with different names")
    assert [c["features"] for c in report["configurations"]["la"]] == [
        [],
        [],
        ["gemmish"],
        ["one"],
        ["two"],
    ]
    flagged = {(f["member"], *f["configuration"]["features"]) for f in report["findings"]}
    # `two` turns `rayon` on, and brings nothing to `one`'s build but pool: an offer there
    assert flagged == {("la", "gemmish"), ("leaf",)}
    assert report == json.loads(run_in_process_resolved_by("cargo", *args).stdout)

    # la offers `two` for `rayon`: its `one` build is left to its users, as with any metadata.
    args = (str(project), "--features", "la/one", "--format", "json")
    one = run_in_process(*args)
    assert (one.returncode, one.stderr) == (1, ""), one.stdout + one.stderr
    report = json.loads(one.stdout)
    assert report["configurations"]["la"] == [
        {"features": ["one"], "no_default_features": False, "all_features": False}
    ]
    assert [f["member"] for f in report["findings"]] == ["app", "leaf"]  # app: la/one too
    assert report == json.loads(run_in_process_resolved_by("cargo", *args).stdout)


def _app_beside(name: str, dependencies: str, tmp_path: Path) -> Path:
    """top/app, locked: a binary using gemmish and, as `dependencies` (its manifest's tables)
    say, the path package top/`name` beside it."""
    files = {
        "Cargo.toml": PACKAGE.format("app") + dependencies + 'gemmish = "0.1.0"\n',
        "src/main.rs": "fn main() {}\n",
        f"../{name}/Cargo.toml": PACKAGE.format(name),
        f"../{name}/src/lib.rs": "",
    }
    return write_project(tmp_path / "top" / "app", files)


def test_a_path_package_outside_the_checkout_is_linked_where_cargo_checks_the_fix(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """tokenizers' `bindings/python`, outside a git checkout: its path dependency
    `../../tokenizers` lies outside the checkout, which featcheck copies nothing from, so the
    copy a fix is checked on lacked it, and every fix read "cargo cannot resolve it: cargo
    metadata failed: failed to read `/tmp/featcheck-fix-…/Cargo.toml`"; then "cargo could not
    check it". It is linked where the copy's `../helper` finds it: cargo reads it there, as for
    the audit itself, and `--fix` applies the fix; nothing is written there."""
    use_registry(tmp_path_factory.mktemp("registry"), POOLED_REGISTRY, monkeypatch)
    project = _app_beside("helper", '[dependencies]\nhelper = { path = "../helper" }\n', tmp_path)
    helper = (project.parent / "helper" / "Cargo.toml").read_text()
    report = run_in_process(str(project))
    assert report.returncode == 1, report.stdout + report.stderr
    assert "featcheck-fix-" not in report.stdout
    assert "`--fix` applies it" in report.stdout, report.stdout
    fixed = run_in_process(str(project), "--fix")
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr
    assert "featcheck: fixed" in fixed.stderr
    assert (project.parent / "helper" / "Cargo.toml").read_text() == helper


def test_an_optional_path_package_no_audited_build_holds_is_copied_too(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """burn_jepa's shape: `ext = { path = "../ext", optional = true }`, beside the workspace in
    one git checkout. The default build leaves ext out, so its metadata lacks it, but cargo
    reads its manifest to load the workspace: the copy a fix is checked on lacked it, and every
    fix read "cargo cannot resolve it: … failed to read `/tmp/featcheck-fix-…/ext/Cargo.toml`"."""
    use_registry(tmp_path_factory.mktemp("registry"), POOLED_REGISTRY, monkeypatch)
    dependencies = '[features]\nwith-ext = ["dep:ext"]\n\n[dependencies]\n'
    dependencies += 'ext = { path = "../ext", optional = true }\n'
    project = _app_beside("ext", dependencies, tmp_path)
    subprocess.run(["git", "init", "-q", str(tmp_path / "top")], check=True)
    report = json.loads(run_in_process(str(project), "--format", "json").stdout)
    [finding] = report["findings"]
    assert finding["fix"] is not None, finding
    assert finding["fix"]["confirmed"], finding["fix"]
    assert finding["fix"]["description"] == 'add "rayon" to the features of gemmish'


def test_a_git_dependency_is_not_a_path_package_the_copy_leaves_out(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """stardist-rs: its git dependency lies in cargo's home, outside the checkout, as every git
    checkout does; cargo finds it there for the copy as for the user. It was said to be left
    out of the copy, and the fix cargo had confirmed before was not confirmed."""
    use_registry(tmp_path_factory.mktemp("registry"), POOLED_REGISTRY, monkeypatch)
    library = write_project(
        tmp_path / "helper", {"Cargo.toml": PACKAGE.format("helper"), "src/lib.rs": ""}
    )
    identity = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@e", "GIT_COMMITTER_NAME": "t"}
    environment = {**os.environ, **identity, "GIT_COMMITTER_EMAIL": "t@e"}
    for arguments in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "one"]):
        subprocess.run(["git", "-C", str(library), *arguments], check=True, env=environment)
    app = PACKAGE.format("app") + (
        f'[dependencies]\nhelper = {{ git = "file://{library}" }}\ngemmish = "0.1.0"\n'
    )
    project = tmp_path / "app"
    (project / "src").mkdir(parents=True)
    (project / "src" / "main.rs").write_text("fn main() {}\n")
    (project / "Cargo.toml").write_text(app)
    (project / "featcheck.toml").write_text(GEMMISH_RULE)
    # Fetched once, as a user's cargo has: the audit itself runs offline.
    fetch = ["cargo", "generate-lockfile", "--config", "net.offline=false"]
    subprocess.run(fetch, cwd=project, check=True, capture_output=True)
    report = json.loads(run_in_process(str(project), "--format", "json").stdout)
    [finding] = report["findings"]
    assert finding["fix"] is not None, finding
    assert finding["fix"]["confirmed"] and finding["fix"]["description"] == (
        'add "rayon" to the features of gemmish'
    )


SHARED_POOL = {
    "core-pool": {"1.0.0": {}},
    "pool": {"1.0.0": {"dependencies": {"core-pool": "1.0.0"}}},
    "gemmish": POOLED_REGISTRY["gemmish"],
}
"""gemmish's `rayon` brings pool, which Cargo.lock lacks, and pool its core-pool, which the
lock holds for member b alone."""


def test_one_edit_for_several_members_names_one_count_of_what_it_adds(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """bayesiangpu-core: the workspace entry's edit, which cargo confirmed for each member's
    build, read "adds 5 packages" for two members and "adds 2" for four: each counted what its
    own build gains. One edit adds, to the builds it changes, one set of packages."""
    use_registry(tmp_path_factory.mktemp("registry"), SHARED_POOL, monkeypatch)
    root = (
        '[workspace]\nmembers = ["a", "b"]\nresolver = "2"\n\n[workspace.dependencies]\n'
        'gemmish = { version = "0.1", default-features = false }\n'
    )
    files = {"Cargo.toml": root, "a/src/main.rs": "fn main() {}", "b/src/main.rs": "fn main() {}"}
    files["a/Cargo.toml"] = PACKAGE.format("a") + "[dependencies]\ngemmish.workspace = true\n"
    files["b/Cargo.toml"] = PACKAGE.format("b") + (
        '[dependencies]\ngemmish.workspace = true\ncore-pool = "1.0.0"\n'
    )
    project = write_project(tmp_path / "ws", files)
    assert "core-pool" in (project / "Cargo.lock").read_text()

    report = run_in_process(str(project), "--format", "json")
    assert report.returncode == 1, report.stdout + report.stderr
    fixes = {f["member"]: f["fix"] for f in json.loads(report.stdout)["findings"]}
    assert {m: (f["edits"][0]["line"], f["added_packages"]) for m, f in fixes.items()} == {
        "a": (6, 2),
        "b": (6, 2),
    }


def test_a_path_package_outside_the_checkout_is_neither_quoted_nor_edited(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """cargo reads `../helper`; featcheck quoted its line (a secret beside it went into the
    report and a PR's annotations) and offered a fix `--fix` then refused to write. The finding
    points at the checkout's own line that brings it, and the fix is the checkout's."""
    use_registry(tmp_path_factory.mktemp("registry"), POOLED_REGISTRY, monkeypatch)
    secret = "# ghp_not-the-checkouts-to-quote"
    files = {
        "Cargo.toml": PACKAGE.format("app") + '[dependencies]\nhelper = { path = "../helper" }\n',
        "src/main.rs": "fn main() {}\n",
        "../helper/Cargo.toml": PACKAGE.format("helper")
        + f'[dependencies]\ngemmish = {{ version = "0.1.0" }}  {secret}\n',
        "../helper/src/lib.rs": "",
    }
    project = write_project(tmp_path / "top" / "app", files)
    helper = (project.parent / "helper" / "Cargo.toml").read_text()
    report = run_in_process(str(project), "--format", "json")
    [finding] = json.loads(report.stdout)["findings"]
    assert (finding["location"]["file"], finding["location"]["line"]) == ("Cargo.toml", 7)
    assert secret not in report.stdout + run_in_process(str(project)).stdout
    assert [e["file"] for e in finding["fix"]["edits"]] == ["Cargo.toml"]
    fixed = run_in_process(str(project), "--fix")
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr
    assert (project.parent / "helper" / "Cargo.toml").read_text() == helper
