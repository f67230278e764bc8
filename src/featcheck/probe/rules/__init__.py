"""`featcheck probe --rule CODE`: a rule's cost timed on this machine, for the member's own
crate version and features, against the same build with featcheck's fix.

Each measurable rule's crate has a small program of featcheck's (`programs/`, the rule pack's
benchmarks): it times the crate's own hot path (a regex search, a memchr scan, a crc32, an FFT,
deflate) by the calling thread's CPU time. The program is built twice in the user's cache, with
the crate pinned to the member's version and exactly its resolved features, then with the
features the fix gives it, and the two binaries are run in turn. Nothing of the member's code
is built or run.
"""
