//! base64-simd encoding 4 MiB of bytes and decoding the text back (STANDARD alphabet, into
//! buffers made once), sixteen times each.
use base64_simd::AsOut;

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
    let base64 = base64_simd::STANDARD;
    let mut text = vec![0_u8; base64.encoded_length(bytes.len())];
    let mut back = vec![0_u8; bytes.len()];
    harness::time("encode", 15, || {
        (0..16).map(|_| base64.encode(&bytes, text.as_mut_slice().as_out()).len()).sum::<usize>()
    });
    harness::time("decode", 15, || {
        (0..16)
            .map(|_| base64.decode(&text, back.as_mut_slice().as_out()).unwrap().len())
            .sum::<usize>()
    });
    assert_eq!(back, bytes);
}
