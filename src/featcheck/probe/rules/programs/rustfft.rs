//! rustfft: 256 forward FFTs of size 4096 (f32 and f64) and of size 1000 (f32), planned once.
use rustfft::num_complex::Complex;
use rustfft::num_traits::ToPrimitive;
use rustfft::FftPlanner;

fn run<T: rustfft::FftNum + From<f32> + ToPrimitive>(name: &str, len: usize) {
    let fft = FftPlanner::<T>::new().plan_fft_forward(len);
    let signal: Vec<Complex<T>> = (0..len * 256)
        .map(|i| Complex::new(T::from((i % 17) as f32 / 17.0), T::from((i % 5) as f32)))
        .collect();
    let mut buffer = signal.clone();
    let work = |buffer: &mut Vec<Complex<T>>| {
        buffer.copy_from_slice(&signal);
        fft.process(buffer);
    };
    // Different algorithms round differently: the builds are compared on the spectrum's
    // energy (Parseval) to three significant digits, computed outside the timing.
    harness::time_then(name, 25, &mut buffer, work, |buffer| {
        let energy: f64 = buffer.iter().map(|x| x.norm_sqr().to_f64().unwrap()).sum();
        format!("{energy:.3e}")
    });
}

fn main() {
    run::<f32>("fft4096-f32", 4096);
    run::<f64>("fft4096-f64", 4096);
    run::<f32>("fft1000-f32", 1000);
}
