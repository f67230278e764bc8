//! k256 (secp256k1) generator multiplication, the work of ECDSA signing's nonce point:
//! `ProjectivePoint::mul_by_generator` of 256 scalars, and 256 ECDSA signatures of a message
//! (RFC 6979 nonces, one generator multiplication each). With `precomputed-tables` both read
//! k256's lazily built basepoint table; without, `mul_by_generator` is `GENERATOR * k`.
use k256::ecdsa::{signature::Signer, Signature, SigningKey};
use k256::elliptic_curve::ops::MulByGenerator;
use k256::elliptic_curve::ops::Reduce;
use k256::elliptic_curve::sec1::ToEncodedPoint;
use k256::{ProjectivePoint, Scalar, U256};

/// Deterministic 32-byte strings (xorshift).
fn blocks(count: usize) -> Vec<[u8; 32]> {
    let mut state = 0xD1B5_4A32_D192_ED03_u64;
    (0..count)
        .map(|_| {
            let mut bytes = [0u8; 32];
            for chunk in bytes.chunks_mut(8) {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                chunk.copy_from_slice(&state.to_le_bytes());
            }
            bytes[0] |= 1; // never zero: a valid secret key
            bytes[0] &= 0x7F; // below the group order
            bytes
        })
        .collect()
}

fn main() {
    let scalars: Vec<Scalar> =
        blocks(256).iter().map(|b| <Scalar as Reduce<U256>>::reduce_bytes(b.into())).collect();
    harness::time("generator", 15, || {
        let sum: ProjectivePoint = scalars.iter().map(ProjectivePoint::mul_by_generator).sum();
        sum.to_affine().to_encoded_point(true).as_bytes()[..8].to_vec()
    });
    let keys: Vec<SigningKey> =
        blocks(256).iter().map(|b| SigningKey::from_bytes(b.into()).unwrap()).collect();
    let message = [0x5Au8; 64];
    harness::time("ecdsa_sign", 15, || {
        keys.iter().fold(0u64, |acc, k| {
            let signature: Signature = k.sign(&message);
            acc.rotate_left(5) ^ u64::from(signature.to_bytes()[0])
        })
    });
}
