//! crc32fast over 1 MiB, 16 times per sample.
fn main() {
    let data = harness::text(1 << 20, 7).into_bytes();
    harness::time("crc32", 25, || {
        let mut hasher = crc32fast::Hasher::new();
        for _ in 0..16 {
            hasher.update(&data);
        }
        hasher.finalize()
    });
}
