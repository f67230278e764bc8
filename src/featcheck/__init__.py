"""featcheck: audits the resolved Cargo feature set of Rust projects."""

__version__ = "0.1.0"
