//! exr writing a 1024 x 1024 RGBA f16 image with ZIP compression (16-line blocks, 64 of them)
//! to memory, and reading it back; by wall time: with `rayon` exr compresses and decompresses
//! the blocks on several threads.
use exr::prelude::*;
use std::io::Cursor;

const SIZE: usize = 1024;

/// A photo-like pixel: gradients, waves and a little grain.
fn pixel(position: Vec2<usize>) -> (f16, f16, f16, f16) {
    let (x, y) = (
        position.x() as f32 / SIZE as f32,
        position.y() as f32 / SIZE as f32,
    );
    let grain = ((position.x() * 7919 + position.y() * 104_729) % 17) as f32 / 400.0;
    let wave = (x * 23.0).sin() * (y * 17.0).cos() * 0.2;
    (
        f16::from_f32(0.4 + 0.5 * x + wave + grain),
        f16::from_f32(0.3 + 0.6 * y - wave * 0.5 + grain),
        f16::from_f32(0.7 - 0.4 * x * y + grain),
        f16::from_f32(1.0),
    )
}

fn main() {
    let layer = Layer::new(
        (SIZE, SIZE),
        LayerAttributes::named("main"),
        Encoding::SMALL_LOSSLESS,
        SpecificChannels::rgba(pixel),
    );
    let image = Image::from_layer(layer);
    let write = || {
        let mut bytes = Vec::new();
        image
            .write()
            .to_buffered(Cursor::new(&mut bytes))
            .expect("writing to memory");
        bytes
    };
    harness::time_wall("write_zip", 9, || write().len());
    let bytes = write();
    harness::time_wall("read_zip", 9, || {
        let read = read()
            .no_deep_data()
            .largest_resolution_level()
            .all_channels()
            .first_valid_layer()
            .all_attributes()
            .from_buffered(Cursor::new(&bytes[..]))
            .expect("reading from memory");
        read.layer_data
            .channel_data
            .list
            .iter()
            .fold(0_u64, |sum, channel| {
                channel.sample_data.values_as_f32().fold(sum, |sum, value| {
                    sum.wrapping_mul(31).wrapping_add(value.to_bits() as u64)
                })
            })
    });
}
