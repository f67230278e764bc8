"""`featcheck probe`: measure, on this machine, whether the member's matmul uses one core.

The only part of featcheck that compiles and runs code. It builds featcheck's own probe crate
(`crate/`, shipped inside this package) against registry crates at the member's locked versions
and resolved features, never the member's crate or its build script, then times it:

    resolve.py   the member's burn-flex/gemm versions and features, lockfile, release profile
    manifest.py  the probe's Cargo.toml for that configuration
    cache.py     cache directory, cache key, the configuration's crate written there
    build.py     verification with cargo tree, what a build compiles, the build
    compile.py   the toolset, `cargo build`, its progress on stderr (progress.py), why it failed
    measure.py   running the probe with 1 thread and all cores; PyTorch for comparison
    verdict.py   single-threaded / multi-threaded / inconclusive, and the thresholds
    command.py   the whole flow; report.py renders it; member.py adds the rule probes
"""
