//! flate2 (rust_backend) on 4 MiB of text: gzip compress at the default level, and decompress the
//! result; with and without `runtime_detection`.
use std::io::{Read, Write};

use flate2::read::GzDecoder;
use flate2::write::GzEncoder;
use flate2::Compression;

fn compress(data: &[u8]) -> Vec<u8> {
    let mut encoder = GzEncoder::new(Vec::new(), Compression::default());
    encoder.write_all(data).unwrap();
    encoder.finish().unwrap()
}

fn decompress(packed: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    GzDecoder::new(packed).read_to_end(&mut out).unwrap();
    out
}

fn main() {
    let data = harness::text(4 << 20, 7).into_bytes();
    // Backends may encode differently: the builds are compared on the round trip.
    let mut packed = Vec::new();
    let work = |packed: &mut Vec<u8>| *packed = compress(&data);
    harness::time_then("compress", 7, &mut packed, work, |packed| {
        decompress(packed) == data
    });
    harness::time("decompress", 7, || decompress(&packed) == data);
}
