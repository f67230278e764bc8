//! jpeg-decoder decoding a 1024 x 768 baseline JPEG (4:2:0, quality 85, `photo.jpg`: a
//! photo-like picture of gradients, waves and grain) to RGB, four times; by wall time: with
//! `rayon` the decoder spreads each component's rows over rayon's threads, without it runs one
//! thread per component.
const JPEG: &[u8] = include_bytes!("../../../../src/featcheck/probe/rules/programs/photo.jpg");

fn main() {
    harness::time_wall("decode", 15, || {
        (0..4)
            .map(|_| {
                let pixels = jpeg_decoder::Decoder::new(JPEG)
                    .decode()
                    .expect("a valid JPEG");
                pixels.iter().fold(0_u64, |sum, &byte| {
                    sum.wrapping_mul(31).wrapping_add(byte as u64)
                })
            })
            .fold(0_u64, u64::wrapping_add)
    });
}
