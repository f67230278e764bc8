"""SARIF for code scanning: one run per target and configuration, each with its own
`automationDetails.id`, and after `--new-since` or `--baseline` each result's `baselineState`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from history_support import (
    TRIMMED_MEMCHR,
    TRIMMED_REGEX,
    commit,
    featcheck_in_process,
    member,
    new_repository,
    registry_home,
    write_member,
)
from sarif_support import validate_sarif

from featcheck.render.sarif import FINGERPRINT_KEY

pytestmark = [pytest.mark.cargo, pytest.mark.usefixtures("remembered_cargo")]


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return registry_home(tmp_path_factory.mktemp("registry"))


def _sarif(repository: Path, home: Path, *arguments: str) -> dict[str, Any]:
    done = featcheck_in_process(repository, home, "--format", "sarif", *arguments)
    assert done.returncode in (0, 1), done.stderr
    document: dict[str, Any] = json.loads(done.stdout)
    validate_sarif(document)
    return document


def test_two_configurations_are_two_runs_with_their_own_ids(home: Path, tmp_path: Path) -> None:
    a = member("a", TRIMMED_REGEX) + '\n[features]\nfast = ["regex/perf"]\n'
    repository = new_repository(tmp_path / "repo", home, a, member("b", ""))
    document = _sarif(repository, home, "-p", "a", "--each-feature")
    ids = [run["automationDetails"]["id"] for run in document["runs"]]
    assert len(ids) == len(set(ids)) == 3
    assert ids[0].endswith("/default/") and ids[0].startswith("featcheck/x86_64")
    by_id = {run["automationDetails"]["id"]: run["results"] for run in document["runs"]}
    # The regex finding is in the default build and the one without defaults, not with `fast`.
    with_fast = next(i for i in ids if i.endswith("features=fast/"))
    assert by_id[with_fast] == []
    counted = [len(results) for key, results in by_id.items() if key != with_fast]
    assert counted == [1, 1]
    # One finding, in two configurations: an alert in each run, with that build's fingerprint,
    # the one a baseline entry or `--new-since` compares for that build.
    prints = {r["partialFingerprints"][FINGERPRINT_KEY] for rs in by_id.values() for r in rs}
    assert len(prints) == 2
    report = json.loads(
        featcheck_in_process(repository, home, "-p", "a", "--format", "json").stdout
    )
    assert (
        by_id[ids[0]][0]["partialFingerprints"][FINGERPRINT_KEY]
        == report["findings"][0]["fingerprint"]
    )


def test_more_configurations_than_code_scanning_takes_are_one_run_per_target(
    home: Path, tmp_path: Path
) -> None:
    """GitHub refuses a file of more than 20 runs (tendermint-rs with `--each-feature`: 35), and
    with it every alert: past 20, the configurations of a target share one run."""
    features = "".join(f"f{n} = []\n" for n in range(21))
    a = member("a", TRIMMED_REGEX) + f"\n[features]\n{features}"
    repository = new_repository(tmp_path / "repo", home, a, member("b", ""))
    document = _sarif(repository, home, "-p", "a", "--each-feature")
    [run] = document["runs"]
    assert run["automationDetails"]["id"].endswith("/every-configuration/")
    # The regex finding is in all 23 builds: a result for each, with that build's fingerprint,
    # as a run of its own and a baseline have it (one result of the first build's opened an
    # alert no later upload, split by `--new-since`, would hold).
    prints = {r["partialFingerprints"][FINGERPRINT_KEY] for r in run["results"]}
    assert len(run["results"]) == len(prints) == 23
    baseline = tmp_path / "baseline.txt"
    options = ("-p", "a", "--each-feature", "--write-baseline", str(baseline))
    assert featcheck_in_process(repository, home, *options).returncode == 0
    written = {line.split()[0] for line in baseline.read_text().splitlines() if line[0] != "#"}
    assert prints == written


def test_results_say_their_baseline_state(home: Path, tmp_path: Path) -> None:
    repository = new_repository(
        tmp_path / "repo", home, member("a", TRIMMED_REGEX + TRIMMED_MEMCHR), member("b", "")
    )
    write_member(repository, "a", member("a", TRIMMED_REGEX))
    write_member(repository, "b", member("b", TRIMMED_MEMCHR))
    commit(repository, "memchr moves from a to b")
    [run] = _sarif(repository, home, "--new-since", "HEAD~1")["runs"]
    states = sorted(
        (r["baselineState"], r["properties"]["member"], "suppressions" in r) for r in run["results"]
    )
    assert states == [("absent", "a", True), ("new", "b", False), ("unchanged", "a", False)]

    baseline = tmp_path / "baseline.txt"
    assert featcheck_in_process(repository, home, "--write-baseline", str(baseline)).returncode == 0
    [run] = _sarif(repository, home, "--baseline", str(baseline))["runs"]
    assert {(r["baselineState"], "suppressions" in r) for r in run["results"]} == {
        ("unchanged", True)
    }
