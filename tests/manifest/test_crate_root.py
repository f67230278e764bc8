"""Reading `no_std` off a crate root's inner attributes, as rustc takes them, and deciding it for
one build (its features, its target)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from featcheck.manifest.crate_root import NoStd, built_no_std, no_std_predicates, read_no_std
from featcheck.semantics.cfg import TargetCfg
from featcheck.workspace.model import CrateRoot

LINUX = TargetCfg.parse(
    "x86_64-unknown-linux-gnu", 'unix\ntarget_os="linux"\ntarget_has_atomic="ptr"\n'
)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("#![no_std]\npub fn f() {}\n", (None,)),
        ("#![ no_std ]", (None,)),
        (
            "//! Crate docs [with a bracket].\n//!\n/* a /* nested */ block */\n#![no_std]\n",
            (None,),
        ),
        ("#!/usr/bin/env run-cargo-script\n#![no_std]\n", (None,)),
        ("\ufeff#![no_std]", (None,)),
        ('#![cfg_attr(not(feature = "std"), no_std)]', ('not(feature = "std")',)),
        ("#![cfg_attr(not(test), no_std, no_main)]", ("not(test)",)),
        (
            '#![doc = "a ] in a string"]\n#![doc = r#"and "] in a raw one"#]\n#![no_std]',
            (None,),
        ),
        (
            '#![cfg_attr(docsrs, feature(doc_cfg))]\n#![cfg_attr(target_os = "none", no_std)]',
            ('target_os = "none"',),
        ),
        ("#![cfg_attr(not(test), no_main)]", ()),
        ("#![allow(clippy::no_std)]", ()),  # not the attribute itself
        ("use core::fmt;\n#![no_std]", ()),  # after an item: rustc refuses it, nothing here
        ("fn main() {}\n", ()),
        ("", ()),
        ("#![no_std", ()),  # never closed
    ],
)
def test_no_std_is_read_from_the_inner_attributes_before_the_first_item(
    text: str, expected: tuple[str | None, ...]
) -> None:
    assert no_std_predicates(text).when == expected


def test_a_build_is_no_std_when_every_crate_root_it_compiles_is() -> None:
    library = CrateRoot(Path("src/lib.rs"))
    tool = CrateRoot(Path("src/bin/tool.rs"), frozenset({"cli"}))
    roots = ((library, NoStd((None,))), (tool, NoStd()))
    assert built_no_std(roots, ["default"], LINUX)
    # The binary uses std and is built once `cli` is on.
    assert not built_no_std(roots, ["default", "cli"], LINUX)
    assert not built_no_std((), ["default"], LINUX)  # nothing known: std, as before


@pytest.mark.parametrize(
    ("predicate", "features", "no_std"),
    [
        ('not(feature = "std")', [], True),
        ('not(feature = "std")', ["std"], False),
        ("not(test)", [], True),  # the audited build is not a test build
        ('all(not(test), target_os = "linux")', [], True),
        ('target_os = "none"', [], False),
        ("not(", [], False),  # unreadable: counts as using std
    ],
)
def test_a_cfg_attr_is_decided_for_the_builds_features_and_target(
    predicate: str, features: list[str], no_std: bool
) -> None:
    roots = ((CrateRoot(Path("src/lib.rs")), NoStd((predicate,))),)
    assert built_no_std(roots, features, LINUX) is no_std


def test_a_crate_root_featcheck_does_not_read_counts_as_using_std(tmp_path: Path) -> None:
    """A link out of the checkout is not followed, a FIFO not waited on, a file outside not
    read: each counts as std."""
    checkout = tmp_path / "checkout"
    (checkout / "src").mkdir(parents=True)
    outside = tmp_path / "outside.rs"
    outside.write_text("#![no_std]\n")
    (checkout / "src" / "lib.rs").symlink_to(outside)
    os.mkfifo(checkout / "src" / "main.rs")
    roots = [checkout / "src" / "lib.rs", checkout / "src" / "main.rs"]
    assert [read_no_std(root, checkout) for root in roots] == [NoStd(), NoStd()]
    inside = checkout / "src" / "inside.rs"
    inside.write_text("#![no_std]\n")
    assert read_no_std(inside, checkout) == NoStd((None,))
    # A `[[bin]] path` naming a file outside the checkout, no link on the way: not read either.
    assert read_no_std(outside, checkout) == NoStd()
    assert read_no_std(outside, None) == NoStd((None,))  # the user's own


@pytest.mark.parametrize(
    ("text", "features", "no_std"),
    [
        ('#![no_std]\n#[cfg(feature = "std")]\nextern crate std;\n', [], True),
        ('#![no_std]\n#[cfg(feature = "std")]\nextern crate std;\n', ["std"], False),
        (
            '#![no_std]\n\n#[cfg(any(test, feature = "std"))]  extern crate std as core2;\n',
            [],
            True,
        ),
        ("#![no_std]\nmod a;\nextern crate std;\n", [], False),  # always std, for all it says
        ('#![no_std]\n#[cfg(feature = "std")]\n#[macro_use]\nextern crate std;\n', [], False),
        ("#![no_std]\n#[cfg(not(()]\nextern crate std;\n", [], False),  # unread: std
    ],
)
def test_an_extern_crate_std_brings_std_back_where_its_cfg_holds(
    text: str, features: list[str], no_std: bool
) -> None:
    """Crates that say `#![no_std]` and `#[cfg(feature = "std")] extern crate std;` use std
    wherever that feature is on: their findings stand there."""
    roots = ((CrateRoot(Path("src/lib.rs")), no_std_predicates(text)),)
    assert built_no_std(roots, features, LINUX) is no_std
