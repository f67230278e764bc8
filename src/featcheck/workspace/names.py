"""Crate names as crates.io compares them.

crates.io treats `-` and `_` as the same character and ignores case: it refuses `parking-lot`
next to `parking_lot`, so a name written either way means one crate. Cargo itself knows a
package only by its own spelling (the one in its manifest). So featcheck compares every name a
user or a rule writes (rule specs, `-p`, suppressions) with `crate_key`, and prints the name
cargo prints.
"""

from __future__ import annotations

import functools


@functools.cache
def crate_key(name: str) -> str:
    """`name` as crates.io compares it: `_` read as `-`, case ignored. (Kept per name: the
    rules and the fix search compare every package of every build they look at.)"""
    return name.replace("_", "-").lower()


def same_crate(written: str, name: str) -> bool:
    """Whether `written` (by a user or a rule) names the crate cargo calls `name`."""
    return crate_key(written) == crate_key(name)


def extern_name(name: str) -> str:
    """The name Rust code uses for a crate or a renamed dependency: `-` written as `_`."""
    return name.replace("-", "_")
