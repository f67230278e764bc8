"""Settings: what an allow entry matches."""

from __future__ import annotations

from featcheck.policy.settings import Allow


def test_allow_matching_by_every_field() -> None:
    allow = Allow(code="FC001", reason="r", crate="burn_flex", member="app", target="wasm32")
    assert allow.matches("FC001", "burn-flex", "app", "wasm32")
    assert not allow.matches("FC003", "burn-flex", "app", "wasm32")
    assert not allow.matches("FC001", "burn-ndarray", "app", "wasm32")
    assert not allow.matches("FC001", "burn-flex", "lib", "wasm32")
    assert not allow.matches("FC001", "burn-flex", None, "wasm32")
    assert not allow.matches("FC001", "burn-flex", "app", "x86_64-unknown-linux-gnu")
    anything = Allow(code="*", reason="r")
    assert anything.matches("FC007", "burn-flex", None, None)
    assert allow.describe() == "FC001 for crate burn_flex, member app, target wasm32"
    assert anything.describe() == "all rules"
