//! curve25519-dalek's basepoint multiplication, the work of key generation and signing:
//! `EdwardsPoint::mul_base` and `RistrettoPoint::mul_base` of 256 scalars each. With
//! `precomputed-tables` both read the crate's basepoint tables; without, they multiply the
//! basepoint like any other point. The points are summed and the sum compressed once, so the
//! timing is the multiplications', not the compressions'.
use curve25519_dalek::{EdwardsPoint, RistrettoPoint, Scalar};

/// Deterministic scalars (xorshift bytes reduced modulo the group order).
fn scalars(count: usize) -> Vec<Scalar> {
    let mut state = 0x9E37_79B9_7F4A_7C15_u64;
    (0..count)
        .map(|_| {
            let mut bytes = [0u8; 32];
            for chunk in bytes.chunks_mut(8) {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                chunk.copy_from_slice(&state.to_le_bytes());
            }
            Scalar::from_bytes_mod_order(bytes)
        })
        .collect()
}

fn main() {
    let scalars = scalars(256);
    harness::time("edwards", 15, || {
        let sum: EdwardsPoint = scalars.iter().map(EdwardsPoint::mul_base).sum();
        sum.compress().to_bytes()[..8].to_vec()
    });
    harness::time("ristretto", 15, || {
        let sum: RistrettoPoint = scalars.iter().map(RistrettoPoint::mul_base).sum();
        sum.compress().to_bytes()[..8].to_vec()
    });
}
