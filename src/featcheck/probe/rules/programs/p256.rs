//! p256 (NIST P-256) generator multiplication, the work of key generation and ECDSA signing:
//! `ProjectivePoint::mul_by_generator` of 256 scalars, and 256 ECDSA signatures of a message
//! (RFC 6979 nonces, one generator multiplication each). With `precomputed-tables` (0.14 and
//! later) both read primeorder's basepoint table; without, the generator is multiplied like
//! any other point.
use p256::ecdsa::{signature::Signer, Signature, SigningKey};
use p256::elliptic_curve::group::{Group, GroupEncoding};
use p256::{ProjectivePoint, Scalar};

/// Deterministic full-width scalars: a quadratic sequence in the scalar field.
fn scalars(count: usize) -> Vec<Scalar> {
    let mut state = Scalar::from(0x9E37_79B9_7F4A_7C15_u64);
    (0..count)
        .map(|i| {
            state = state.square() + Scalar::from(i as u64 + 3);
            state
        })
        .collect()
}

fn main() {
    let scalars = scalars(256);
    harness::time("generator", 15, || {
        let sum: ProjectivePoint = scalars.iter().map(ProjectivePoint::mul_by_generator).sum();
        sum.to_bytes()[..8].to_vec()
    });
    let keys: Vec<SigningKey> =
        scalars.iter().map(|s| SigningKey::from_slice(&s.to_bytes()).unwrap()).collect();
    let message = [0x5Au8; 64];
    harness::time("ecdsa_sign", 15, || {
        keys.iter().fold(0u64, |acc, k| {
            let signature: Signature = k.sign(&message);
            acc.rotate_left(5) ^ u64::from(signature.to_bytes()[0])
        })
    });
}
