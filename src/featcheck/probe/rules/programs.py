"""The rule probes' programs: one per crate a measurable rule is about."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from featcheck.errors import FeatcheckError
from featcheck.semantics.semver import matches
from featcheck.workspace.names import crate_key

PROGRAMS_DIR = Path(__file__).parent / "programs"
"""Shipped inside the package (see pyproject's package-data)."""


@dataclass(frozen=True)
class Program:
    """The program that times one crate's hot path."""

    crate: str
    file: str
    work: str
    """What it times, in words, for the report."""
    wall: bool = False
    """Timed by wall time (a feature that spreads the work over threads), not by the calling
    thread's CPU time."""
    versions: str | None = None
    """The crate's versions whose API the program is written for (a cargo requirement); None:
    every version."""
    uses: tuple[str, ...] = ()
    """Dependencies of the crate that the program calls as well (burn-ndarray's backend is
    driven through burn-backend's traits): each is pinned, like the crate, to the version and
    exact features the member's build gives it."""
    cfg_features: tuple[str, ...] = ()
    """Features of the crate that change its API, which the program tests with
    `#[cfg(feature = "...")]` (gemm's `Parallelism::Rayon` exists only with `rayon`): the probe
    crate has a feature of each name, on in a build exactly when the crate's feature is."""
    modules: tuple[str, ...] = ()
    """More files of programs/ the program declares as modules (`mod NAME;`), copied beside
    it: the matmul's threads.rs."""

    def covers(self, version: str) -> bool:
        """The program is written for this version of the crate."""
        return self.versions is None or matches(self.versions, version)

    def probe_features(self, features: Iterable[str]) -> list[str]:
        """The probe crate's own features that are on for a build of the crate with
        `features` (see cfg_features)."""
        return sorted(set(self.cfg_features) & set(features))

    def describe(self) -> str:
        """The crate, and the versions the program is for where it is not every version."""
        return self.crate if self.versions is None else f"{self.crate} {self.versions}"

    def sources(self) -> dict[str, bytes]:
        """The probe crate's files: `src/main.rs` (the program), `src/harness.rs` and the
        program's own modules."""
        names = ("harness.rs", *self.modules)
        try:
            program = (PROGRAMS_DIR / self.file).read_bytes()
            modules = {f"src/{name}": (PROGRAMS_DIR / name).read_bytes() for name in names}
        except OSError:
            raise FeatcheckError(
                f"featcheck's probe programs are missing from {PROGRAMS_DIR}"
            ) from None
        # After the program's own `//!` text, which must open the file.
        declared = "".join(
            f"#[allow(dead_code)]\nmod {name.removesuffix('.rs')};\n" for name in names
        )
        return {"src/main.rs": program + b"\n" + declared.encode(), **modules}


PROGRAMS = {
    crate_key(program.crate): program
    for program in (
        Program("memchr", "memchr.rs", "memchr and memmem over 1 MiB"),
        Program("crc32fast", "crc32fast.rs", "crc32 of 1 MiB"),
        Program("regex", "regex.rs", "searches of 4 MiB of text"),
        Program("rustfft", "rustfft.rs", "f32 and f64 FFTs"),
        Program("flate2", "flate2.rs", "gzip of 4 MiB, both ways"),
        Program("serde_json", "serde_json.rs", "parsing 200,000 floats"),
        Program("blake3", "blake3.rs", "hashing 16 MiB"),
        Program("aho-corasick", "aho_corasick.rs", "searches of 4 MiB of text for names"),
        Program("matrixmultiply", "matrixmultiply.rs", "512 x 512 sgemm and dgemm", wall=True),
        Program("faer", "faer.rs", "a 512 x 512 f64 matrix product", wall=True),
        Program("mimalloc", "mimalloc.rs", "small allocations and a BTreeMap of strings"),
        Program("simdutf8", "simdutf8.rs", "validating 4 MiB of ASCII and of mixed-script text"),
        Program(
            "half", "half.rs", "converting 1 Mi f32 values to f16 and back", versions=">=2.3.0"
        ),
        Program(
            "gemm", "gemm.rs", "512 x 512 f32 and f64 gemm", wall=True, cfg_features=("rayon",)
        ),
        Program(
            "burn-ndarray",
            "burn_ndarray.rs",
            "a 512 x 512 f32 matmul of the NdArray backend",
            wall=True,
            # burn-backend's traits since 0.20 (burn-tensor's before, a different program).
            versions=">=0.20.0-0",
            uses=("burn-backend",),
        ),
    )
}


MATMUL = Program(
    "burn-flex",
    "burn_flex.rs",
    "an n x n f32 matmul of burn's Flex backend",
    wall=True,
    # burn-backend's traits since 0.20 (Flex implements them; burn's Tensor calls them).
    versions=">=0.20.0-0",
    uses=("burn-backend",),
    modules=("threads.rs",),
)
"""`featcheck probe`'s matmul: not a rule's program (its verdict is which threads did the
work, not a ratio of two builds), so not in PROGRAMS."""


def program_for(crate: str, version: str) -> Program | None:
    """The program timing `crate` at `version`, if featcheck has one."""
    program = PROGRAMS.get(crate_key(crate))
    return program if program is not None and program.covers(version) else None


def program_timing(crate: str, version: str, feature: str) -> Program | None:
    """The program that times a finding about `feature` of `crate`: None also where the
    finding is about the crate itself (FC024's hint: no build of the program lacks it, so
    there is nothing to time against)."""
    return program_for(crate, version) if feature else None
