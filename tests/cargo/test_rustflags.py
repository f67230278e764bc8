"""The rustflags that reach rustc: only those that change cfg values, never an argument file."""

from __future__ import annotations

import pytest

from featcheck.cargo.argv_gate import RustflagError, filter_rustflags


@pytest.mark.parametrize(
    ("flags", "kept"),
    [
        (["-Zcodegen-backend=x.so"], []),
        (["-Z", "llvm-plugins=x.so"], []),
        (["-C", "linker=evil", "-Clink-arg=-Wl,x"], []),
        (["--sysroot", "evil", "-L", "evil", "--extern", "x=evil.rlib"], []),
        (["--print", "cfg=out.txt", "-o", "x"], []),
        (
            ["--cfg", "a", "--cfg=b", "--cfg", 'feature="simd"', "--check-cfg", "cfg(a)"],
            ["--cfg=a", "--cfg=b", '--cfg=feature="simd"'],
        ),
        (
            ["-Ctarget-feature=+avx2", "--codegen", "panic=abort", "-C", "debug-assertions"],
            ["-Ctarget-feature=+avx2", "-Cpanic=abort", "-Cdebug-assertions"],
        ),
        (["-C", "target-cpu=native", "-C", "opt-level=3"], ["-Ctarget-cpu=native"]),
        (["--cfg"], []),
    ],
)
def test_rustflags_keep_only_cfg_changing_flags(flags: list[str], kept: list[str]) -> None:
    assert filter_rustflags(flags) == kept


@pytest.mark.parametrize(
    ("flags", "index"),
    [
        (["--cfg", "@/tmp/evil.args"], 1),
        (["--cfg=@/tmp/evil.args"], 0),
        (["@/tmp/evil.args"], 0),
        (["-L", "@/tmp/evil.args"], 1),
        (["--cfg", "ok", "--cfg", "-Zcodegen-backend=x.so"], 2),
        (["--cfg", "--print=cfg=/tmp/x"], 0),
        (["-C", "target-feature=@/tmp/evil.args"], 0),
        (["-Ctarget-cpu=-Zx"], 0),
        (["-C", "panic"], 0),
    ],
)
def test_rustflags_that_could_reach_rustc_unchecked_are_refused(
    flags: list[str], index: int
) -> None:
    with pytest.raises(RustflagError) as raised:
        filter_rustflags(flags)
    assert raised.value.index == index
