"""cfg expressions, evaluated as cargo evaluates a `[target.X]` table."""

from __future__ import annotations

import pytest
from support import LINUX_CFG

from featcheck.semantics.cfg import TargetCfg


@pytest.mark.parametrize(
    ("platform", "expected"),
    [
        (None, True),
        ('cfg(target_os = "linux")', True),
        ("cfg(windows)", False),
        ("cfg(unix)", True),
        ('cfg(all(unix, target_arch = "x86_64"))', True),
        ('cfg(any(windows, target_os = "macos"))', False),
        ("cfg(not(windows))", True),
        ("x86_64-unknown-linux-gnu", True),
        ("x86_64-pc-windows-msvc", False),
    ],
)
def test_target_tables_apply_as_cargo_evaluates_them(platform: str | None, expected: bool) -> None:
    cfg = TargetCfg.parse("x86_64-unknown-linux-gnu", LINUX_CFG)
    assert cfg.applies(platform) is expected
