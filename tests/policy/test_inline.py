"""`# featcheck: allow(...)` comments: codes, reason, and errors at their place."""

from __future__ import annotations

from pathlib import Path

import pytest

from featcheck.errors import FeatcheckError
from featcheck.manifest.document import read_manifest
from featcheck.policy.settings import inline_allows


def test_inline_allows_parse_codes_names_and_reason(tmp_path: Path) -> None:
    manifest = tmp_path / "Cargo.toml"
    manifest.write_text(
        "[dependencies]\n"
        'burn = "0.22"  # featcheck: allow(FC001, flex-without-simd): wasm, no threads\n'
    )
    allows = inline_allows(read_manifest(manifest))
    assert [(a.code, a.reason) for a in allows] == [
        ("FC001", "wasm, no threads"),
        ("FC003", "wasm, no threads"),
    ]
    first, second = (a.origin for a in allows)
    assert (first.line, first.column, first.end_column) == (2, 35, 40)
    assert (second.line, second.column) == (2, 42)
    assert first.source_line.startswith("burn = ")


@pytest.mark.parametrize(
    ("comment", "column", "message"),
    [
        ("# featcheck: allow(FC001)", 15, "needs a reason"),
        ("# featcheck: allow(FC001)   ", 15, "needs a reason"),
        ("# featcheck: allow(FC001, FC0042) why", 41, "unknown rule `FC0042`"),
        ("# featcheck: allow( ) why", 35, "expected a rule code"),
        ("# featcheck: alow(FC001) why", 15, "expected `# featcheck: allow(CODE, ...) reason`"),
        ("# featcheck: allow(FC900) why", 34, "FC900 cannot be allowed"),
    ],
)
def test_malformed_comments_are_errors_at_their_place(
    tmp_path: Path, comment: str, column: int, message: str
) -> None:
    manifest = tmp_path / "Cargo.toml"
    manifest.write_text(f'[dependencies]\nburn = "0.22" {comment}\n')
    with pytest.raises(FeatcheckError) as caught:
        inline_allows(read_manifest(manifest))
    assert (caught.value.path, caught.value.line, caught.value.column) == (manifest, 2, column)
    assert message in caught.value.message
