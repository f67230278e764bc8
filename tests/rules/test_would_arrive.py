"""How a missing feature would arrive, read off the resolver's own steps.

`frontend`'s feature `fast` turns on its optional `helper`, and helper's own line asks for
gemmish's `rayon`: turning `fast` on builds helper, which switches rayon on (`cargo tree -e
features -i gemmish -p service --features frontend/fast` shows `gemmish feature "rayon"` under
helper). Member `batch` asks for `fast`, so helper is in the resolve; `service` does not. A
walk of the feature tables alone never followed a package being built: it said that no feature
of frontend turns rayon on, and offered no fix through frontend.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from cli_in_process import run_in_process
from synthetic_registry import GEMMISH_RULE as RULE
from synthetic_registry import PACKAGE, POOLED_REGISTRY, use_registry, write_project

pytestmark = [pytest.mark.usefixtures("remembered_cargo"), pytest.mark.cargo]

REGISTRY = {
    "gemmish": {"0.1.0": {"features": {"default": [], "rayon": []}}},
    "helper": {
        "0.1.0": {
            "dependencies": {
                "gemmish": {"version": "0.1", "default-features": False, "features": ["rayon"]}
            }
        }
    },
    "frontend": {
        "0.1.0": {
            "features": {"default": [], "fast": ["dep:helper"]},
            "dependencies": {
                "helper": {"version": "0.1", "optional": True},
                "gemmish": {"version": "0.1", "default-features": False},
            },
        }
    },
}

WORKSPACE = """\
[workspace]
resolver = "2"
members = ["service", "batch"]
"""

MEMBER = """\
[package]
name = "{name}"
version = "0.1.0"
edition = "2021"

[dependencies]
frontend = {declaration}
"""


@pytest.mark.parametrize("fast", [["dep:helper"], ["helper"]])
def test_a_feature_that_builds_a_dependency_passes_its_line_on(
    fast: list[str],
    tmp_path_factory: pytest.TempPathFactory,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    """With `fast = ["helper"]` the chain passes helper's implicit feature, named once."""
    registry = {**REGISTRY, "frontend": {"0.1.0": {**REGISTRY["frontend"]["0.1.0"]}}}
    registry["frontend"]["0.1.0"]["features"] = {"default": [], "fast": fast}
    use_registry(tmp_path_factory.mktemp("frontend-registry"), registry, monkeypatch)
    project = tmp_path / "workspace"
    members = {"service": '"0.1"', "batch": '{ version = "0.1", features = ["fast"] }'}
    for name, declaration in members.items():
        (project / name / "src").mkdir(parents=True)
        (project / name / "src" / "main.rs").write_text("fn main() {}\n")
        (project / name / "Cargo.toml").write_text(
            MEMBER.format(name=name, declaration=declaration)
        )
    (project / "Cargo.toml").write_text(WORKSPACE)
    (project / "featcheck.toml").write_text(RULE)
    report = run_in_process(str(project), "--format", "json")
    assert report.returncode == 1, report.stderr
    [finding] = json.loads(report.stdout)["findings"]
    assert finding["chain"][0] == (
        "would arrive through frontend fast → helper → gemmish/rayon, "
        "not enabled at service/Cargo.toml:7"
    )
    alternatives = [fix["description"] for fix in finding["alternatives"]]
    assert 'add "fast" to the features of frontend' in alternatives


def _service(tmp_path: Path, declaration: str, more: str = "", resolver: str = "2") -> Path:
    """A workspace of the one member `service`, which declares frontend as `declaration`."""
    project = tmp_path / "workspace"
    (project / "service" / "src").mkdir(parents=True)
    (project / "service" / "src" / "main.rs").write_text("fn main() {}\n")
    manifest = MEMBER.format(name="service", declaration=declaration) + more
    (project / "service" / "Cargo.toml").write_text(manifest)
    workspace = WORKSPACE.replace('"2"', f'"{resolver}"').replace(', "batch"', "")
    (project / "Cargo.toml").write_text(workspace)
    (project / "featcheck.toml").write_text(RULE)
    return project


# frontend's defaults turn on `fast` of its proc-macro, whose own gemmish gets rayon: a crate
# built for the host. Under resolver 2 the gemmish the member links never gets it that way.
MACRO_REGISTRY = {
    "gemmish": REGISTRY["gemmish"],
    "gemmish-macros": {
        "0.1.0": {
            "lib": {"proc-macro": True},
            "features": {"default": [], "fast": ["gemmish/rayon"]},
            "dependencies": {"gemmish": {"version": "0.1", "default-features": False}},
        }
    },
    "frontend": {
        "0.1.0": {
            "features": {"default": ["gemmish-macros/fast"]},
            "dependencies": {
                "gemmish-macros": {"version": "0.1"},
                "gemmish": {"version": "0.1", "default-features": False},
            },
        }
    },
}


@pytest.mark.parametrize("resolver", ["1", "2"])
def test_a_path_through_a_proc_macro_reaches_only_the_host_build(
    resolver: str,
    tmp_path_factory: pytest.TempPathFactory,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    """Resolver 1 gives host and target one feature set, so frontend's defaults are the cut;
    with 2 nothing of frontend's reaches the linked gemmish, and the finding says so: its
    chain follows no path through the proc-macro, and it points at frontend's key, not at a
    `default-features = false` whose removal would change nothing the member links."""
    use_registry(tmp_path_factory.mktemp("macro-registry"), MACRO_REGISTRY, monkeypatch)
    declaration = '{ version = "0.1", default-features = false }'
    project = _service(tmp_path, declaration, resolver=resolver)
    report = run_in_process(str(project), "--format", "json")
    assert report.returncode == 1, report.stderr
    [finding] = json.loads(report.stdout)["findings"]
    location = "{file}:{line}:{column}".format(**finding["location"])
    if resolver == "1":
        assert finding["chain"][0] == (
            "would arrive through frontend default → gemmish-macros/fast → gemmish/rayon"
        )
        assert location == "service/Cargo.toml:7:31"
        assert finding["fix"]["edits"][0]["action"] == "remove-default-features"
        return
    assert finding["chain"][0] == (
        "no feature of frontend 0.1.0 turns it on (service/Cargo.toml:7)"
    )
    assert location == "service/Cargo.toml:7:1"
    assert finding["fix"]["description"] == (
        'add gemmish = { version = "0.1.0", default-features = false, features = ["rayon"] } '
        "to [dependencies]"
    )


# helper's defaults ask `gemmish?/rayon`: weak, and helper never turns its gemmish on. The
# member has frontend's `fast` on, so helper is built, and the gemmish it links stays without
# rayon: the feature that would carry it is on already, and nothing of frontend's delivers it.
WEAK_REGISTRY = {
    "gemmish": REGISTRY["gemmish"],
    "helper": {
        "0.1.0": {
            "features": {"default": ["gemmish?/rayon"]},
            "dependencies": {
                "gemmish": {"version": "0.1", "default-features": False, "optional": True}
            },
        }
    },
    "frontend": REGISTRY["frontend"],
}


def test_a_feature_already_on_is_not_named_as_the_one_that_would_deliver(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    use_registry(tmp_path_factory.mktemp("weak-registry"), WEAK_REGISTRY, monkeypatch)
    declaration = '{ version = "0.1", features = ["fast"] }'
    project = _service(tmp_path, declaration, f"\n[dev-dependencies]\nfrontend = {declaration}\n")
    report = run_in_process(str(project), "--format", "json")
    assert report.returncode == 1, report.stderr
    [finding] = json.loads(report.stdout)["findings"]
    # No line says the tests' build gets rayon through the dev-dependency: cargo says it does not.
    assert finding["chain"] == ["no feature of frontend 0.1.0 turns it on (service/Cargo.toml:7)"]
    assert finding["fix"]["edits"][0]["declaration"] == ["dependencies", "gemmish"]
    tree = ["cargo", "tree", "-e", "normal,dev", "-i", "gemmish", "-f", "{p} [{f}]", "--offline"]
    shown = subprocess.run(tree, cwd=project, capture_output=True, text=True, check=True).stdout
    assert shown.splitlines()[0] == "gemmish v0.1.0 []"


# `lib`'s `fast` turns on frontend's `fast`, which only passes rayon on to gemmish: an offer
# to lib's users. Turning on its optional turbo instead (whose line asks gemmish for rayon)
# brings a package: no offer. No member turns `fast` on, so `cargo metadata`'s resolve has no
# edge from lib to turbo, while Cargo.lock has one (`app` depends on turbo itself).
OFFER_REGISTRY = {
    "gemmish": REGISTRY["gemmish"],
    "turbo": {"0.1.0": {"dependencies": {"gemmish": {"version": "0.1", "features": ["rayon"]}}}},
    "frontend": {
        "0.1.0": {
            "features": {"fast": ["gemmish/rayon"]},
            "dependencies": {"gemmish": {"version": "0.1"}},
        }
    },
}

ANDROID = "[target.'cfg(target_os = \"android\")'.dependencies]\n"
PASS_ON = '[features]\nfast = ["frontend/fast"]\n\n[dependencies]\nfrontend = "0.1"\n'
OFFER = '[features]\nfast = ["dep:turbo"]\n\n[dependencies]\nfrontend = "0.1"\n'
OPTIONAL_TURBO = 'turbo = { version = "0.1", optional = true }\n'


def _offering_workspace(lib: str, tmp_path: Path) -> Path:
    """`lib` (a library whose `fast` may bring gemmish's rayon) beside `app`, which depends on
    turbo, with the project rule and a lockfile."""
    project = tmp_path / "workspace"
    for name, body, source in (("lib", lib, "lib.rs"), ("app", 'turbo = "0.1"\n', "main.rs")):
        (project / name / "src").mkdir(parents=True)
        (project / name / "src" / source).write_text("fn main() {}\n")
        header = f'[package]\nname = "{name}"\nversion = "0.1.0"\nedition = "2021"\n\n'
        deps = body if body.startswith("[") else "[dependencies]\n" + body
        (project / name / "Cargo.toml").write_text(header + deps)
    (project / "Cargo.toml").write_text('[workspace]\nresolver = "2"\nmembers = ["lib", "app"]\n')
    (project / "featcheck.toml").write_text(RULE)
    subprocess.run(["cargo", "generate-lockfile", "--offline"], cwd=project, check=True)
    return project


@pytest.mark.parametrize("mode", [[], ["--no-exec"]])
def test_a_library_passing_the_feature_on_is_left_to_its_users(
    mode: list[str],
    tmp_path_factory: pytest.TempPathFactory,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    """`std = ["memchr/std"]`: the library leaves the choice to its users (no_std ones)."""
    use_registry(tmp_path_factory.mktemp("offer-registry"), OFFER_REGISTRY, monkeypatch)
    project = _offering_workspace(PASS_ON, tmp_path)
    report = run_in_process(str(project), "--format", "json", *mode)
    assert report.returncode == 0, report.stdout + report.stderr
    assert json.loads(report.stdout)["findings"] == []


@pytest.mark.parametrize(
    "lib",
    [
        # rerun's re_server: its `lance` brings a database stack that happens to turn
        # matrixmultiply's threading on; re_server's own build stays single-threaded.
        pytest.param(OFFER + OPTIONAL_TURBO, id="optional"),
        # reqwest's rustls-platform-verifier (its jni): on Linux `fast` turns on the plain
        # optional line, and the Android line beside it, which the build leaves out, is the only
        # one `cargo metadata`'s resolve binds.
        pytest.param(OFFER + OPTIONAL_TURBO + "\n" + ANDROID + 'turbo = "0.1"\n', id="android-too"),
        # reqwest 0.13.5: its `http3` turns simdutf8's `std` on only on Android.
        pytest.param(OFFER + "\n" + ANDROID + OPTIONAL_TURBO, id="android-only"),
    ],
)
def test_a_feature_that_brings_packages_or_delivers_elsewhere_is_no_offer(
    lib: str,
    tmp_path_factory: pytest.TempPathFactory,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    """The finding stands (an info: a library's users' builds decide), with the same chain from
    cargo's model and from the files, as `cargo tree --features fast` says on Linux."""
    use_registry(tmp_path_factory.mktemp("offer-registry"), OFFER_REGISTRY, monkeypatch)
    project = _offering_workspace(lib, tmp_path)
    shown = subprocess.run(
        [
            *("cargo", "tree", "-e", "normal", "-p", "lib", "--features", "fast", "-i"),
            *("gemmish", "--target", "x86_64-unknown-linux-gnu", "-f", "{p} [{f}]", "--offline"),
        ],
        cwd=project,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    chains = []
    for mode in ([], ["--no-exec"]):
        report = run_in_process(
            str(project), "--format", "json", "--target", "x86_64-unknown-linux-gnu", *mode
        )
        assert report.returncode == 0, report.stdout + report.stderr
        found = json.loads(report.stdout)["findings"]
        assert [(f["member"], f["crate"], f["feature"], f["severity"]) for f in found] == [
            ("lib", "gemmish", "rayon", "info")
        ]
        chains.append(found[0]["chain"])
    assert chains[0] == chains[1]
    # On Linux `fast` brings rayon through turbo, a package the build lacks, or not at all.
    delivers = lib.index("optional = true") < lib.find(ANDROID) or ANDROID not in lib
    expected = "[default,rayon]" if delivers else "[default]"
    assert shown.splitlines()[0] == f"gemmish v0.1.0 {expected}"


# `mid`, a member, builds frontend (gemmish without rayon) behind `slow`, and helper (which asks
# gemmish for rayon) behind `fast`; service asks for `slow` only, so no build turns `fast` on.
# cargo's resolve has no helper: featcheck cannot know what helper asks, and said that no
# feature of mid turns rayon on (rten-serialize's `npz`, through zip, was the case found).
# `--no-exec` reads helper's manifest off Cargo.lock, which holds every optional dependency of
# a member, and follows the chain.
MID = """\
[package]
name = "mid"
version = "0.1.0"
edition = "2021"

[features]
slow = ["dep:frontend"]
fast = ["dep:helper"]

[dependencies]
frontend = { version = "0.1", optional = true }
helper = { version = "0.1", optional = true }
"""
UNRESOLVED_REGISTRY = {
    "gemmish": REGISTRY["gemmish"],
    "helper": REGISTRY["helper"],
    "frontend": {
        "0.1.0": {"dependencies": {"gemmish": {"version": "0.1", "default-features": False}}}
    },
}


def test_a_chain_through_a_dependency_no_build_resolves_is_not_denied(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    use_registry(tmp_path_factory.mktemp("unresolved"), UNRESOLVED_REGISTRY, monkeypatch)
    project = _service(tmp_path, '"0.1"')
    service = MEMBER.format(name="service", declaration='"0.1"').replace(
        'frontend = "0.1"', 'mid = { path = "../mid", features = ["slow"] }'
    )
    (project / "service" / "Cargo.toml").write_text(service)
    (project / "mid" / "src").mkdir(parents=True)
    (project / "mid" / "src" / "lib.rs").write_text("")
    (project / "mid" / "Cargo.toml").write_text(MID)
    (project / "Cargo.toml").write_text(WORKSPACE.replace('"batch"', '"mid"'))
    subprocess.run(["cargo", "generate-lockfile", "--offline"], cwd=project, check=True)
    chains = {}
    for mode in ((), ("--no-exec",)):
        report = run_in_process(str(project), "--format", "json", *mode)
        assert report.returncode == 1, report.stderr
        [finding] = json.loads(report.stdout)["findings"]
        chains[mode] = finding["chain"][0]
    assert chains == {
        (): "no feature of mid 0.1.0 turns it on through the packages resolved here "
        "(service/Cargo.toml:7); not followed: helper, which no audited build includes",
        ("--no-exec",): "would arrive through mid fast → helper → gemmish/rayon, "
        "not enabled at service/Cargo.toml:7",
    }


OFFERING_LIB = PACKAGE.format("lib") + (
    '[features]\ndefault = ["std"]\nstd = []\nfast = ["gemmish/rayon"]\n\n'
    '[dependencies]\ngemmish = { version = "0.1", default-features = false }\n'
)


def test_an_offer_that_brings_the_crates_own_dependencies_is_one_whatever_metadata_holds(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """ndarray 0.17's `matrixmultiply-threading = ["matrixmultiply/threading"]`. The feature was
    judged an offer only while `cargo metadata` lacked the thread pool it brings: with
    `--features std` (metadata asked with `--all-features`), or once another member turned the
    feature on (`--fix` of that member), the library's unchanged build got the finding."""
    use_registry(tmp_path_factory.mktemp("pooled-registry"), POOLED_REGISTRY, monkeypatch)
    lib = write_project(tmp_path / "lib", {"Cargo.toml": OFFERING_LIB, "src/lib.rs": ""})
    for args in ([], ["--features", "std"], ["--each-feature"]):
        report = run_in_process(str(lib), "--format", "json", *args)
        assert report.returncode == 0, report.stdout + report.stderr
        assert json.loads(report.stdout)["findings"] == [], args

    user = (
        PACKAGE.format("user") + '[dependencies]\nlib = { path = "../lib", features = ["fast"] }\n'
    )
    project = write_project(
        tmp_path / "workspace",
        {
            "Cargo.toml": '[workspace]\nresolver = "2"\nmembers = ["lib", "user"]\n',
            "lib/Cargo.toml": OFFERING_LIB,
            "lib/src/lib.rs": "",
            "user/Cargo.toml": user,
            "user/src/lib.rs": "",
        },
    )
    report = run_in_process(str(project), "--format", "json")
    assert report.returncode == 0, report.stdout + report.stderr
    assert json.loads(report.stdout)["findings"] == []
