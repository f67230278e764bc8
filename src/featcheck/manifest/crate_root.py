"""Whether a member is written for builds without the standard library: `#![no_std]` or
`#![cfg_attr(PREDICATE, no_std)]` among the inner attributes at the top of its crate roots
(`src/lib.rs`, `src/main.rs`, each `[[bin]]`'s file), unless an `extern crate std` brings std
back (`#[cfg(feature = "std")] extern crate std;`, where that cfg holds).

Such a member is meant for targets without `std` (embedded, wasm), even where it is audited on a
host that has it: a feature that needs `std` or threads (rayon, a crate's own `std`) would break
its real builds. So in a build where every crate root it compiles says `no_std`, the rules that
need `std` or threads do not apply, as on a target without `std` (`target-needs` in
rules/spec.py), and no fix is chosen for the findings of others that would add them to its
build unasked. burn's own `burn-no-std-tests` is one (`#![no_std]`); its wasm examples are
`#![cfg_attr(not(test), no_std)]`.

rustc takes inner attributes only before the first item, so reading stops there. A crate root
featcheck does not read (outside the checkout, a link out of it, not a regular file, too large)
counts as one that uses `std`: what featcheck assumed before it read any.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterable, Iterator, Sequence
from itertools import pairwise
from pathlib import Path
from typing import NamedTuple

from featcheck.boundary import read_regular_file, resolve_within
from featcheck.errors import FeatcheckError
from featcheck.semantics.cfg import TargetCfg
from featcheck.workspace.model import CrateRoot

MAX_CRATE_ROOT_BYTES = 8 << 20
"""Larger crate roots are generated code (bindings), not a crate written to be no_std."""


_TARGET_DIRECTORIES = frozenset({"examples", "tests", "benches"})


def package_roots(path: tuple[str, ...]) -> list[tuple[str, ...]]:
    """The directories whose package would take `path` as a target cargo discovers: cargo
    finds targets by these files' presence (`src/lib.rs`, `src/bin/x.rs`, `build.rs`,
    `examples/x/main.rs`), and never reads one it is told the path of."""
    name, directory = path[-1], path[:-1]
    if not name.endswith(".rs"):
        return []
    main = name == "main.rs"
    levels_up = (
        (0, name == "build.rs"),
        (1, directory[-1:] == ("src",) and name in ("lib.rs", "main.rs")),
        (1, len(directory) >= 1 and directory[-1] in _TARGET_DIRECTORIES),
        (2, directory[-2:] == ("src", "bin")),
        (2, main and len(directory) >= 2 and directory[-2] in _TARGET_DIRECTORIES),
        (3, main and directory[-3:-1] == ("src", "bin")),
    )
    return [directory[: len(directory) - up] for up, applies in levels_up if applies]


class NoStd(NamedTuple):
    """When one crate root is `no_std`: where a predicate of `when` holds (None: `#![no_std]`,
    always) and none of `unless`, the conditions of its `extern crate std` (None: always), as
    crates that say `#![no_std]` and `#[cfg(feature = "std")] extern crate std;` write it."""

    when: tuple[str | None, ...] = ()
    unless: tuple[str | None, ...] = ()


_STRING = re.compile(r'b?"(?:[^"\\]|\\.)*"|b?r(#*)".*?"\1', re.DOTALL)
_EXTERN_STD = re.compile(r"\bextern\s+crate\s+std\b")
_ATTRIBUTE_REACH = 4096
"""How far before an `extern crate std` its `#[cfg(...)]` is looked for."""


def no_std_predicates(text: str) -> NoStd:
    """The `no_std` attributes among the inner attributes `text` starts with, and where it
    brings `std` back."""
    text = text.removeprefix("\ufeff")
    found: list[str | None] = []
    for body in _inner_attributes(text):
        if body == "no_std":
            found.append(None)
        elif body.startswith("cfg_attr") and body[len("cfg_attr") :].lstrip().startswith("("):
            inside = body[body.index("(") + 1 : body.rindex(")")] if ")" in body else ""
            predicate, *attributes = _split_commas(inside)
            if "no_std" in (a.strip() for a in attributes):
                found.append(predicate.strip())
    return NoStd(tuple(found), _extern_std(text) if found else ())


def _extern_std(text: str) -> tuple[str | None, ...]:
    """The condition of each `extern crate std`: the `#[cfg(...)]` right before it (None: no such
    attribute). One in a comment counts too: it errs toward std, as before featcheck read any."""
    found: list[str | None] = []
    for match in _EXTERN_STD.finditer(text):
        before = text[max(0, match.start() - _ATTRIBUTE_REACH) : match.start()].rstrip()
        attribute = before[before.rfind("#[") + 2 : -1].strip() if before.endswith("]") else ""
        is_cfg = attribute.startswith("cfg") and attribute[3:].lstrip().startswith("(")
        found.append(
            attribute[attribute.index("(") + 1 : attribute.rindex(")")] if is_cfg else None
        )
    return tuple(found)


def _inner_attributes(text: str) -> Iterable[str]:
    """The body of each `#![...]` before the first item, comments and a shebang skipped."""
    at = 0
    if text.startswith("#!") and not text[2:].lstrip().startswith("["):
        at = text.find("\n") if "\n" in text else len(text)  # a shebang line
    while at < len(text):
        if text[at].isspace():
            at += 1
        elif text.startswith("//", at):
            end = text.find("\n", at)
            at = len(text) if end < 0 else end
        elif text.startswith("/*", at):
            at = _block_comment_end(text, at)
        elif text.startswith("#!", at) and text[at + 2 :].lstrip().startswith("["):
            start = text.index("[", at)
            end = _closing_bracket(text, start)
            if end < 0:
                return
            yield " ".join(text[start + 1 : end].split())
            at = end + 1
        else:
            return


def _block_comment_end(text: str, at: int) -> int:
    depth, at = 1, at + 2
    while depth and at < len(text):
        if text.startswith("/*", at):
            depth, at = depth + 1, at + 2
        elif text.startswith("*/", at):
            depth, at = depth - 1, at + 2
        else:
            at += 1
    return at


def _closing_bracket(text: str, start: int) -> int:
    """Where the bracket that closes the one at `start` is; -1 if none."""
    for at, depth in _outside_strings(text, start):
        if depth == 0 and at > start:
            return at
    return -1


def _split_commas(text: str) -> list[str]:
    """`text` split at its top-level commas (not those inside brackets or strings)."""
    commas = [at for at, depth in _outside_strings(text) if depth == 0 and text[at] == ","]
    bounds = [-1, *commas, len(text)]
    return [text[a + 1 : b] for a, b in pairwise(bounds)]


def _outside_strings(text: str, at: int = 0) -> Iterator[tuple[int, int]]:
    """Each position from `at` that lies outside string literals, with its bracket depth: a
    closing bracket at the depth of the one it closes, an opening one at the depth before it."""
    depth = 0
    while at < len(text):
        if (string := _STRING.match(text, at)) is not None:
            at = string.end()
            continue
        if text[at] in ")]}":
            depth -= 1
            if depth < 0:
                return
        yield at, depth
        if text[at] in "([{":
            depth += 1
        at += 1


def read_no_std(path: Path, checkout: Path | None) -> NoStd:
    opened, link = (None, None) if checkout is None else resolve_within(path, checkout)
    # Only the checkout's own: a `[[bin]] path` may name any file of the machine.
    inside = opened is None or checkout is None or opened.is_relative_to(checkout)
    if link is None and inside:
        with contextlib.suppress(FeatcheckError):
            raw = read_regular_file(path, "crate root", MAX_CRATE_ROOT_BYTES, opened=opened)
            return no_std_predicates(raw.decode("utf-8", "replace"))
    return NoStd()


def built_no_std(
    roots: Sequence[tuple[CrateRoot, NoStd]], features: Iterable[str], cfg: TargetCfg
) -> bool:
    """Whether every crate root a build with `features` compiles is no_std there."""
    on = frozenset(features)
    built = [no_std for root, no_std in roots if root.required <= on]
    if not built or not all(no_std.when for no_std in built):
        return False
    seen = cfg._replace(pairs=cfg.pairs | {("feature", feature) for feature in on})
    return all(
        any(_holds(p, seen) for p in no_std.when)
        and not any(_holds(p, seen, unread=True) for p in no_std.unless)
        for no_std in built
    )


def _holds(predicate: str | None, cfg: TargetCfg, *, unread: bool = False) -> bool:
    """A normal build's value of `predicate` (`test` and `doc` are off); `unread`: the value of
    one featcheck cannot read, which is the one that leaves the crate using std."""
    if predicate is None:
        return True
    try:
        return cfg.applies(f"cfg({predicate})")
    except ValueError:
        return unread
