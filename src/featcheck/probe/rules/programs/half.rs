//! half converting 1 Mi f32 values to f16 and back, sixteen times each way.
use half::slice::HalfFloatSliceExt;

fn main() {
    let values: Vec<f32> = (0..1 << 20).map(|i| (i as f32 * 0.37).sin() * 1000.0).collect();
    let mut halves = vec![half::f16::ZERO; values.len()];
    let mut back = vec![0.0_f32; values.len()];
    harness::time("to_f16", 15, || {
        for _ in 0..16 {
            halves.convert_from_f32_slice(&values);
        }
        halves[12345].to_bits()
    });
    harness::time("to_f32", 15, || {
        for _ in 0..16 {
            halves.convert_to_f32_slice(&mut back);
        }
        back[12345].to_bits()
    });
}
