"""The measured rule pack beyond burn (FC011-FC015) and FC009's third-party and BLAS cases.

Each rule has a workspace that triggers it and one that does not, audited with real cargo
(offline, stub registry) through the CLI (run in the test's process); a finding is asserted with its member, crate,
version, missing feature, severity and the manifest place to edit, and a silence is a verdict
too. The fixes are computed and confirmed by cargo like every other rule's.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from cargo_tree_oracle import run_in_process_resolved_by
from cli_in_process import run_in_process
from support import WORKSPACES
from synthetic_registry import PACKAGE, use_registry, write_project

from featcheck.rules.load import parse_rule
from featcheck.rules.spec import HandledBy, SpecError, ThirdParty
from featcheck.severity import Severity

pytestmark = pytest.mark.usefixtures("remembered_cargo")
"""featcheck's cargo answers an identical question (a rule's workspace audited with either
resolver, then for its fix) from its first real answer (tests/cargo_memo.py); `--resolver
cargo`'s `cargo tree` and the check of a fixed copy by cargo stay real."""


@dataclass(frozen=True)
class Expected:
    member: str
    code: str
    crate: str
    crate_version: str
    feature: str
    severity: str
    place: str  # file:line:column


def _found(report: dict[str, Any]) -> set[Expected]:
    return {
        Expected(
            f["member"],
            f["code"],
            f["crate"],
            f["crate_version"],
            f["feature"],
            f["severity"],
            "{file}:{line}:{column}".format(**f["location"]),
        )
        for f in report["findings"]
    }


def _audit(workspace: Path, *args: str, resolver: str = "featcheck") -> dict[str, Any]:
    # Places relative to the workspace, wherever it lies (a copy, or a fixture in the repository).
    path = str(workspace)
    argv = (path, "--format", "json", "--root", path, *args)
    result = run_in_process_resolved_by(resolver, *argv)
    assert result.returncode in (0, 1), result.stderr
    report: dict[str, Any] = json.loads(result.stdout)
    failing = any(f["severity"] != "info" for f in report["findings"])
    assert result.returncode == (1 if failing else 0)
    return report


X86_64 = "x86_64-unknown-linux-gnu"

CASES: dict[str, set[Expected]] = {
    # default-features = false with std and unicode: no perf-* feature survives.
    "regex-without-perf": {
        Expected("app", "FC011", "regex", "1.13.2", "perf", "warning", "Cargo.toml:9:26")
    },
    # The same trim with `perf` named.
    "regex-with-perf": set(),
    "memchr-without-std": {
        Expected("app", "FC012", "memchr", "2.8.3", "std", "warning", "Cargo.toml:9:27")
    },
    # The same declaration; regex's own `std` turns memchr/std on in this build.
    "memchr-with-std": set(),
    "crc32fast-without-std": {
        Expected("app", "FC013", "crc32fast", "1.5.5", "std", "warning", "Cargo.toml:8:30")
    },
    "crc32fast-with-std": set(),
    "rustfft-without-avx": {
        Expected("app", "FC014", "rustfft", "6.4.1", "avx", "warning", "Cargo.toml:9:28")
    },
    "rustfft-with-avx": set(),
    # FC009: ndarray reached only through a third-party crate is info; the member that
    # depends on ndarray itself gets the warning, at its own ndarray line.
    "ndarray-third-party": {
        Expected(
            "sampler",
            "FC009",
            "matrixmultiply",
            "0.3.11",
            "threading",
            "info",
            "sampler/Cargo.toml:9:1",
        ),
        Expected(
            "solver",
            "FC009",
            "matrixmultiply",
            "0.3.11",
            "threading",
            "warning",
            "solver/Cargo.toml:9:1",
        ),
    },
    # ndarray's `blas` sends f32/f64 matrix products to BLAS: matrixmultiply is not the matmul.
    "ndarray-blas": set(),
    # flate2 without its default `runtime_detection` takes crc32fast's `std` away; only flate2
    # brings crc32fast in (info), and the place to edit is the flate2 line.
    "flate2-without-runtime-detection": {
        Expected("app", "FC013", "crc32fast", "1.5.5", "std", "info", "Cargo.toml:9:29")
    },
    # FC015 is an opt-in hint: silent unless selected.
    "flate2-miniz": set(),
}


@pytest.mark.parametrize("resolver", ["featcheck", "cargo"])
@pytest.mark.parametrize("workspace", sorted(CASES))
def test_rule_fires_where_the_build_lacks_the_feature_and_only_there(
    workspace: str, resolver: str, offline_cargo_for: Callable[..., Path]
) -> None:
    offline_cargo_for(WORKSPACES / workspace)
    # featcheck's own resolver and cargo tree per member must agree, third-party case included.
    report = _audit(WORKSPACES / workspace, "--target", X86_64, resolver=resolver)
    assert _found(report) == CASES[workspace]


@pytest.mark.parametrize(
    "workspace", ["memchr-without-std", "crc32fast-without-std", "rustfft-without-avx"]
)
@pytest.mark.parametrize("target", ["aarch64-unknown-linux-gnu", "wasm32-unknown-unknown"])
def test_x86_only_rules_stay_silent_on_other_targets(
    workspace: str, target: str, offline_cargo_for: Callable[..., Path]
) -> None:
    offline_cargo_for(WORKSPACES / workspace)
    # Run-time AVX2/PCLMULQDQ detection and rustfft's AVX kernels exist only on x86_64.
    assert _audit(WORKSPACES / workspace, "--target", target)["findings"] == []


@pytest.mark.parametrize(
    "workspace, expected",
    [
        (
            "flate2-miniz",
            {Expected("app", "FC015", "flate2", "1.1.11", "zlib-rs", "info", "Cargo.toml:9:1")},
        ),
        ("flate2-zlib-rs", set()),
    ],
)
def test_the_zlib_rs_hint_when_selected(
    workspace: str, expected: set[Expected], offline_cargo_for: Callable[..., Path]
) -> None:
    offline_cargo_for(WORKSPACES / workspace)
    report = _audit(WORKSPACES / workspace, "--target", X86_64, "--select", "FC015")
    assert _found(report) == expected


def test_third_party_finding_says_whose_choice_it_is(
    offline_cargo_for: Callable[..., Path],
) -> None:
    offline_cargo_for(WORKSPACES / "ndarray-third-party")
    report = _audit(WORKSPACES / "ndarray-third-party", "--target", X86_64)
    notes = {f["member"]: f["notes"] for f in report["findings"]}
    assert notes["sampler"][0] == (
        "matrixmultiply comes only through ndarray-rand, a crate this workspace does not own"
    )
    assert notes["solver"][0] == "solver depends on ndarray directly, which uses matrixmultiply"


@pytest.mark.cargo
def test_a_third_party_note_names_the_path_the_rule_leaves_aside(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """diffsol's examples depend on nalgebra themselves: matrixmultiply did not come "only
    through" the crate that brings their ndarray, as the note said."""
    multiply = {"dependencies": {"matrixmultiply": "0.3.11"}}
    use_registry(
        tmp_path_factory.mktemp("registry"),
        {
            "matrixmultiply": {"0.3.11": {"features": {"threading": []}}},
            "nalgebra": {"0.35.0": multiply},
            "ndarray": {
                "0.16.1": {
                    **multiply,
                    "features": {"matrixmultiply-threading": ["matrixmultiply/threading"]},
                }
            },
            "ndarray-npy": {"0.9.0": {"dependencies": {"ndarray": "0.16.1"}}},
        },
        monkeypatch,
    )
    manifest = PACKAGE.format("app") + '[dependencies]\nnalgebra = "0.35"\nndarray-npy = "0.9"\n'
    project = write_project(tmp_path / "app", {"Cargo.toml": manifest, "src/main.rs": ""})
    [finding] = _audit(project, "--target", X86_64)["findings"]
    assert (finding["code"], finding["severity"]) == ("FC009", "info")
    assert finding["notes"][0] == (
        "apart from nalgebra, which this rule does not follow, matrixmultiply comes only through "
        "ndarray-npy, a crate this workspace does not own"
    )


FIXED = {
    "regex-without-perf": ("regex", "perf", ()),
    "memchr-without-std": ("memchr", "std", ()),
    "crc32fast-without-std": ("crc32fast", "std", ()),
    "rustfft-without-avx": ("rustfft", "avx", ()),
    "flate2-miniz": ("flate2", "zlib-rs", ("--select", "FC015")),
    # FC013 through flate2: the fix turns flate2's `runtime_detection` back on.
    "flate2-without-runtime-detection": ("flate2", "runtime_detection", ()),
}


@pytest.mark.parametrize("workspace", sorted(FIXED))
def test_fix_names_the_feature_and_cargo_confirms_it(
    workspace: str, tmp_path: Path, offline_cargo_for: Callable[..., Path]
) -> None:
    project = tmp_path / workspace
    shutil.copytree(WORKSPACES / workspace, project)
    offline_cargo_for(project)  # the view holds what the fix turns on
    crate, feature, select = FIXED[workspace]
    (finding,) = _audit(project, "--target", X86_64, *select)["findings"]
    fix = finding["fix"]
    assert fix["safe"] and fix["confirmed"], fix
    assert any(feature in e["features"] for e in fix["edits"]), fix
    assert any(e["declaration"] == ["dependencies", crate] for e in fix["edits"]), fix

    # Whatever the finding's level (flate2's are info): every safe fix is applied.
    level = ("--fix-level", "info")
    result = run_in_process(
        str(project), "--fix", *level, "--target", X86_64, *select, "--format", "json"
    )
    assert json.loads(result.stdout)["findings"] == [], result.stderr
    assert result.returncode == 0
    assert feature in (project / "Cargo.toml").read_text()


_SPEC = {"code": "ACME001", "name": "x-without-y", "crates": ["x"], "feature": "y"}


def test_third_party_and_handled_by_are_read_from_the_spec() -> None:
    used = {
        "reachable": True,
        "third-party": {"severity": "info", "own": ["ndarray"]},
        "unless-handled-by": [{"crate": "ndarray", "feature": "blas"}],
        "unless-dependency-has": [{"crate": "curve25519-dalek", "feature": "precomputed-tables"}],
        "unless-dependent": ["regex"],
        "unless-built-with": ["any_zlib"],
    }
    rule = parse_rule({**_SPEC, "used-when": used}, builtin=False)
    assert rule.used_when.third_party == ThirdParty(Severity.INFO, ("ndarray",))
    assert rule.used_when.handled_by == (HandledBy("ndarray", ("blas",)),)
    assert rule.used_when.unless_dependency_has == (
        HandledBy("curve25519-dalek", ("precomputed-tables",)),
    )
    assert rule.used_when.unless_dependent == ("regex",)
    assert rule.used_when.unless_built_with == ("any_zlib",)
    both = [{"crate": "regex-automata", "feature": ["hybrid", "perf-literal"]}]
    listed = parse_rule(
        {**_SPEC, "used-when": {**used, "unless-dependency-has": both}}, builtin=False
    )
    assert listed.used_when.unless_dependency_has == (
        HandledBy("regex-automata", ("hybrid", "perf-literal")),
    )


@pytest.mark.parametrize(
    "used, path, message",
    [
        ({"third-party": {"severity": "fatal"}}, ("third-party", "severity"), "severity"),
        ({"third-party": {"own": ["ndarray"]}}, ("third-party",), "needs `severity`"),
        ({"third-party": {"severity": "info", "mine": []}}, ("third-party", "mine"), "unknown"),
        ({"unless-handled-by": {"crate": "ndarray"}}, ("unless-handled-by",), "list of tables"),
        ({"unless-handled-by": [{"crate": "ndarray"}]}, ("unless-handled-by", 0), "`feature`"),
        (
            {"unless-handled-by": [{"crate": "nd array", "feature": "blas"}]},
            ("unless-handled-by", 0, "crate"),
            "not a crate name",
        ),
        (
            {"unless-dependency-has": [{"feature": "precomputed-tables"}]},
            ("unless-dependency-has", 0),
            "an `unless-dependency-has` entry needs `crate`",
        ),
        ({"unless-dependent": ["re gex"]}, ("unless-dependent", 0), "must be a crate name"),
        (
            {"unless-dependency-has": [{"crate": "regex-automata", "feature": ["hy brid"]}]},
            ("unless-dependency-has", 0, "feature", 0),
            "must be a feature name",
        ),
        ({"unless-built-with": "any_zlib"}, ("unless-built-with",), "array of strings"),
    ],
)
def test_malformed_third_party_or_handled_by_is_refused_at_its_key(
    used: dict[str, Any], path: tuple[str | int, ...], message: str
) -> None:
    with pytest.raises(SpecError) as caught:
        parse_rule({**_SPEC, "used-when": {"reachable": True, **used}}, builtin=False)
    assert caught.value.path == ("used-when", *path)
    assert message in str(caught.value)
