"""The directory names cargo gives a registry source under `$CARGO_HOME/registry/{src,cache}`.

cargo names them `HOST-HASH` (`short_name` in cargo's `sources/registry/mod.rs`), HASH being a
hash of the full source id, so no other source can share a directory with it. A name is never
matched by its host prefix: an audit of a hostile checkout that replaced crates-io with
`sparse+http://index.crates.io-0.evil.example/` has cargo unpack that host's packages under
`index.crates.io-0.evil.example-<hash>`, which a prefix `index.crates.io-` would take for
crates.io in every later `--no-exec` audit of any project.

The hash is cargo's `short_hash` of the `SourceId`: its kind (an enum discriminant) and its URL
as text, through cargo's stable hasher, printed as the 8 little-endian bytes in hex. Since
cargo 1.85 the hasher is rustc-stable-hash's SipHasher128 (SipHash-1-3, 128 bits folded to 64,
small integers written as one byte); before, SipHash-2-4 with integers written as 8 bytes. A
registry filled by either cargo is found. The values are checked against cargo's own tests and
a real cargo home (tests/noexec/test_noexec_sources.py).
"""

from __future__ import annotations

from urllib.parse import urlsplit

from featcheck.noexec.packages import CRATES_IO

_MASK = (1 << 64) - 1
_REGISTRY, _SPARSE = 2, 3
"""`SourceKind::Registry` and `SourceKind::SparseRegistry`: cargo hashes the discriminant."""

_CRATES_IO_SPARSE = "sparse+https://index.crates.io/"


def _rotate(value: int, bits: int) -> int:
    return ((value << bits) | (value >> (64 - bits))) & _MASK


def _round(v: list[int]) -> None:
    v[0] = (v[0] + v[1]) & _MASK
    v[1] = _rotate(v[1], 13) ^ v[0]
    v[0] = _rotate(v[0], 32)
    v[2] = (v[2] + v[3]) & _MASK
    v[3] = _rotate(v[3], 16) ^ v[2]
    v[0] = (v[0] + v[3]) & _MASK
    v[3] = _rotate(v[3], 21) ^ v[0]
    v[2] = (v[2] + v[1]) & _MASK
    v[1] = _rotate(v[1], 17) ^ v[2]
    v[2] = _rotate(v[2], 32)


def siphash(data: bytes, *, compression: int, finalization: int, wide: bool) -> int:
    """SipHash with zero keys: SipHash-c-d's 64 bits, or (`wide`) rustc's SipHasher128 folded
    to 64 bits as its `Hasher::finish` does (`h0 * 3 + h1`)."""
    v = [0x736F6D6570736575, 0x646F72616E646F6D, 0x6C7967656E657261, 0x7465646279746573]
    if wide:
        v[1] ^= 0xEE
    whole = len(data) - len(data) % 8
    words = [int.from_bytes(data[i : i + 8], "little") for i in range(0, whole, 8)]
    words.append(((len(data) & 0xFF) << 56) | int.from_bytes(data[whole:], "little"))
    for word in words:
        v[3] ^= word
        for _ in range(compression):
            _round(v)
        v[0] ^= word
    v[2] ^= 0xEE if wide else 0xFF
    for _ in range(finalization):
        _round(v)
    first = v[0] ^ v[1] ^ v[2] ^ v[3]
    if not wide:
        return first
    v[1] ^= 0xDD
    for _ in range(finalization):
        _round(v)
    return (first * 3 + (v[0] ^ v[1] ^ v[2] ^ v[3])) & _MASK


def short_hashes(kind: int, url: str) -> tuple[str, str]:
    """cargo's `short_hash` of a registry source id, as cargo >= 1.85 and as earlier cargo."""
    text = url.encode() + b"\xff"  # `str::hash`: the bytes, then a 0xff terminator
    current = siphash(bytes([kind]) + text, compression=1, finalization=3, wide=True)
    earlier = siphash(kind.to_bytes(8, "little") + text, compression=2, finalization=4, wide=False)
    return current.to_bytes(8, "little").hex(), earlier.to_bytes(8, "little").hex()


def _names(kind: int, url: str) -> tuple[str, ...]:
    host = urlsplit(url.removeprefix("sparse+")).hostname or ""
    return tuple(f"{host}-{digest}" for digest in short_hashes(kind, url))


def source_directories(source: str) -> frozenset[str]:
    """The names of the directories cargo keeps `source`'s packages in (a Cargo.lock
    `source`); none for a source that is not a registry. crates.io's lockfile id stands for
    both of its indexes, the sparse one cargo uses by default and the git one."""
    if source == CRATES_IO:
        return frozenset(
            (*_names(_SPARSE, _CRATES_IO_SPARSE), *_names(_REGISTRY, CRATES_IO[len("registry+") :]))
        )
    kind, plus, url = source.partition("+")
    if not plus or kind not in ("registry", "sparse"):
        return frozenset()
    return frozenset(_names(_SPARSE, source) if kind == "sparse" else _names(_REGISTRY, url))
