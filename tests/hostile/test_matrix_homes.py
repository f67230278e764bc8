"""Every entry point of featcheck (hostile_matrix.py) against the planted checkout with the
user's cargo home, cache or rustup home (and a toolchain) inside it: a file of its own so that
pytest-xdist runs it beside test_matrix.py."""

from __future__ import annotations

import pytest
from hostile_matrix import COLUMNS, Column, Entry, rows
from hostile_run import Setting, assert_row

pytestmark = pytest.mark.cargo

COLUMNS_HERE = tuple(c for c in COLUMNS if c.name.startswith("planted-"))


@pytest.mark.parametrize(("entry", "column"), rows(COLUMNS_HERE))
def test_entry_point_on_checkout_with_homes_inside(
    entry: Entry, column: Column, setting: Setting
) -> None:
    assert_row(entry, column, setting)
