//! zune-jpeg 0.5 decoding a 1024 x 768 baseline JPEG (4:2:0, quality 85, `photo.jpg`: a
//! photo-like picture of gradients, waves and grain) to RGB, four times.
use zune_jpeg::zune_core::bytestream::ZCursor;
use zune_jpeg::JpegDecoder;

const JPEG: &[u8] = include_bytes!("photo.jpg");

fn main() {
    harness::time("decode", 15, || {
        (0..4)
            .map(|_| {
                let pixels = JpegDecoder::new(ZCursor::new(JPEG))
                    .decode()
                    .expect("a valid JPEG");
                pixels.iter().fold(0_u64, |sum, &byte| {
                    sum.wrapping_mul(31).wrapping_add(byte as u64)
                })
            })
            .fold(0_u64, u64::wrapping_add)
    });
}
