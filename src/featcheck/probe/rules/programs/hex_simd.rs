//! hex-simd encoding 4 MiB of bytes as lower-case hex and decoding the text back (into buffers
//! made once), sixteen times each.
use hex_simd::{AsOut, AsciiCase};

fn main() {
    let mut state = 0x9e37_79b9_7f4a_7c15_u64;
    let bytes: Vec<u8> = (0..4 << 20)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state as u8
        })
        .collect();
    let mut text = vec![0_u8; bytes.len() * 2];
    let mut back = vec![0_u8; bytes.len()];
    harness::time("encode", 15, || {
        (0..16)
            .map(|_| hex_simd::encode(&bytes, text.as_mut_slice().as_out(), AsciiCase::Lower).len())
            .sum::<usize>()
    });
    harness::time("decode", 15, || {
        (0..16).map(|_| hex_simd::decode(&text, back.as_mut_slice().as_out()).unwrap().len()).sum::<usize>()
    });
    assert_eq!(back, bytes);
}
