//! burn's NdArray backend multiplying two 512 x 512 f32 matrices, by wall time
//! (`multi-threads` turns on matrixmultiply's and ndarray's threads). The backend is driven
//! through burn-backend's tensor operations, the crate burn-ndarray implements them for (and
//! burn-tensor's `Tensor::matmul` calls), pinned like burn-ndarray to the member's build.

// burn-ndarray 0.22 deprecates itself for burn-flex (FC024): the probe times it all the same.
#![allow(deprecated)]
use burn_backend::ops::FloatTensorOps;
use burn_backend::{read_sync, TensorData};

/// The backend with its default element types (a generic struct before burn 0.22).
type B = burn_ndarray::NdArray;

fn main() {
    let n = 512;
    let device = burn_ndarray::NdArrayDevice::Cpu;
    let a: Vec<f32> = (0..n * n).map(|i| ((i * 7) % 13) as f32 / 13.0).collect();
    let b: Vec<f32> = (0..n * n).map(|i| ((i * 5) % 11) as f32 / 11.0).collect();
    let lhs = B::float_from_data(TensorData::new(a, [n, n]), &device);
    let rhs = B::float_from_data(TensorData::new(b, [n, n]), &device);
    harness::time_wall("matmul", 9, || {
        let product = B::float_matmul(lhs.clone(), rhs.clone());
        let data = read_sync(B::float_into_data(product)).expect("the product's data");
        let values = data.as_slice::<f32>().expect("f32 elements");
        (values[0].round() as i64, values[n * n - 1].round() as i64)
    });
}
