"""`featcheck probe`: measure, on this machine, what the member's findings cost.

The only part of featcheck that compiles and runs code. It builds featcheck's own small programs
(rules/programs/, shipped inside this package: the matmul's burn_flex.rs and one per crate a
rule is about; programs.py lists them) against registry crates at the member's locked versions
and resolved features, never the member's crate or its build script, then times them:

    resolve.py   the member's graph, lockfile and release profile; the pins a program needs
    cache.py     cache directory, cache key, the program's crate (its Cargo.toml) written there;
                 what the rule probes measured, for `featcheck --measured`
    build.py     verification with cargo tree, what a build compiles, the build
    compile.py   the toolset, `cargo build`, its progress on stderr, why it failed
    measure.py   the one timing loop: the matmul with 1 thread and all cores, a rule's two
                 builds in turn; PyTorch for comparison
    verdict.py   single-threaded / multi-threaded / inconclusive, and the thresholds
    command.py   the matmul's plan and timing; member.py the whole run, the rule probes,
                 the statement of what the builds compile and run, and the consent to it
    report.py    the text of the one report, schema.py its JSON
"""
