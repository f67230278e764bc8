//! ed25519-dalek's key generation and signing: 256 signing keys made from seeds (each computes
//! its public key, one basepoint multiplication) and 256 signatures of a 64-byte message (one
//! basepoint multiplication and two SHA-512 hashes each). ed25519-dalek's `fast` turns on
//! curve25519-dalek's `precomputed-tables`, which those multiplications read.
use ed25519_dalek::{Signer, SigningKey};

/// Deterministic 32-byte seeds (xorshift).
fn seeds(count: usize) -> Vec<[u8; 32]> {
    let mut state = 0x2545_F491_4F6C_DD1D_u64;
    (0..count)
        .map(|_| {
            let mut bytes = [0u8; 32];
            for chunk in bytes.chunks_mut(8) {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                chunk.copy_from_slice(&state.to_le_bytes());
            }
            bytes
        })
        .collect()
}

fn main() {
    let seeds = seeds(256);
    harness::time("keygen", 15, || {
        let keys: Vec<SigningKey> = seeds.iter().map(SigningKey::from_bytes).collect();
        keys.iter().fold(0u64, |acc, k| acc.rotate_left(5) ^ u64::from(k.verifying_key().as_bytes()[0]))
    });
    let keys: Vec<SigningKey> = seeds.iter().map(SigningKey::from_bytes).collect();
    let message = [0x5Au8; 64];
    harness::time("sign", 15, || {
        keys.iter().fold(0u64, |acc, k| acc.rotate_left(5) ^ u64::from(k.sign(&message).to_bytes()[0]))
    });
}
