//! blake3 over 16 MiB, hashed in one call.
fn main() {
    let data = harness::text(16 << 20, 7).into_bytes();
    harness::time("hash16m", 9, || blake3::hash(&data).to_hex().to_string());
}
