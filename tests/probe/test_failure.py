"""A failed probe build in one line (probe/compile.py)."""

from __future__ import annotations

import pytest

from featcheck.probe.compile import classify_build_failure


@pytest.mark.parametrize(
    ("stderr", "offline", "expected"),
    [
        ("error: linker `cc` not found\n  = note: No such file", False, "no C toolchain"),
        (
            "error: failed to download from `https://static.crates.io/crates/x`\n"
            "Caused by:\n  [6] Couldn't resolve host name",
            False,
            "no network?",
        ),
        (
            "error: failed to get `rayon` as a dependency of package `featcheck-probe`\n"
            "Caused by:\n  attempting to make an HTTP request, but --offline was specified",
            True,
            "--offline keeps cargo off the network",
        ),
        (
            "error[E0425]: cannot find function `flex` in this scope\n"
            "error: could not compile `featcheck-probe` (bin)",
            False,
            "the probe program does not compile against these crate versions: error[E0425]",
        ),
        ("error: something else entirely", False, "cargo failed: error: something else"),
    ],
)
def test_build_failures_become_one_line(stderr: str, offline: bool, expected: str) -> None:
    message = classify_build_failure(stderr, offline=offline)
    assert expected in message
    assert "\n" not in message
