"""Audit without starting any process (`--no-exec`): no cargo, no rustc, no rustup.

The files source (`source.FileSource`) reads files where the cargo source asks `cargo metadata`
and `rustc --print cfg`: the workspace's manifests, its Cargo.lock, the dependency manifests
already unpacked in the local cargo registry (`$CARGO_HOME/registry/src/*/NAME-VERSION/`), a
`vendor/` directory at the workspace root or the local source the cargo configuration puts in
place of the registry (`sources`), and built-in cfg tables for the common targets. See
`metadata.build_metadata`. What it cannot read goes through the same audit as a gap (`gaps`),
never a second, weaker one.
"""
