"""The rule probes' programs: one per crate a measurable rule is about."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from featcheck.errors import FeatcheckError
from featcheck.semantics.semver import matches
from featcheck.workspace.model import crate_key

PROGRAMS_DIR = Path(__file__).parent / "rules" / "programs"
"""Shipped inside the package (see pyproject's package-data)."""


@dataclass(frozen=True)
class Program:
    """The program that times one crate's hot path."""

    crate: str
    file: str
    work: str
    """What it times, in words, for the report."""
    wall: bool = False
    """Timed by wall time (the feature spreads the work over threads), not thread CPU time."""
    versions: str | None = None
    """A cargo requirement: the versions whose API the program is written for (None: all)."""
    uses: tuple[str, ...] = ()
    """Dependencies of the crate the program calls as well, pinned like the crate itself."""
    cfg_features: tuple[str, ...] = ()
    """Features that change the crate's API, which the program tests with `cfg` (cache.py)."""
    data: str | None = None
    """A file of programs/ it embeds (`include_bytes!`): input the crate cannot make (a JPEG)."""
    modules: tuple[str, ...] = ()
    """More files of programs/ it declares as modules (`mod NAME;`): the matmul's threads.rs."""
    cold: tuple[str, ...] = ()
    """Crates no timed code runs, compiled unoptimised for a shorter build (README, Builds)."""
    thin: tuple[str, ...] = ()
    """Crates the timed loop only passes through to another's kernels: unoptimised too."""

    def describe(self) -> str:
        return self.crate if self.versions is None else f"{self.crate} {self.versions}"

    def sources(self) -> dict[str, bytes]:
        names = ("harness.rs", *self.modules)
        files = {"src/main.rs": self.file, **{f"src/{name}": name for name in names}}
        if self.data is not None:
            files[f"src/{self.data}"] = self.data
        try:
            sources = {name: (PROGRAMS_DIR / file).read_bytes() for name, file in files.items()}
        except OSError:
            raise FeatcheckError(
                f"featcheck's probe programs are missing from {PROGRAMS_DIR}"
            ) from None
        # After the program's own `//!` text, which must open the file.
        declared = "".join(
            f"#[allow(dead_code)]\nmod {name.removesuffix('.rs')};\n" for name in names
        )
        sources["src/main.rs"] += b"\n" + declared.encode()
        return sources


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
        Program(
            "regex-automata",
            "regex_automata.rs",
            "meta regex searches of 4 MiB of text",
            versions=">=0.4.0, <0.5.0",
        ),
        Program("uuid", "uuid.rs", "generating 100,000 random UUIDs", versions=">=1.0.0, <2.0.0"),
        Program("lz4_flex", "lz4_flex.rs", "lz4 blocks of 4 MiB, both ways", versions=">=0.11.0"),
        Program("matrixmultiply", "matrixmultiply.rs", "512 x 512 sgemm and dgemm", wall=True),
        Program("faer", "faer.rs", "a 512 x 512 f64 matrix product", wall=True),
        Program("mimalloc", "mimalloc.rs", "small allocations and a BTreeMap of strings"),
        Program("simdutf8", "simdutf8.rs", "validating 4 MiB of ASCII and of mixed-script text"),
        Program(
            "half", "half.rs", "converting 1 Mi f32 values to f16 and back", versions=">=2.3.0"
        ),
        Program("tiny-skia", "tiny_skia.rs", "filling, stroking and blending on 1024 x 1024"),
        Program(
            "zune-jpeg",
            "zune_jpeg.rs",
            "decoding a 1024 x 768 JPEG to RGB",
            # 0.4 takes its input by another trait (`ZReaderTrait`, not 0.5's `ZCursor`).
            versions=">=0.5.0, <0.6.0",
            data="photo.jpg",
        ),
        # The APIs timed here (`mul_base`, `SigningKey::from_bytes`, `MulByGenerator`) as of
        # the major versions measured.
        Program(
            "curve25519-dalek",
            "curve25519_dalek.rs",
            "256 basepoint multiplications, Edwards and Ristretto",
            versions=">=4.0.0-0, <5.0.0-0",
        ),
        Program(
            "ed25519-dalek",
            "ed25519_dalek.rs",
            "256 key generations and 256 signatures",
            versions=">=2.0.0-0, <3.0.0-0",
        ),
        Program(
            "k256",
            "k256.rs",
            "256 generator multiplications and 256 ECDSA signatures",
            versions=">=0.13.0, <0.14.0-0",
        ),
        Program(
            "p256",
            "p256.rs",
            "256 generator multiplications and 256 ECDSA signatures",
            versions=">=0.14.0, <0.15.0-0",
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
        Program("bytecount", "bytecount.rs", "counting bytes and characters in 4 MiB"),
        Program("base64-simd", "base64_simd.rs", "base64 of 4 MiB, both ways", versions="^0.8"),
        Program("hex-simd", "hex_simd.rs", "hex of 4 MiB, both ways", versions="^0.8"),
        # `to_borrowed_value` and the prelude as 0.17 has them (earlier versions not tried).
        Program("simd-json", "simd_json.rs", "parsing 4 MiB of JSON", versions=">=0.17.0"),
    )
}


MATMUL_COLD = (
    # cubecl-environment's: backtraces on error paths, its configuration file (read once at
    # start), message serialization, async channels.
    *("addr2line", "adler2", "backtrace", "gimli", "miniz_oxide", "object", "rustc-demangle"),
    *("etcetera", "serde_spanned", "toml", "toml_datetime", "toml_parser", "toml_writer"),
    *("winnow", "serde_json", "itoa", "zmij", "ciborium", "ciborium-io", "ciborium-ll"),
    *("serde_bytes", "async-channel", "concurrent-queue", "embassy-futures", "event-listener"),
    *("event-listener-strategy", "futures-core", "futures-io", "futures-lite", "log"),
    # cubecl-common's type names (tynm, nom) and derives; burn-std's tensor ids and encoding.
    *("tynm", "nom", "derive_more", "uuid", "data-encoding"),
)
"""The matmul's cold crates (`Program.cold`): none of them is burn-flex, burn-backend, burn-std,
cubecl-common, a gemm crate or anything gemm depends on. Unoptimised, they save about 13 of the
first build's 296 CPU-seconds (measured paired; README, Builds)."""

MATMUL = Program(
    "burn-flex",
    "burn_flex.rs",
    "an n x n f32 matmul of burn's Flex backend",
    wall=True,
    # burn-backend's traits since 0.20 (Flex implements them; burn's Tensor calls them).
    versions=">=0.20.0-0",
    uses=("burn-backend",),
    modules=("threads.rs",),
    cold=MATMUL_COLD,
    # burn-flex's f32 matmul checks shapes, allocates the product (burn-std's Shape,
    # cubecl-common's Bytes) and hands it to gemm's kernels; as the member builds them they were
    # the first build's critical path, and unoptimised they time the same (README, Builds).
    thin=("burn-flex", "burn-std"),
)
"""`featcheck probe`'s matmul: not a rule's program (its verdict is which threads did the
work, not a ratio of two builds), so not in PROGRAMS."""


def program_for(crate: str, version: str) -> Program | None:
    program = PROGRAMS.get(crate_key(crate))
    if program is None or program.versions is None:
        return program
    return program if matches(program.versions, version) else None


def program_timing(crate: str, version: str, feature: str) -> Program | None:
    """The program that times a finding about `feature` of `crate`: None also where the
    finding is about the crate itself (FC024's hint: no build of the program lacks it, so
    there is nothing to time against)."""
    return program_for(crate, version) if feature else None
