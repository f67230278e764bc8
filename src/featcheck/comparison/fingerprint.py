"""A finding's fingerprint: what it is about, free of where its line happens to be.

Two audits that find the same trimmed feature in the same member's build give the same
fingerprint, even when the manifest was reformatted, lines above it moved, or the crate took a
patch (or, past 1.0, a minor) upgrade: it hashes the rule code, the member, the crate as
crates.io compares names, the crate's semver-compatible version (`1` for 1.12.2, `0.22` for
0.22.1: cargo's own line between copies of a crate that can coexist), the feature, the target
and the build configuration, and nothing else. JSON (`fingerprint`), SARIF
(`partialFingerprints`) and baselines carry the same value.
"""

from __future__ import annotations

import hashlib

from featcheck.featureset import DEFAULT, FeatureSelection
from featcheck.report import Finding
from featcheck.semantics.semver import parse_version
from featcheck.workspace.names import crate_key

FINGERPRINT_LENGTH = 16
"""Hex digits kept of the sha256: 64 bits, ample for the findings of one project."""


def compatible_version(version: str) -> str:
    """The part of `version` that semver compatibility keeps: `1` for 1.12.2, `0.22` for 0.22.1,
    `0.0.3` for 0.0.3; the text as it is when it is not a version."""
    parsed = parse_version(version)
    if parsed is None:
        return version
    major, minor, patch, _ = parsed
    if major:
        return str(major)
    return f"0.{minor}" if minor else f"0.0.{patch}"


def configuration_token(selection: FeatureSelection | None) -> str:
    """The build configuration as one word without spaces: `default`,
    `no-default-features,features=a+b`, `all-features`."""
    selection = selection or DEFAULT
    if selection.is_default:
        return "default"
    parts = []
    if selection.no_default_features:
        parts.append("no-default-features")
    if selection.all_features:
        parts.append("all-features")
    if selection.features:
        parts.append("features=" + "+".join(selection.features))
    return ",".join(parts)


def fingerprint(finding: Finding) -> str:
    """The finding's fingerprint (see the module's text), 16 hex digits."""
    parts = (
        "featcheck-fingerprint-1",
        finding.code,
        finding.member or "",
        crate_key(finding.crate),
        compatible_version(finding.crate_version),
        finding.feature,
        finding.target or "",
        configuration_token(finding.configuration),
    )
    digest = hashlib.sha256("\n".join(parts).encode("utf-8")).hexdigest()
    return digest[:FINGERPRINT_LENGTH]
