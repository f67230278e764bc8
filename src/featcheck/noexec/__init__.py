"""Audit without starting any process (`--no-exec`): no cargo, no rustc, no rustup.

What it cannot read goes through the same audit as a gap (`gaps`), never a second, weaker one.
"""
