//! faer's dense f64 matrix product on 512 x 512 matrices, by wall time (`rayon` spreads it
//! over the cores).
fn main() {
    let n = 512;
    let a = faer::Mat::<f64>::from_fn(n, n, |i, j| ((i * 7 + j * 3) % 13) as f64 / 13.0);
    let b = faer::Mat::<f64>::from_fn(n, n, |i, j| ((i * 5 + j) % 11) as f64 / 11.0);
    harness::time_wall("matmul", 9, || {
        let c = &a * &b;
        (c[(0, 0)].round() as i64, c[(n - 1, n - 1)].round() as i64)
    });
}
