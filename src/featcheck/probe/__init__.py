"""`featcheck probe`: measure, on this machine, what the member's findings cost.

The only part of featcheck that compiles and runs code. It builds featcheck's own small programs
(rules/programs/, shipped inside this package: the matmul's burn_flex.rs and one per crate a
rule is about) against registry crates at the member's locked versions and resolved features,
never the member's crate or its build script, then times them:

    resolve.py   the member's graph, lockfile and release profile; burn-flex's pins
    manifest.py  a program's Cargo.toml for one configuration
    cache.py     cache directory, cache key, the program's crate written there
    build.py     verification with cargo tree, what a build compiles, the build
    compile.py   the toolset, `cargo build`, its progress on stderr (progress.py), why it failed
    measure.py   running the matmul with 1 thread and all cores; PyTorch for comparison
    verdict.py   single-threaded / multi-threaded / inconclusive, and the thresholds
    command.py   the matmul's plan and timing; member.py the whole run (and --rule's);
                 report.py renders the matmul, rules/ the rule probes
"""
