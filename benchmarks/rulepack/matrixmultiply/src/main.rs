//! matrixmultiply: one 256x256 by 256x256 product in f32 (sgemm) and in f64 (dgemm).
const N: usize = 256;

fn inputs() -> (Vec<f64>, Vec<f64>) {
    let a = (0..N * N)
        .map(|i| ((i * 7 + 3) % 17) as f64 / 8.0 - 1.0)
        .collect();
    let b = (0..N * N)
        .map(|i| ((i * 5 + 1) % 13) as f64 / 4.0 - 1.0)
        .collect();
    (a, b)
}

fn main() {
    let (a, b) = inputs();
    let (a32, b32): (Vec<f32>, Vec<f32>) = (
        a.iter().map(|&x| x as f32).collect(),
        b.iter().map(|&x| x as f32).collect(),
    );
    let mut c32 = vec![0f32; N * N];
    let mut c64 = vec![0f64; N * N];
    let n = N as isize;
    // SAFETY: a, b and c are N*N row-major matrices, the strides match, c does not alias a or b.
    let sgemm = |c: &mut Vec<f32>| unsafe {
        matrixmultiply::sgemm(
            N,
            N,
            N,
            1.0,
            a32.as_ptr(),
            n,
            1,
            b32.as_ptr(),
            n,
            1,
            0.0,
            c.as_mut_ptr(),
            n,
            1,
        )
    };
    // The inputs are small integers over powers of two: the sums are exact in either kernel.
    harness::time_then("sgemm256", 15, &mut c32, sgemm, |c| {
        c.iter().map(|&x| x as f64).sum::<f64>()
    });
    // SAFETY: as above.
    let dgemm = |c: &mut Vec<f64>| unsafe {
        matrixmultiply::dgemm(
            N,
            N,
            N,
            1.0,
            a.as_ptr(),
            n,
            1,
            b.as_ptr(),
            n,
            1,
            0.0,
            c.as_mut_ptr(),
            n,
            1,
        )
    };
    harness::time_then("dgemm256", 15, &mut c64, dgemm, |c| c.iter().sum::<f64>());
}
