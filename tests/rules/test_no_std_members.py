"""A member whose crate roots say `no_std` is meant for targets without std, as burn's own
`burn-no-std-tests` (`#![no_std]`) and its wasm examples (`#![cfg_attr(not(test), no_std)]`).

Audited on the host, such a member was flagged for what needs std or threads (burn-flex without
`rayon`), and the fix of a binary's finding went into the workspace entry the no_std member
inherits: `featcheck --fix` on burn's repository added `rayon` to the build of its no_std test
crate. Now rules that need std or threads do not apply to a no_std build (said with -v, and in
JSON's `skipped`), so the no_std member asks for nothing and no fix adds to its build.

The binary's fix is then a line of its own for gemmish, a path package of the workspace: that
line inherits the workspace entry (`workspace = true`), where it used to carry a version only,
which brings crates.io's gemmish beside the workspace's own.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from cli_in_process import run_in_process
from synthetic_registry import GEMMISH_RULE, PACKAGE, use_registry

pytestmark = [pytest.mark.usefixtures("remembered_cargo"), pytest.mark.cargo]

# The tests' gemmish rule, needing threads as FC001 does.
RULE = GEMMISH_RULE.replace(
    'feature = "rayon"\n', 'feature = "rayon"\ntarget-needs = ["threads"]\n'
)
assert RULE != GEMMISH_RULE
# crates.io's gemmish, which a line with a version only would bring in.
REGISTRY = {"gemmish": {"0.1.0": {"features": {"default": [], "rayon": []}}}}
SKIP = "the member's crate roots say `no_std`: it is meant for targets without `std`"


def _workspace(root: Path, embedded_root: str) -> Path:
    files = {
        "Cargo.toml": (
            '[workspace]\nresolver = "2"\nmembers = ["app", "embedded", "front", "gemmish"]\n\n'
            "[workspace.dependencies]\n"
            'gemmish = { path = "gemmish", default-features = false }\n'
        ),
        "featcheck.toml": RULE,
        "gemmish/Cargo.toml": PACKAGE.format("gemmish") + "[features]\ndefault = []\nrayon = []\n",
        "gemmish/src/lib.rs": "",
        "front/Cargo.toml": PACKAGE.format("front")
        + "[dependencies]\ngemmish = { workspace = true }\n",
        "front/src/lib.rs": "",
        "embedded/Cargo.toml": PACKAGE.format("embedded")
        + '[features]\nstd = []\n\n[dependencies]\nfront = { path = "../front" }\n'
        + "gemmish = { workspace = true }\n",
        "embedded/src/lib.rs": embedded_root,
        "app/Cargo.toml": PACKAGE.format("app") + '[dependencies]\nfront = { path = "../front" }\n',
        "app/src/main.rs": "fn main() {}\n",
    }
    for relative, text in files.items():
        (root / relative).parent.mkdir(parents=True, exist_ok=True)
        (root / relative).write_text(text)
    subprocess.run(["cargo", "generate-lockfile", "--offline"], cwd=root, check=True)
    return root


def _gemmish(root: Path, member: str) -> list[str]:
    tree = ["cargo", "tree", "-e", "normal", "-p", member, "-i", "gemmish", "--offline"]
    done = subprocess.run(
        [*tree, "-f", "{p} [{f}]", "--depth", "0"], cwd=root, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    return [line.replace(str(root), "ROOT") for line in done.stdout.splitlines()]


def _report(root: Path, *flags: str) -> dict[str, object]:
    done = run_in_process(str(root), "--format", "json", *flags)
    assert done.returncode == 1, done.stdout + done.stderr
    report: dict[str, object] = json.loads(done.stdout)
    return report


def _verdicts(report: dict[str, object]) -> tuple[object, ...]:
    """What --no-exec must say as cargo's audit does (it confirms no fix: cargo does)."""
    findings = report["findings"]
    assert isinstance(findings, list)
    shown = [(f["member"], f["code"], f["severity"], f["location"]) for f in findings]
    return shown, report["skipped"]


def test_a_no_std_member_asks_for_nothing_and_no_fix_adds_to_its_build(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    use_registry(tmp_path_factory.mktemp("registry"), REGISTRY, monkeypatch)
    root = _workspace(tmp_path / "ws", "//! Runs on microcontrollers.\n#![no_std]\n")

    report = _report(root)
    findings = report["findings"]
    assert isinstance(findings, list)
    assert [(f["member"], f["severity"]) for f in findings] == [("app", "error"), ("front", "info")]
    assert report["skipped"] == [
        {
            "code": "ACME001",
            "rule": "gemmish-without-rayon",
            "target": findings[0]["target"],
            "reason": SKIP,
            "members": ["embedded"],
            "findings": 1,
        }
    ]
    # The entry and front's line would both reach embedded's build: app gets a line of its own,
    # the workspace's gemmish (`workspace = true`), not crates.io's (a version only).
    assert findings[0]["fix"]["description"] == (
        'add gemmish = { workspace = true, features = ["rayon"] } to [dependencies]'
    )
    assert findings[0]["fix"]["safe"]
    assert {a["note"] for a in findings[0]["alternatives"]} == {
        "not applied by --fix: it adds `rayon` of gemmish 0.1.0 to the no_std build of "
        "embedded, which lacked them"
    }
    assert _verdicts(_report(root, "--no-exec")) == _verdicts(report)

    fixed = run_in_process(str(root), "--fix")
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr
    assert _gemmish(root, "app") == ["gemmish v0.1.0 (ROOT/gemmish) [rayon]"]
    assert _gemmish(root, "embedded") == ["gemmish v0.1.0 (ROOT/gemmish) []"]
    verbose = run_in_process(str(root), "-v")
    assert "ACME001 (gemmish-without-rayon) not applied on " in verbose.stderr
    assert f"{SKIP}; 1 finding not reported (embedded)" in verbose.stderr


STD = ["--features", "std"]


@pytest.mark.parametrize(
    ("embedded_root", "flagged_with"),
    [
        ('#![cfg_attr(not(feature = "std"), no_std)]\n', [STD]),
        ("#![cfg_attr(not(test), no_std)]\n", []),
        ('#![no_std]\n#[cfg(feature = "std")]\nextern crate std;\n', [STD]),
        ("// a crate that uses std\n", [[], STD]),
    ],
    ids=["unless-std", "unless-test", "extern-crate-std", "std"],
)
def test_whether_a_build_is_no_std_follows_its_features(
    embedded_root: str,
    flagged_with: list[list[str]],
    tmp_path_factory: pytest.TempPathFactory,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    """`flagged_with`: the flags of the builds of embedded that use std, and so have the
    finding."""
    use_registry(tmp_path_factory.mktemp("registry"), REGISTRY, monkeypatch)
    root = _workspace(tmp_path / "ws", embedded_root)
    for flags in ([], STD):
        report = _report(root, "-p", "embedded", "-p", "app", *flags)
        members = {f["member"] for f in report["findings"]}  # type: ignore[attr-defined]
        assert ("embedded" in members) is (flags in flagged_with)
        no_exec = _report(root, "-p", "embedded", "-p", "app", "--no-exec", *flags)
        assert _verdicts(no_exec) == _verdicts(report)
    # Configurations that resolve alike share one graph (`std = []` adds nothing): whether each
    # is no_std is still its own.
    each = run_in_process(str(root), "-p", "embedded", "--each-feature", "--format", "json")
    findings = json.loads(each.stdout)["findings"]
    configurations = {tuple(c["features"]) for f in findings for c in f["configurations"]}
    assert configurations == {tuple(flags[1:]) for flags in flagged_with}
