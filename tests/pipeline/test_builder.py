"""A finding is made once, with its primary location said; its identity is shared by the
configuration merge and by grouping by cut."""

from __future__ import annotations

import pytest

from featcheck.builder import FindingBuilder
from featcheck.graph import Node
from featcheck.report import Location
from featcheck.rules import Catalogue, Detection, find_by_code
from featcheck.workspace.model import PackageRef

FLEX = Node(PackageRef("burn-flex", "0.22.1"), frozenset())
CUT = Location("Cargo.toml", 6, 1, 6, 20)


def _builder() -> FindingBuilder:
    rule = find_by_code(Catalogue.builtin().rules, "FC001")
    assert rule is not None
    return FindingBuilder(rule, Detection(FLEX, "rayon", "built without rayon"), None, "x86_64")


def test_a_finding_without_its_primary_location_is_refused() -> None:
    with pytest.raises(ValueError, match="primary location"):
        _builder().build("enable rayon")


def test_saved_tree_text_says_it_has_no_location() -> None:
    finding = _builder().at(None).build("enable rayon")
    assert finding.location is None and finding.identity.cut is None


def test_the_identity_names_the_cut() -> None:
    finding = _builder().at(CUT).build("enable rayon")
    identity = finding.identity
    assert identity.cut == ("FC001", "burn-flex", "0.22.1", "rayon", "Cargo.toml", 6, 1)
    assert (identity.member, identity.target, identity.location) == (None, "x86_64", CUT)
