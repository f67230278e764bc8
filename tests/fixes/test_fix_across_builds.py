"""One finding's fix among the other builds of the workspace, as argmin and tellegen showed.

- `--each-feature` places a finding once for the builds that reach the crate the same way.
  argmin-math's `ndarray_0_15` and `ndarray_0_16` are two versions of ndarray behind two
  features; both build the same matrixmultiply without `threading`. The builds were one finding,
  and the only fix serving both was a new direct matrixmultiply line, which every build of the
  library would get, with or without ndarray. Each path is its own finding now, fixed on its own
  line.
- A member with the finding in another configuration asks for what a fix adds to it.
- A finding takes the edit the other findings of the crate chose, where it clears it too.
- A library whose feature selects the backend (`cpu = ["burn/flex"]`) asks for the backend's
  missing feature there (`"burn/rayon"`): a line asking for it would give its other backends'
  builds what they do not use. Two such features (`wgpu`, `vulkan`) each get the edit.
- A member's build that lacks the crate asks for nothing, whatever its other builds have: the
  crate added to it is a cost (tendermint-rpc's default build got simdutf8).
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from cli_in_process import run_in_process
from synthetic_registry import PACKAGE, use_registry, write_project

pytestmark = [pytest.mark.usefixtures("remembered_cargo"), pytest.mark.cargo]

_ARRAY = {
    "features": {"default": [], "threading": ["gemmish/rayon"]},
    "dependencies": {"gemmish": {"version": "0.1", "default-features": False}},
}
REGISTRY = {
    "gemmish": {"0.1.0": {"features": {"default": [], "rayon": []}}},
    "arr": {"0.15.0": _ARRAY, "0.16.0": _ARRAY},
}
MANIFEST = PACKAGE.format("mathlib") + (
    "[dependencies]\n"
    'arr_15 = { package = "arr", version = "0.15", optional = true }\n'
    'arr_16 = { package = "arr", version = "0.16", optional = true }\n'
    "\n[features]\n"
    'old = ["arr_15"]\n'
    'new = ["arr_16"]\n'
)


def _gemmish(project: Path, feature: str) -> str:
    tree = ["cargo", "tree", "-e", "normal", "-i", "gemmish", "-f", "{p} [{f}]", "--offline"]
    flags = ["--no-default-features", "--features", feature]
    run = subprocess.run([*tree, *flags], cwd=project, capture_output=True, text=True, check=True)
    return run.stdout.splitlines()[0]


def test_builds_reaching_the_crate_through_other_dependencies_are_fixed_apart(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    use_registry(tmp_path_factory.mktemp("registry"), REGISTRY, monkeypatch)
    files = {"src/lib.rs": "", "Cargo.toml": MANIFEST}
    project = write_project(tmp_path / "mathlib", files)

    report = run_in_process(str(project), "--each-feature", "--format", "json")
    assert report.returncode == 0, report.stdout + report.stderr  # a library's are infos
    findings = json.loads(report.stdout)["findings"]
    placed = {
        f["location"]["line"]: (
            [c["features"] for c in f["configurations"]],
            f["fix"]["description"],
            f["fix"]["safe"],
        )
        for f in findings
    }
    assert placed == {
        7: ([["arr_15"], ["old"]], 'add "threading" to the features of arr_15', True),
        8: ([["arr_16"], ["new"]], 'add "threading" to the features of arr_16', True),
    }

    fixed = run_in_process(str(project), "--each-feature", "--fix", "--fix-level", "info")
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr
    assert _gemmish(project, "old") == "gemmish v0.1.0 [rayon]"
    assert _gemmish(project, "new") == "gemmish v0.1.0 [rayon]"
    # No build gets gemmish it did not have: the fix went on the optional lines.
    assert "gemmish" not in (project / "Cargo.toml").read_text()
    again = run_in_process(str(project), "--each-feature", "--format", "json")
    assert json.loads(again.stdout)["findings"] == []


# argmin's finitediff builds ndarray behind its `ndarray` feature, and its examples, binaries,
# turn that on and have the same finding in their default builds. finitediff's fix counted them
# as builds that lack what it adds: they ask for it, in the configuration they have it in.
ASKING_REGISTRY = {
    "rayonish": {"1.0.0": {}},
    "gemmish": {
        "0.1.0": {
            "features": {"default": [], "rayon": ["dep:rayonish"]},
            "dependencies": {"rayonish": {"version": "1", "optional": True}},
        }
    },
    "arr": {"0.16.0": _ARRAY},
}
WORKSPACE = '[workspace]\nresolver = "2"\nmembers = ["diff", "example"]\n'
DIFF = PACKAGE.format("diff") + '[dependencies]\narr = { version = "0.16", optional = true }\n'
EXAMPLE = PACKAGE.format("example") + (
    '[dependencies]\ndiff = { path = "../diff", features = ["arr"] }\narr = "0.16"\n'
)


def test_members_with_the_finding_in_another_configuration_ask_for_the_fix(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    use_registry(tmp_path_factory.mktemp("registry"), ASKING_REGISTRY, monkeypatch)
    files = {
        "Cargo.toml": WORKSPACE,
        "diff/Cargo.toml": DIFF,
        "diff/src/lib.rs": "",
        "example/Cargo.toml": EXAMPLE,
        "example/src/main.rs": "fn main() {}\n",
    }
    project = write_project(tmp_path / "argmin", files)
    report = run_in_process(str(project), "--each-feature", "--format", "json")
    findings = {f["member"]: f for f in json.loads(report.stdout)["findings"]}
    library = findings["diff"]
    assert [c["features"] for c in library["configurations"]] == [["arr"]]
    assert findings["example"]["configurations"][0]["features"] == []
    assert library["fix"]["description"] == 'add "threading" to the features of arr'
    assert library["fix"]["safe"], library["fix"]["note"]
    # The example takes the library's edit, which clears it too, over a line of its own.
    assert findings["example"]["fix"]["edits"] == library["fix"]["edits"]
    fixed = run_in_process(str(project), "--each-feature", "--fix", "--fix-level", "info")
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr
    assert (project / "example" / "Cargo.toml").read_text() == EXAMPLE
    again = run_in_process(str(project), "--each-feature", "--format", "json")
    assert json.loads(again.stdout)["findings"] == []


# tellegen: three members built on the tellegen library took the library's faer edit, while
# `benchmarks`, built on it too, took a faer line of its own (fewer packages over the workspace).
# `--fix` wrote both, the second for nothing. Here `cli` also turns on gemmish's `alpha`, so
# rayon brings beta and gamma there: the library's edit adds 2 packages and one Cargo.lock lacks
# (cargo must confirm it), a line of bench's own 1.
ONE_EDIT_REGISTRY = {
    "rayonish": {"1.0.0": {}},
    "beta": {"1.0.0": {}},
    "gamma": {"1.0.0": {}},
    "alpha": {
        "1.0.0": {
            "features": {"fast": ["dep:beta", "dep:gamma"]},
            "dependencies": {
                "beta": {"version": "1", "optional": True},
                "gamma": {"version": "1", "optional": True},
            },
        }
    },
    "gemmish": {
        "0.1.0": {
            "features": {"default": [], "rayon": ["dep:rayonish", "alpha?/fast"]},
            "dependencies": {
                "rayonish": {"version": "1", "optional": True},
                "alpha": {"version": "1", "optional": True},
            },
        }
    },
}
ONE_EDIT_FILES = {
    "Cargo.toml": '[workspace]\nresolver = "2"\nmembers = ["core", "cli", "bench", "other"]\n',
    "core/Cargo.toml": PACKAGE.format("core")
    + '[dependencies]\ngemmish = { version = "0.1", default-features = false }\n',
    "core/src/lib.rs": "",
    "cli/Cargo.toml": PACKAGE.format("cli")
    + '[dependencies]\ncore = { path = "../core" }\n'
    + 'gemmish = { version = "0.1", default-features = false, features = ["alpha"] }\n',
    "cli/src/main.rs": "fn main() {}\n",
    "bench/Cargo.toml": PACKAGE.format("bench") + '[dependencies]\ncore = { path = "../core" }\n',
    "bench/src/main.rs": "fn main() {}\n",
    # Cargo.lock holds rayonish and beta, not gamma: bench's own line needs no cargo.
    "other/Cargo.toml": PACKAGE.format("other") + '[dependencies]\nrayonish = "1"\nbeta = "1"\n',
    "other/src/lib.rs": "",
}


def test_a_finding_takes_the_edit_the_others_chose_where_it_clears_it_too(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    use_registry(tmp_path_factory.mktemp("registry"), ONE_EDIT_REGISTRY, monkeypatch)
    project = write_project(tmp_path / "tellegen", ONE_EDIT_FILES)
    report = run_in_process(str(project), "--format", "json")
    assert report.returncode == 1, report.stdout + report.stderr
    fixes = {f["member"]: f["fix"] for f in json.loads(report.stdout)["findings"]}
    assert {m: (f["description"], f["edits"][0]["file"]) for m, f in fixes.items()} == {
        member: ('add "rayon" to the features of gemmish', "core/Cargo.toml")
        for member in ("core", "cli", "bench")
    }
    fixed = run_in_process(str(project), "--fix")
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr
    assert (project / "bench" / "Cargo.toml").read_text() == ONE_EDIT_FILES["bench/Cargo.toml"]


# burn's shape: a library picks its backend with a feature of its own, burn's defaults off.
# engine's `rayon` brings its thread pool to every build it is asked in; only the CPU backend,
# which has the pool already, uses it.
BACKENDS_REGISTRY = {
    "rayonish": {"1.0.0": {}},
    "gemmish": {"0.1.0": {"features": {"default": [], "rayon": []}}},
    "flexy": {
        "0.1.0": {
            "features": {"rayon": ["gemmish/rayon"]},
            "dependencies": {
                "gemmish": {"version": "0.1", "default-features": False},
                "rayonish": {"version": "1"},
            },
        }
    },
    "gpuish": {"0.1.0": {}},
    "engine": {
        "1.0.0": {
            "features": {
                "default": ["cpu", "rayon"],
                "cpu": ["dep:flexy"],
                "gpu": ["dep:gpuish"],
                "rayon": ["dep:rayonish", "flexy?/rayon"],
            },
            "dependencies": {
                "flexy": {"version": "0.1", "optional": True},
                "gpuish": {"version": "0.1", "optional": True},
                "rayonish": {"version": "1", "optional": True},
            },
        }
    },
}
RENDER = PACKAGE.format("render") + (
    '[dependencies]\nengine = { version = "1", default-features = false }\n'
    '\n[features]\ndefault = ["cpu"]\ncpu = ["engine/cpu"]\ngpu = ["engine/gpu"]\n'
)


def _packages(project: Path, *flags: str) -> set[str]:
    tree = ["cargo", "tree", "-e", "normal", "--prefix", "none", "-f", "{p} [{f}]", "--offline"]
    run = subprocess.run([*tree, *flags], cwd=project, capture_output=True, text=True, check=True)
    return {line.removesuffix(" (*)") for line in run.stdout.splitlines()}


def _threaded_alone(project: Path, *features: str) -> None:
    """Each feature's build alone (no defaults) has gemmish with rayon, as cargo resolves it."""
    for feature in features:
        built = _packages(project, "--no-default-features", "--features", feature)
        assert "gemmish v0.1.0 [rayon]" in built, feature


def test_a_library_asks_for_the_backends_feature_where_its_own_feature_selects_it(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    use_registry(tmp_path_factory.mktemp("registry"), BACKENDS_REGISTRY, monkeypatch)
    project = write_project(tmp_path / "render", {"src/lib.rs": "", "Cargo.toml": RENDER})
    gpu_before = _packages(project, "--no-default-features", "--features", "gpu")

    report = run_in_process(str(project), "--each-feature", "--format", "json")
    assert report.returncode == 0, report.stdout + report.stderr  # a library's are infos
    [finding] = json.loads(report.stdout)["findings"]
    assert [c["features"] for c in finding["configurations"]] == [[], ["cpu"]]
    assert finding["fix"]["description"] == 'add "engine/rayon" to `cpu` in [features]'
    assert (finding["fix"]["safe"], finding["fix"]["added_packages"]) == (True, 0)
    # The line itself would give the GPU build a thread pool it does not use.
    [line] = [a for a in finding["alternatives"] if a["edits"][0]["action"] == "add-features"]
    assert (line["description"], line["added_packages"]) == (
        'add "rayon" to the features of engine',
        1,
    )

    fixed = run_in_process(str(project), "--each-feature", "--fix", "--fix-level", "info")
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr
    assert 'cpu = ["engine/cpu", "engine/rayon"]' in (project / "Cargo.toml").read_text()
    assert "gemmish v0.1.0 [rayon]" in _packages(project)
    assert _packages(project, "--no-default-features", "--features", "gpu") == gpu_before
    again = run_in_process(str(project), "--each-feature", "--format", "json")
    assert json.loads(again.stdout)["findings"] == []


VULKAN = PACKAGE.format("render") + (
    '[dependencies]\nengine = { version = "1", default-features = false }\n'
    '\n[features]\ndefault = []\ncpu = ["engine/cpu"]\ncpu-simd = ["engine/cpu", "engine/simd"]\n'
)


def test_builds_whose_fixes_differ_are_each_fixed(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The two builds have one finding at one place, each fixed behind its own feature."""
    # `simd` reaches gemmish too: the two builds hold gemmish with other features, so their
    # findings are placed apart and meet at one place, the engine line.
    registry = json.loads(json.dumps(BACKENDS_REGISTRY))
    registry["engine"]["1.0.0"]["features"]["simd"] = ["flexy?/simd"]
    registry["flexy"]["0.1.0"]["features"]["simd"] = ["gemmish/simd"]
    registry["gemmish"]["0.1.0"]["features"]["simd"] = []
    use_registry(tmp_path_factory.mktemp("registry"), registry, monkeypatch)
    project = write_project(tmp_path / "render", {"src/lib.rs": "", "Cargo.toml": VULKAN})

    report = run_in_process(str(project), "--each-feature", "--format", "json")
    fixes = {
        tuple(c["features"][0] for c in f["configurations"]): f["fix"]["description"]
        for f in json.loads(report.stdout)["findings"]
    }
    assert fixes == {
        ("cpu",): 'add "engine/rayon" to `cpu` in [features]',
        ("cpu-simd",): 'add "engine/rayon" to `cpu-simd` in [features]',
    }
    # `--no-exec` confirms no fix, and keeps them apart all the same.
    unconfirmed = run_in_process(str(project), "--each-feature", "--no-exec", "--format", "json")
    said = {
        tuple(c["features"][0] for c in f["configurations"]): f["suggestion"]
        for f in json.loads(unconfirmed.stdout)["findings"]
    }
    passes = '(engine 1.0.0 passes it on to gemmish), or add "rayon" to the features of engine'
    assert said == {
        ("cpu",): f'add "engine/rayon" to `cpu` in [features] {passes}',
        ("cpu-simd",): f'add "engine/rayon" to `cpu-simd` in [features] {passes}',
    }
    fixed = run_in_process(str(project), "--each-feature", "--fix", "--fix-level", "info")
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr
    again = run_in_process(str(project), "--each-feature", "--format", "json")
    assert json.loads(again.stdout)["findings"] == []


CLIENT = PACKAGE.format("client") + (
    '[dependencies]\narr = { version = "0.16", optional = true }\n\n[features]\nhttp = ["arr"]\n'
)
SERVER = PACKAGE.format("server") + (
    '[dependencies]\nclient = { path = "../client", features = ["http"] }\n'
)


def test_a_build_without_the_crate_does_not_ask_for_it(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # arr passes no feature on to gemmish (encoding_rs none to simdutf8): a fix depends on it.
    registry = json.loads(json.dumps(ASKING_REGISTRY))
    del registry["arr"]["0.16.0"]["features"]["threading"]
    use_registry(tmp_path_factory.mktemp("registry"), registry, monkeypatch)
    files = {
        "Cargo.toml": '[workspace]\nresolver = "2"\nmembers = ["client", "server"]\n',
        "client/Cargo.toml": CLIENT,
        "client/src/lib.rs": "",
        "server/Cargo.toml": SERVER,
        "server/src/main.rs": "fn main() {}",
    }
    project = write_project(tmp_path / "tendermint", files)
    before = _packages(project, "-p", "client")
    assert not any(p.startswith("gemmish") for p in before)

    fixed = run_in_process(str(project), "--each-feature", "--fix", "--fix-level", "info")
    assert fixed.returncode in (0, 1), fixed.stdout + fixed.stderr
    # client's own default build has no arr, so no gemmish: a fix may not bring it there.
    assert _packages(project, "-p", "client") == before
    assert "gemmish v0.1.0 [rayon]" in _packages(project, "-p", "server")


SHARED_REGISTRY = {
    "gemmish": {"0.1.0": {"features": {"default": [], "rayon": []}}},
    "flexy": {
        "0.1.0": {"dependencies": {"gemmish": {"version": "0.1", "default-features": False}}}
    },
    "burnish": {
        "1.0.0": {
            "features": {"default": [], "flexy": ["dep:flexy"]},
            "dependencies": {"flexy": {"version": "0.1", "optional": True}},
        }
    },
}


def test_a_finding_points_at_the_line_that_brings_the_crate(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """`aaa` and `zzz` both reach burnish, but only `zzz`'s `cpu` picks flexy: the finding
    points at app's `zzz` line, not at the first line as near (burn_automata's bevy_burn)."""
    use_registry(tmp_path_factory.mktemp("registry"), SHARED_REGISTRY, monkeypatch)
    library = '[dependencies]\nburnish = { version = "1", default-features = false }\n'
    files = {
        "Cargo.toml": '[workspace]\nresolver = "2"\nmembers = ["app", "aaa", "zzz"]\n',
        "aaa/Cargo.toml": PACKAGE.format("aaa") + library,
        "aaa/src/lib.rs": "",
        "zzz/Cargo.toml": PACKAGE.format("zzz")
        + library
        + '\n[features]\ncpu = ["burnish/flexy"]\n',
        "zzz/src/lib.rs": "",
        "app/Cargo.toml": PACKAGE.format("app")
        + '[dependencies]\naaa = { path = "../aaa" }\nzzz = { path = "../zzz", features = ["cpu"] }\n',
        "app/src/main.rs": "fn main() {}",
    }
    project = write_project(tmp_path / "automata", files)
    report = run_in_process(str(project), "--format", "json", "-p", "app")
    [finding] = json.loads(report.stdout)["findings"]
    assert (finding["location"]["file"], finding["location"]["line"]) == ("app/Cargo.toml", 8)


def test_a_finding_points_at_a_line_on_a_path_the_rule_counts(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The rule does not count paths through nalgebrish (FC009's nalgebra): app's `geo` line
    reaches gemmish only that way, its `zarrish` line as the rule counts. The finding points at
    `zarrish` (kornia-rs's apriltag pointed at kornia-3d, which said no feature of it turns
    matrixmultiply's `threading` on)."""
    gemmish = {"version": "0.1", "default-features": False}
    registry = {
        "gemmish": {"0.1.0": {"features": {"default": [], "rayon": []}}},
        "nalgebrish": {"0.1.0": {"dependencies": {"gemmish": gemmish}}},
        "arrmid": {"0.1.0": {"dependencies": {"gemmish": gemmish}}},
        "zarrish": {"0.1.0": {"dependencies": {"arrmid": {"version": "0.1"}}}},
    }
    use_registry(tmp_path_factory.mktemp("registry"), registry, monkeypatch)
    files = {
        "Cargo.toml": '[workspace]\nresolver = "2"\nmembers = ["app", "geo"]\n',
        "geo/Cargo.toml": PACKAGE.format("geo") + '[dependencies]\nnalgebrish = "0.1"\n',
        "geo/src/lib.rs": "",
        "app/Cargo.toml": PACKAGE.format("app")
        + '[dependencies]\ngeo = { path = "../geo" }\nzarrish = "0.1"\n',
        "app/src/main.rs": "fn main() {}",
    }
    project = write_project(tmp_path / "kornia", files)
    rule = (project / "featcheck.toml").read_text()
    avoiding = 'used-when = { reachable = { avoiding = ["nalgebrish"] } }'
    (project / "featcheck.toml").write_text(
        rule.replace("used-when = { reachable = true }", avoiding)
    )
    report = run_in_process(str(project), "--format", "json", "-p", "app")
    [finding] = json.loads(report.stdout)["findings"]
    assert (finding["location"]["file"], finding["location"]["line"]) == ("app/Cargo.toml", 8)
    assert "no feature of zarrish 0.1.0 turns it on" in finding["chain"][0]


def _arr_library(
    factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch, project: Path, features: str
) -> Path:
    """A library with an optional arr, which passes nothing on to gemmish (encoding_rs nothing
    to simdutf8), and `features` as its [features] table, locked over its registry."""
    registry = json.loads(json.dumps(ASKING_REGISTRY))
    del registry["arr"]["0.16.0"]["features"]["threading"]
    use_registry(factory.mktemp("registry"), registry, monkeypatch)
    manifest = PACKAGE.format(project.name) + (
        f'[dependencies]\narr = {{ version = "0.16", optional = true }}\n\n[features]\n{features}'
    )
    return write_project(project, {"src/lib.rs": "", "Cargo.toml": manifest})


def test_one_finding_of_two_selecting_features_is_fixed_behind_both(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """`enc` and `enc2` each turn arr on: one finding of both builds, whose fix must clear both.
    A line behind one leaves the other as it was, and a plain line gives gemmish to the default
    build, which has none (lewm-rs's `tract-nnef` and `tract-onnx`): the new line goes behind
    both."""
    features = 'enc = ["dep:arr"]\nenc2 = ["dep:arr"]\n'
    project = _arr_library(tmp_path_factory, monkeypatch, tmp_path / "codec", features)
    before = _packages(project)

    report = run_in_process(str(project), "--each-feature", "--format", "json")
    [finding] = json.loads(report.stdout)["findings"]
    assert [c["features"] for c in finding["configurations"]] == [["enc"], ["enc2"]]
    assert [(e["action"], e["declaration"]) for e in finding["fix"]["edits"]] == [
        ("add-optional-dependency", ["dependencies", "gemmish"]),
        ("add-feature-values", ["features", "enc"]),
        ("add-feature-values", ["features", "enc2"]),
    ]
    fixed = run_in_process(str(project), "--each-feature", "--fix", "--fix-level", "info")
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr
    assert _packages(project) == before
    _threaded_alone(project, *("enc", "enc2"))
    again = run_in_process(str(project), "--each-feature", "--format", "json")
    assert json.loads(again.stdout)["findings"] == []


def test_a_feature_naming_the_optional_dependency_selects_it(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """`enc = ["arr"]` turns arr on through arr's implicit feature, which the build without
    `enc` would then have kept (tendermint-rpc's `http-client = [..., "reqwest"]`). That
    feature is the nearer: the line goes behind it, which [features] writes for the first time
    (`dep:arr` first keeps what it turned on), so `--features arr` gets rayon too."""
    project = _arr_library(tmp_path_factory, monkeypatch, tmp_path / "codec", 'enc = ["arr"]\n')
    before = _packages(project)
    report = run_in_process(str(project), "--features", "enc", "--format", "json")
    [finding] = json.loads(report.stdout)["findings"]
    assert finding["fix"]["safe"], finding["fix"]
    edit = finding["fix"]["edits"][1]
    assert (edit["declaration"], edit["features"]) == (
        ["features", "arr"],
        ["dep:arr", "dep:gemmish"],
    )
    assert finding["fix"]["description"].endswith(
        'and add arr = ["dep:arr", "dep:gemmish"] to [features]'
    )
    fixed = run_in_process(str(project), "--features", "enc", "--fix", "--fix-level", "info")
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr
    assert (
        'enc = ["arr"]\narr = ["dep:arr", "dep:gemmish"]\n' in (project / "Cargo.toml").read_text()
    )
    assert _packages(project) == before
    _threaded_alone(project, *("enc", "arr"))


def test_an_implicit_feature_is_written_where_the_manifest_has_no_features(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """linfa's and candle's `--each-feature` findings under an optional dependency's implicit
    feature had only a plain line, which `--fix` declines (it gives the default build the
    crate). With no [features] table at all, the gated fix writes one."""
    project = _arr_library(tmp_path_factory, monkeypatch, tmp_path / "codec", "")
    manifest = project / "Cargo.toml"
    manifest.write_text(manifest.read_text().replace("\n[features]\n", ""))
    before = _packages(project)
    fixed = run_in_process(str(project), "--each-feature", "--fix", "--fix-level", "info")
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr
    assert manifest.read_text().endswith('\n[features]\narr = ["dep:arr", "dep:gemmish"]\n')
    assert _packages(project) == before
    _threaded_alone(project, "arr")
    again = run_in_process(str(project), "--each-feature", "--format", "json")
    assert json.loads(again.stdout)["findings"] == []


def test_of_two_features_that_select_the_crate_the_nearer_takes_the_fix(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """`latest` only names `v16`, which turns arr on: the line goes behind `v16`, which builds
    may name alone (argmin-math's `ndarray_latest-nolinalg` and `ndarray_v0_16-nolinalg`)."""
    features = 'latest = ["v16"]\nv16 = ["dep:arr"]\n'
    project = _arr_library(tmp_path_factory, monkeypatch, tmp_path / "math", features)
    report = run_in_process(str(project), "--features", "latest", "--format", "json")
    [finding] = json.loads(report.stdout)["findings"]
    assert finding["fix"]["edits"][1]["declaration"] == ["features", "v16"]


def test_of_two_features_that_select_the_crate_the_one_that_brings_it_takes_the_fix(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """burn_jepa: `wrap` turns on the optional wrapper, and only `wrap-arr`, which turns `wrap`
    on too, has the wrapper bring gemmish. The finding of `direct` and `wrap-arr` asked behind
    `wrap`, the nearer, in the second build, which gives the crate to `--features wrap`, a
    build without it: not safe, and a worse fix won. It asks behind `wrap-arr`, whose build
    alone has the crate."""
    registry = json.loads(json.dumps(ASKING_REGISTRY))
    registry["arr"]["0.16.0"] = {
        "features": {"default": [], "threading": ["gemmish/rayon"], "gem": ["dep:gemmish"]},
        "dependencies": {
            "gemmish": {"version": "0.1", "optional": True, "default-features": False}
        },
    }
    registry["wrapper"] = {
        "0.1.0": {
            "features": {"arrays": ["arr/gem"]},
            "dependencies": {"arr": {"version": "0.16", "default-features": False}},
        }
    }
    use_registry(tmp_path_factory.mktemp("registry"), registry, monkeypatch)
    manifest = PACKAGE.format("vision") + (
        '[dependencies]\narr = { version = "0.16", default-features = false }\n'
        'wrapper = { version = "0.1", optional = true }\n\n'
        '[features]\ndirect = ["arr/gem"]\nwrap = ["dep:wrapper"]\n'
        'wrap-arr = ["wrap", "wrapper/arrays"]\n'
    )
    project = write_project(tmp_path / "vision", {"src/lib.rs": "", "Cargo.toml": manifest})
    wrap = ("--no-default-features", "--features", "wrap")
    before = _packages(project, *wrap)

    report = run_in_process(str(project), "--each-feature", "--format", "json")
    [finding] = json.loads(report.stdout)["findings"]
    assert [c["features"] for c in finding["configurations"]] == [["direct"], ["wrap-arr"]]
    assert finding["fix"]["safe"], finding["fix"]
    assert [(e["declaration"], e["features"]) for e in finding["fix"]["edits"]] == [
        (["features", "direct"], ["arr/threading"]),
        (["features", "wrap-arr"], ["arr/threading"]),
    ]
    fixed = run_in_process(str(project), "--each-feature", "--fix", "--fix-level", "info")
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr
    assert _packages(project, *wrap) == before
    _threaded_alone(project, *("direct", "wrap-arr"))


def test_a_build_without_the_crate_gains_no_package_for_another_builds_finding(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """burn_jepa: restoring burn's defaults clears the `ndarray` build's finding, and gives the
    `wgpu` build, which has no burn-ndarray, burn-fusion and four more packages. The member
    has the finding in one build, which asked for what the fix adds to all of them: it was
    called safe. A build that holds no copy of the crate asks for nothing, and the note names
    it."""
    registry = {
        **ASKING_REGISTRY,
        "fusey": {"0.1.0": {}},
        "burnish": {
            "1.0.0": {
                "features": {
                    "default": ["rayon", "fusion"],
                    "rayon": ["gemmish?/rayon"],
                    "fusion": ["dep:fusey"],
                    "arr": ["dep:gemmish"],
                },
                "dependencies": {
                    "gemmish": {"version": "0.1", "optional": True, "default-features": False},
                    "fusey": {"version": "0.1", "optional": True},
                },
            }
        },
    }
    use_registry(tmp_path_factory.mktemp("registry"), registry, monkeypatch)
    manifest = PACKAGE.format("vision") + (
        '[dependencies]\nburnish = { version = "1", default-features = false }\n\n'
        '[features]\narr = ["burnish/arr"]\ngpu = []\n'
    )
    project = write_project(tmp_path / "vision", {"src/lib.rs": "", "Cargo.toml": manifest})
    report = run_in_process(str(project), "--each-feature", "--format", "json")
    [finding] = json.loads(report.stdout)["findings"]
    assert [c["features"] for c in finding["configurations"]] == [["arr"]]
    fixes = {f["description"]: f for f in (finding["fix"], *finding["alternatives"])}
    restored = fixes["remove `default-features = false` from burnish"]
    assert not restored["safe"]
    assert restored["note"] == (
        "not applied by --fix: it adds burnish/fusey to the build of vision (--features gpu "
        "--no-default-features; --no-default-features; default features), which lacked them"
    )
    assert finding["fix"]["safe"] and "fusey" not in json.dumps(finding["fix"])
