//! gemm's f32 and f64 products of 512 x 512 matrices, by wall time (`rayon` spreads each over
//! the cores). `Parallelism::Rayon` exists only in a build with gemm's `rayon`: the probe crate's
//! own `rayon` feature is on exactly then, and the program asks for it there, as a caller of
//! such a build would; a build without it can only ask for `Parallelism::None`.
#[cfg(feature = "rayon")]
fn parallelism() -> gemm::Parallelism {
    gemm::Parallelism::Rayon(0) // 0: rayon's thread count, one per core
}

#[cfg(not(feature = "rayon"))]
fn parallelism() -> gemm::Parallelism {
    gemm::Parallelism::None
}

/// dst = lhs * rhs for n x n column-major matrices.
fn product<T: Copy + 'static>(n: usize, dst: &mut [T], lhs: &[T], rhs: &[T], zero: T, one: T) {
    assert!(dst.len() == n * n && lhs.len() == n * n && rhs.len() == n * n);
    let stride = n as isize;
    // SAFETY: the three matrices hold n * n elements, column-major with the strides given
    // (column stride n, row stride 1); dst is not read (read_dst false) and aliases neither.
    unsafe {
        gemm::gemm(
            n, n, n, dst.as_mut_ptr(), stride, 1, false, lhs.as_ptr(), stride, 1,
            rhs.as_ptr(), stride, 1, zero, one, false, false, false, parallelism(),
        );
    }
}

fn main() {
    let n = 512;
    let a: Vec<f32> = (0..n * n).map(|i| ((i * 7) % 13) as f32 / 13.0).collect();
    let b: Vec<f32> = (0..n * n).map(|i| ((i * 5) % 11) as f32 / 11.0).collect();
    let mut c = vec![0.0f32; n * n];
    harness::time_wall("sgemm", 9, || {
        product(n, &mut c, &a, &b, 0.0, 1.0);
        (c[0].round() as i64, c[n * n - 1].round() as i64)
    });
    let a64: Vec<f64> = a.iter().map(|&x| f64::from(x)).collect();
    let b64: Vec<f64> = b.iter().map(|&x| f64::from(x)).collect();
    let mut c64 = vec![0.0f64; n * n];
    harness::time_wall("dgemm", 9, || {
        product(n, &mut c64, &a64, &b64, 0.0, 1.0);
        (c64[0].round() as i64, c64[n * n - 1].round() as i64)
    });
}
