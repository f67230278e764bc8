//! matrixmultiply's sgemm and dgemm on 512 x 512 matrices, by wall time (`threading` spreads
//! each product over the cores).
fn main() {
    let n = 512;
    let a: Vec<f32> = (0..n * n).map(|i| ((i * 7) % 13) as f32 / 13.0).collect();
    let b: Vec<f32> = (0..n * n).map(|i| ((i * 5) % 11) as f32 / 11.0).collect();
    let mut c = vec![0.0f32; n * n];
    let stride = n as isize;
    harness::time_wall("sgemm", 9, || {
        // SAFETY: a, b and c hold n * n elements, laid out row-major with the strides given.
        unsafe {
            matrixmultiply::sgemm(
                n, n, n, 1.0, a.as_ptr(), stride, 1, b.as_ptr(), stride, 1, 0.0,
                c.as_mut_ptr(), stride, 1,
            );
        }
        (c[0].round() as i64, c[n * n - 1].round() as i64)
    });
    let a64: Vec<f64> = a.iter().map(|&x| f64::from(x)).collect();
    let b64: Vec<f64> = b.iter().map(|&x| f64::from(x)).collect();
    let mut c64 = vec![0.0f64; n * n];
    harness::time_wall("dgemm", 9, || {
        // SAFETY: as above.
        unsafe {
            matrixmultiply::dgemm(
                n, n, n, 1.0, a64.as_ptr(), stride, 1, b64.as_ptr(), stride, 1, 0.0,
                c64.as_mut_ptr(), stride, 1,
            );
        }
        (c64[0].round() as i64, c64[n * n - 1].round() as i64)
    });
}
