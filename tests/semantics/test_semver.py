"""Version requirements, and numbers of any size (never an exception, never a wrong match)."""

from __future__ import annotations

import pytest

from featcheck.semantics import semver

HUGE = "1" * 5000


@pytest.mark.parametrize(
    ("requirement", "version", "expected"),
    [
        ("=0.22.1", "0.22.1", True),
        ("=0.22.1", "0.22.2", False),
        ("0.22", "0.22.9", True),
        ("0.22", "0.23.0", False),
        ("^0.21.0", "0.21.4", True),
        ("^1.2", "1.9.0", True),
        ("^1.2", "2.0.0", False),
        ("~1.2.3", "1.2.9", True),
        ("~1.2.3", "1.3.0", False),
        (">=0.19, <0.21", "0.20.1", True),
        (">=0.19, <0.21", "0.21.0", False),
        ("1.*", "1.4.0", True),
        ("*", "0.0.1", True),
        ("^0.0.3", "0.0.4", False),
    ],
)
def test_version_requirements(requirement: str, version: str, expected: bool) -> None:
    assert semver.matches(requirement, version) is expected


@pytest.mark.parametrize(
    "text",
    [
        f"=0.22.{HUGE}",
        f">={HUGE}",
        f"^1.{HUGE}.0",
        f"~{HUGE}.1",
        f"1.{HUGE}.*",
        "18446744073709551616",
        f"1.0.0-{HUGE}",
        f"0.{HUGE}.0, <2",
    ],
)
def test_version_numbers_cargo_cannot_hold_are_no_versions(text: str) -> None:
    assert semver.parse_version(text.lstrip("=>^~")) is None or text.startswith("1.0.0-")
    if not text.startswith("1.0.0-"):  # a long pre-release identifier is valid for cargo
        assert not semver.is_requirement(text)
        assert semver.number_error(text, requirement=True) is not None
    assert semver.matches(text, "1.0.0") in (True, False)
    assert semver.parse_version("18446744073709551615.0.0") == (2**64 - 1, 0, 0, 1)


hypothesis = pytest.importorskip("hypothesis")
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

_PIECES = st.sampled_from(
    ["=", ">=", "<", "^", "~", ".", ",", "*", "-", "+", "v", " ", "1", HUGE, "0"]
)


@settings(max_examples=300, deadline=None, database=None)
@given(st.lists(_PIECES, max_size=12).map("".join), st.lists(_PIECES, max_size=8).map("".join))
def test_semver_never_raises_on_any_text(requirement: str, version: str) -> None:
    semver.parse_version(version)
    semver.is_requirement(requirement)
    semver.matches(requirement, version)
    semver.number_error(version)
    semver.number_error(requirement, requirement=True)
