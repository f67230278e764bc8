"""Build configurations like cargo's: --features, --no-default-features, --all-features and
--each-feature, on fixture workspaces whose backends hide behind crate features, through the CLI
as a user runs it, and the `configurations` setting."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from cargo_tree_oracle import run_in_process_resolved_by
from cli_in_process import run_in_process
from support import WORKSPACES, workspace_member

from featcheck.featureset import (
    FeatureSelection,
    each_feature,
    member_selection,
    parse_features,
)
from featcheck.matrix import plan_configurations

pytestmark = pytest.mark.usefixtures("remembered_cargo")
"""featcheck runs in this process; its cargo answers an identical question (one fixture audited
with several flags that all start from `cargo metadata --all-features`) from its first real
answer (tests/cargo_memo.py). The differential test of these configurations
(test_configurations_differential.py) runs cargo itself, every time."""

OPTIONAL = WORKSPACES / "optional-backend"
BACKENDS = WORKSPACES / "backend-features"


def _json(*args: str, resolver: str = "featcheck") -> tuple[int, dict[str, Any]]:
    result = run_in_process_resolved_by(resolver, *args, "--format", "json")
    assert result.stdout, result.stderr
    return result.returncode, json.loads(result.stdout)


def _found(report: dict[str, Any]) -> set[tuple[str, str, str]]:
    """(member, code, the configuration's cargo flags) of every finding."""
    return {
        (f["member"], f["code"], FeatureSelection.of(**_flags(f["configuration"])).label)
        for f in report["findings"]
    }


def _flags(configuration: dict[str, Any]) -> dict[str, Any]:
    return {
        "features": configuration["features"],
        "no_default": configuration["no_default_features"],
        "all_features": configuration["all_features"],
    }


# --- the flags' grammar and cargo's rules, in process -------------------------------------------


def test_features_split_like_cargo_and_refuse_what_cargo_refuses() -> None:
    assert parse_features(["a b,c", "d", " ,a"]) == ("a", "b", "c", "d")
    assert parse_features(["burn/rayon", "app?/fast", "x86-v4", "1st", "f+g.h"]) == (
        "burn/rayon",
        "app?/fast",
        "x86-v4",
        "1st",
        "f+g.h",
    )
    for bad in ("-x", "@args", "dep:burn", "a/-b", "a\x1b[2J", "a/b/c"):
        with pytest.raises(ValueError):
            parse_features([bad])


def test_cargo_args_are_one_features_argument() -> None:
    selection = FeatureSelection.of(["b", "a"], no_default=True)
    assert selection.cargo_args() == ["--features=a,b", "--no-default-features"]
    assert selection.label == "--features a,b --no-default-features"
    assert FeatureSelection().label == "default features" and FeatureSelection().is_default


def test_a_member_gets_the_features_it_has_as_cargo_applies_them() -> None:
    package = workspace_member(
        "app",
        {"default": ["fast"], "fast": [], "gpu": ["dep:wgpu"]},
        required=["burn"],
        optional=["rayon", "wgpu"],
    )
    wanted = FeatureSelection.of(["fast", "app/gpu", "burn/rayon", "rayon", "lib/x", "nope"])
    applied, missing = member_selection(wanted, package)
    assert applied.features == ("burn/rayon", "fast", "gpu", "rayon")
    assert missing == ("lib/x", "nope")


def test_each_feature_is_cargo_hacks_matrix() -> None:
    found = each_feature(FeatureSelection(), {"default": ["a"], "a": [], "b": []})
    assert [s.label for s in found] == [
        "default features",
        "--no-default-features",
        "--features a --no-default-features",
        "--features b --no-default-features",
    ]
    with_base = each_feature(FeatureSelection.of(["b"]), {"a": [], "b": []})
    assert [s.label for s in with_base] == [
        "--features b",
        "--features b --no-default-features",
        "--features a,b --no-default-features",
    ]


# --- through the CLI, real cargo offline ----------------------------------------------------------


def test_an_optional_backend_is_flagged_only_in_the_configuration_that_turns_it_on(
    offline_cargo_for: Callable[..., Path],
) -> None:
    offline_cargo_for(OPTIONAL)
    code, report = _json(str(OPTIONAL))
    assert code == 0 and report["findings"] == []

    code, report = _json(str(OPTIONAL), "--features", "ml")
    assert code == 1
    assert _found(report) == {("infer", "FC001", "--features ml")}
    (finding,) = report["findings"]
    # Relative to the repository the fixture lies in.
    file = "fixtures/workspaces/optional-backend/infer/Cargo.toml"
    assert finding["location"]["file"] == file and finding["location"]["line"] == 8
    annotation = run_in_process(str(OPTIONAL), "--features", "ml", "--format", "github").stdout
    assert "member infer, target " in annotation and ", with --features ml%0A" in annotation
    # The fix was confirmed in that configuration: without `ml` burn is not built at all.
    assert finding["fix"]["confirmed"] and finding["fix"]["edits"][0]["features"] == [
        "rayon",
        "simd",
    ]


def test_each_feature_flags_every_optional_backend_in_one_run(
    offline_cargo_for: Callable[..., Path],
) -> None:
    offline_cargo_for(OPTIONAL)
    code, report = _json(str(OPTIONAL), "--each-feature")
    assert code == 1 and report["configuration_errors"] == []
    audited = {
        member: [FeatureSelection.of(**_flags(c)).label for c in found]
        for member, found in report["configurations"].items()
    }
    assert audited == {
        "infer": [
            "default features",
            "--no-default-features",
            "--features ml --no-default-features",
        ],
        "classic": [
            "default features",
            "--no-default-features",
            "--features cli --no-default-features",
            "--features ndarray --no-default-features",
        ],
    }
    assert _found(report) == {
        ("infer", "FC001", "--features ml --no-default-features"),
        ("classic", "FC002", "--features ndarray --no-default-features"),
    }
    text = run_in_process(str(OPTIONAL), "--each-feature", "-p", "classic").stdout
    # One heading for the member; the table and the finding's block name the build.
    assert "\nclassic (" in text and ") with --features" not in text
    assert "\n      1  --features ndarray --no-default-features\n" in text
    assert "  = builds: --features ndarray --no-default-features\n" in text
    assert "error[FC002] burn-ndarray 0.22.1 is built without `multi-threads`" in text
    assert "1 error (1 member, 4 configurations, " in text


def test_three_backend_features_are_audited_in_one_run(
    offline_cargo_for: Callable[..., Path],
) -> None:
    offline_cargo_for(BACKENDS)
    code, report = _json(str(BACKENDS), "--each-feature")
    assert code == 1
    assert _found(report) == {
        ("app", "FC004", "default features"),
        ("app", "FC005", "default features"),
        ("app", "FC001", "--features backend-flex --no-default-features"),
        ("app", "FC002", "--features backend-ndarray --no-default-features"),
    }
    # The wgpu findings of the default build and of backend-wgpu alone are one finding each.
    fusion = next(f for f in report["findings"] if f["code"] == "FC004")
    assert [FeatureSelection.of(**_flags(c)).label for c in fusion["configurations"]] == [
        "default features",
        "--features backend-wgpu --no-default-features",
    ]
    ndarray = next(f for f in report["findings"] if f["code"] == "FC002")
    assert ndarray["fix"]["confirmed"], ndarray["alternatives"]


def test_the_cargo_resolver_gets_the_same_flags(offline_cargo_for: Callable[..., Path]) -> None:
    offline_cargo_for(OPTIONAL)
    args = (str(OPTIONAL), "--features", "ml,ndarray", "--no-default-features")
    ours = _json(*args)
    cargos = _json(*args, resolver="cargo")
    assert ours[0] == cargos[0] == 1
    assert (
        _found(ours[1])
        == _found(cargos[1])
        == {
            ("infer", "FC001", "--features ml --no-default-features"),
            ("classic", "FC002", "--features ndarray --no-default-features"),
        }
    )


def test_a_configuration_that_does_not_resolve_is_reported_and_the_others_audited(
    tmp_path: Path, offline_cargo_for: Callable[..., Path]
) -> None:
    offline_cargo_for(OPTIONAL)
    project = tmp_path / "optional-backend"
    shutil.copytree(OPTIONAL, project)
    manifest = project / "Cargo.toml"
    manifest.write_text(
        manifest.read_text()
        + "\n[workspace.metadata.featcheck]\n"
        + 'configurations = [{}, { features = ["gpu"] }, { features = ["ml"] }]\n'
    )
    result = run_in_process(str(project), "--format", "json")
    assert result.returncode == 2
    report = json.loads(result.stdout)
    assert _found(report) == {("infer", "FC001", "--features ml")}
    assert report["configuration_errors"] == [
        "configuration `--features gpu`: none of the selected packages contains this feature: "
        "gpu (selected packages: classic, infer)"
    ]
    assert "featcheck: error: configuration `--features gpu`" in result.stderr

    single = run_in_process(str(project), "-p", "classic", "--features", "ml", "-q")
    assert single.returncode == 2 and single.stdout == ""
    assert (
        "the package 'classic' does not contain this feature: ml" in single.stderr.splitlines()[0]
    )


def test_bad_flags_and_bad_configuration_are_one_line_and_exit_2(
    tmp_path: Path, offline_cargo_for: Callable[..., Path]
) -> None:
    offline_cargo_for(OPTIONAL)
    for args in (
        ("--features=-Zunstable",),
        ("--features", "@file"),
        ("--features", "dep:burn"),
        ("--each-feature", "--all-features"),
        ("--tree", "-", "--features", "ml"),
    ):
        result = run_in_process(str(OPTIONAL), *args)
        assert result.returncode == 2, args
        assert result.stderr.startswith("featcheck: error: ") and "Traceback" not in result.stderr

    project = tmp_path / "optional-backend"
    shutil.copytree(OPTIONAL, project)
    config = project / "featcheck.toml"
    for text, where, message in (
        ('configurations = [{ feature = ["ml"] }]\n', "1:21", "unknown key `feature`"),
        ('configurations = [{ features = ["ml", "-x"] }]\n', "1:39", "invalid character `-`"),
        ("configurations = [{ no-default-features = 1 }]\n", "1:43", "must be true or false"),
        ('configurations = ["ml"]\n', "1:19", "entry must be a table"),
        ('each-feature = "yes"\n', "1:16", "must be true or false"),
    ):
        config.write_text(text)
        result = run_in_process(str(project))
        assert result.returncode == 2, text
        assert f"featcheck.toml:{where}: " in result.stderr and message in result.stderr, (
            text,
            result.stderr,
        )


def test_the_plan_applies_each_configuration_per_member_as_cargo_does() -> None:
    app = workspace_member("app", {"gpu": [], "cpu": []})
    tool = workspace_member("tool", {"cpu": []})
    gpu, cpu = FeatureSelection.of(["gpu"]), FeatureSelection.of(["cpu"])
    plan = plan_configurations([app, tool], [FeatureSelection(), gpu, cpu])
    # `gpu` is app's only: tool builds its defaults there, which it already audits once.
    assert plan.selections == {
        "app-id": [FeatureSelection(), gpu, cpu],
        "tool-id": [FeatureSelection(), cpu],
    }
    assert plan.errors == []
    refused = plan_configurations([app, tool], [FeatureSelection.of(["gpu", "tpu"])])
    assert refused.selections == {"app-id": [], "tool-id": []}
    assert refused.errors == [
        "configuration `--features gpu,tpu`: none of the selected packages contains this "
        "feature: tpu (selected packages: app, tool)"
    ]
    # Resolver 1 with a root package: cargo gives the flags to the root package only.
    legacy = plan_configurations([app, tool], [cpu], legacy_root="app-id")
    assert legacy.selections == {"app-id": [cpu], "tool-id": [FeatureSelection()]}
    assert legacy.errors == [
        "member tool: resolver 1 applies feature flags only to the root package; audited with "
        'its default features (set `resolver = "2"`)'
    ]


def test_no_exec_audits_the_same_configurations_from_the_lockfile(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Cargo.lock lists every optional dependency any feature turns on, so --no-exec needs no
    second look for the configurations."""
    unpacked = tmp_path / "home" / "registry" / "src" / "index.crates.io-1949cf8c6b5b557f"
    unpacked.mkdir(parents=True)
    for package in (WORKSPACES.parent / "registry").iterdir():
        (unpacked / package.name).symlink_to(package, target_is_directory=True)
    monkeypatch.setenv("CARGO_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    code, report = _json(str(OPTIONAL), "--no-exec", "--each-feature")
    assert code == 1 and report["complete"] and report["configuration_errors"] == []
    assert _found(report) == {
        ("infer", "FC001", "--features ml --no-default-features"),
        ("classic", "FC002", "--features ndarray --no-default-features"),
    }
