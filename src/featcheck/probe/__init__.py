"""`featcheck probe`: measure, on this machine, what the member's findings cost.

The only part of featcheck that compiles and runs code. It builds featcheck's own small programs
(rules/programs/, shipped inside this package: the matmul's burn_flex.rs and one per crate a
rule is about; programs.py lists them) against registry crates at the member's locked versions
and resolved features, never the member's crate or its build script, then times them. member.py
runs it all; each module's text says its part.
"""
