"""Toolchain files, found as rustup finds them."""

from __future__ import annotations

from pathlib import Path

from featcheck.cargo.toolchain import find_toolchain_request


def test_toolchain_file_search_matches_rustup(tmp_path: Path) -> None:
    inner = tmp_path / "a" / "b"
    inner.mkdir(parents=True)
    assert find_toolchain_request(inner, {}).name is None
    (tmp_path / "rust-toolchain.toml").write_text('[toolchain]\nchannel = "1.95"\n')
    assert find_toolchain_request(inner, {}).name == "1.95"
    # Both names in one directory: rustup takes the legacy `rust-toolchain`.
    (tmp_path / "a" / "rust-toolchain.toml").write_text('[toolchain]\nchannel = "beta"\n')
    (tmp_path / "a" / "rust-toolchain").write_text("nightly-2026-01-01\n")
    request = find_toolchain_request(inner, {})
    assert (request.name, request.line) == ("nightly-2026-01-01", 1)
    # A `rustup override set` for a directory on the way beats files further up.
    assert find_toolchain_request(inner, {inner.resolve(): "stable"}).name == "stable"
