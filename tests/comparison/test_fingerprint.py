"""What a fingerprint keeps and what it ignores: the same finding after a moved line, a patch
or a minor past 1.0, and a crate name spelt the other way; another finding for another rule,
member, target, configuration, feature or semver-incompatible version."""

from __future__ import annotations

from dataclasses import replace

from actions_support import make_finding, manifest_location

from featcheck.comparison.baseline import compatible_version, configuration_token, fingerprint
from featcheck.featureset import FeatureSelection


def test_what_the_fingerprint_ignores() -> None:
    finding = make_finding(location=manifest_location(line=9))
    same = [
        replace(finding, location=manifest_location(line=30)),
        replace(finding, location=None, message="worded otherwise"),
        replace(finding, crate_version="0.22.7"),
        replace(finding, crate="burn_flex"),
        replace(finding, configurations=(FeatureSelection(),)),
    ]
    assert {fingerprint(f) for f in same} == {fingerprint(finding)}


def test_what_tells_findings_apart() -> None:
    finding = make_finding()
    other = [
        replace(finding, code="FC003"),
        replace(finding, member="other"),
        replace(finding, target="aarch64-apple-darwin"),
        replace(finding, feature="simd"),
        replace(finding, crate_version="0.23.0"),
        replace(finding, configurations=(FeatureSelection.of(["gpu"]),)),
    ]
    prints = {fingerprint(f) for f in [finding, *other]}
    assert len(prints) == 1 + len(other)
    assert all(len(p) == 16 and int(p, 16) >= 0 for p in prints)


def test_versions_and_configurations_as_words() -> None:
    assert [compatible_version(v) for v in ("1.12.2", "0.22.1", "0.0.3", "2.0.0-rc.1", "x")] == [
        "1",
        "0.22",
        "0.0.3",
        "2",
        "x",
    ]
    assert configuration_token(None) == "default"
    selection = FeatureSelection.of(["b", "a"], no_default=True)
    assert configuration_token(selection) == "no-default-features,features=a+b"
    assert configuration_token(FeatureSelection(all_features=True)) == "all-features"
