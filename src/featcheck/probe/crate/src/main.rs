//! featcheck's probe: times an `n x n` f32 matmul on burn's CPU backend (Flex) and measures
//! how many cores it kept busy.
//!
//! Protocol (the one of the published measurement): warm-up runs, then `runs` timed runs; the
//! minimum and the median are reported. Around the timed loop the process CPU time (all
//! threads, user + system) is read next to the wall clock: cpu / wall is the effective
//! parallelism, ~1.0 when gemm runs on one core, up to the number of cores when it runs on
//! rayon's pool.
//!
//! Around the same loop it records the CPU time of every thread of the process (threads.rs):
//! which threads did the work is the structural evidence, and it holds under any load.
//!
//! burn-flex hands a matmul to gemm with `Parallelism::Rayon` only when it is compiled with
//! `rayon` and only when m*n*k >= 192^3; featcheck calls a smaller `n` inconclusive.
//!
//! Output: one JSON line on stdout (hand-written: no serde). Exit codes: 0 ok, 2 bad usage.
//! `RAYON_NUM_THREADS` sets the pool size as usual; the probe only reports what it was.

use std::hint::black_box;
use std::process::ExitCode;
use std::time::Instant;

use burn::prelude::*;
use burn::tensor::Distribution;

mod threads;

const DEFAULT_N: usize = 1024;
const DEFAULT_WARMUP: usize = 3;
const DEFAULT_RUNS: usize = 20;
/// Fixed so that repeated runs (and the builds compared) time the same data.
const SEED: u64 = 42;

struct Options {
    n: usize,
    warmup: usize,
    runs: usize,
    mlp: bool,
}

/// Timings of one workload's timed loop.
struct Stats {
    min_ms: f64,
    median_ms: f64,
    wall_ms: f64,
    /// Process CPU time (all threads) over the timed loop; None where it cannot be read.
    cpu_ms: Option<f64>,
    /// CPU time per thread over the timed loop; None where threads cannot be observed.
    threads: Option<threads::Evidence>,
}

impl Stats {
    fn json(&self) -> String {
        let (cpu, parallelism) = match self.cpu_ms {
            Some(cpu) if self.wall_ms > 0.0 => {
                (format!("{cpu:.4}"), format!("{:.4}", cpu / self.wall_ms))
            }
            _ => ("null".to_owned(), "null".to_owned()),
        };
        format!(
            "{{\"min_ms\":{:.4},\"median_ms\":{:.4},\"wall_ms\":{:.4},\"cpu_ms\":{cpu},\
             \"parallelism\":{parallelism},\"threads\":{}}}",
            self.min_ms,
            self.median_ms,
            self.wall_ms,
            threads::json(self.threads.as_ref())
        )
    }
}

/// CPU time of the whole process (every thread), in milliseconds.
#[cfg(unix)]
fn process_cpu_ms() -> Option<f64> {
    let mut now = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `now` is a valid, writable timespec for the duration of the call.
    let status = unsafe { libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &mut now) };
    (status == 0).then(|| now.tv_sec as f64 * 1e3 + now.tv_nsec as f64 / 1e6)
}

#[cfg(not(unix))]
fn process_cpu_ms() -> Option<f64> {
    None
}

/// Runs `run` `warmup` times untimed, then `runs` times timed. `run` must return only once
/// its work is finished (Flex is eager; `device.sync()` keeps that honest).
fn measure(options: &Options, mut run: impl FnMut()) -> Stats {
    for _ in 0..options.warmup {
        run();
    }
    let mut samples_ms = Vec::with_capacity(options.runs);
    let threads_start = threads::snapshot();
    let cpu_start = process_cpu_ms();
    let wall_start = Instant::now();
    for _ in 0..options.runs {
        let start = Instant::now();
        run();
        samples_ms.push(start.elapsed().as_secs_f64() * 1e3);
    }
    let wall_ms = wall_start.elapsed().as_secs_f64() * 1e3;
    let cpu_ms = match (cpu_start, process_cpu_ms()) {
        (Some(start), Some(end)) => Some(end - start),
        _ => None,
    };
    let threads_end = threads::snapshot();
    samples_ms.sort_by(f64::total_cmp);
    let len = samples_ms.len();
    let median_ms = if len % 2 == 0 {
        (samples_ms[len / 2 - 1] + samples_ms[len / 2]) / 2.0
    } else {
        samples_ms[len / 2]
    };
    Stats {
        min_ms: samples_ms[0],
        median_ms,
        wall_ms,
        cpu_ms,
        threads: threads::between(threads_start.as_ref(), threads_end.as_ref()),
    }
}

/// Recomputes one output element on the host, so that a backend that skipped (or botched)
/// the work would be noticed instead of reported as fast.
fn check_matmul(a: &Tensor<2>, b: &Tensor<2>, out: &Tensor<2>, n: usize) -> Result<(), String> {
    let read = |t: &Tensor<2>| {
        t.to_data()
            .try_to_vec::<f32>()
            .map_err(|e| format!("{e:?}"))
    };
    let (a, b, out) = (read(a)?, read(b)?, read(out)?);
    let (row, col) = (n / 2, n / 3);
    let expected: f64 = (0..n)
        .map(|k| f64::from(a[row * n + k]) * f64::from(b[k * n + col]))
        .sum();
    let got = f64::from(out[row * n + col]);
    if (got - expected).abs() <= 1e-4 * expected.abs().max(1.0) {
        Ok(())
    } else {
        Err(format!(
            "matmul check failed at [{row}, {col}]: got {got}, expected {expected}"
        ))
    }
}

fn bench_matmul(options: &Options) -> Result<Stats, String> {
    let n = options.n;
    let device = Device::flex();
    device.seed(SEED);
    let a = Tensor::<2>::random([n, n], Distribution::Default, &device);
    let b = Tensor::<2>::random([n, n], Distribution::Default, &device);
    // Cloning a tensor only bumps a reference count; the product is dropped inside the
    // timed region, as a real caller would pay for it.
    let stats = measure(options, || {
        black_box(a.clone().matmul(b.clone()));
        device.sync().expect("device sync failed");
    });
    check_matmul(&a, &b, &a.clone().matmul(b.clone()), n)?;
    Ok(stats)
}

#[cfg(feature = "mlp")]
mod mlp {
    //! One training step of a 784-512-10 MLP (batch 256, cross-entropy, SGD) on
    //! `Device::flex().autodiff()`: matmuls of 256x784x512 and smaller.

    use burn::nn::loss::{CrossEntropyLoss, CrossEntropyLossConfig};
    use burn::nn::{Linear, LinearConfig, Relu};
    use burn::optim::{GradientsParams, ModuleOptimizer, SgdConfig};
    use burn::prelude::*;
    use burn::tensor::Distribution;
    use std::hint::black_box;

    use super::{measure, Options, Stats, SEED};

    const INPUT: usize = 784;
    const HIDDEN: usize = 512;
    const CLASSES: usize = 10;
    const BATCH: usize = 256;
    const LEARNING_RATE: f64 = 0.01;

    #[derive(Module, Debug)]
    struct Mlp {
        hidden: Linear,
        activation: Relu,
        output: Linear,
    }

    impl Mlp {
        fn new(device: &Device) -> Self {
            Self {
                hidden: LinearConfig::new(INPUT, HIDDEN).init(device),
                activation: Relu::new(),
                output: LinearConfig::new(HIDDEN, CLASSES).init(device),
            }
        }

        fn forward(&self, input: Tensor<2>) -> Tensor<2> {
            self.output
                .forward(self.activation.forward(self.hidden.forward(input)))
        }
    }

    pub fn bench(options: &Options) -> Stats {
        let device = Device::flex().autodiff();
        device.seed(SEED);
        let inputs = Tensor::<2>::random([BATCH, INPUT], Distribution::Default, &device);
        let labels: Vec<i64> = (0..BATCH as i64).map(|i| i % CLASSES as i64).collect();
        let targets = Tensor::<1, Int>::from_data(TensorData::new(labels, [BATCH]), &device);
        let loss_fn: CrossEntropyLoss = CrossEntropyLossConfig::new().init(&device);
        let mut optimizer: ModuleOptimizer = SgdConfig::new().init();
        let mut model = Some(Mlp::new(&device));
        measure(options, || {
            let current = model.take().expect("the model is always put back");
            let logits = current.forward(inputs.clone());
            let loss = loss_fn.forward(logits, targets.clone());
            let grads = GradientsParams::from_grads(loss.backward(), &current);
            model = Some(optimizer.step(LEARNING_RATE, current, grads));
            black_box(loss);
            device.sync().expect("device sync failed");
        })
    }
}

fn parse_count(value: &str, flag: &str, minimum: usize) -> Result<usize, String> {
    match value.parse::<usize>() {
        Ok(v) if v >= minimum => Ok(v),
        _ => Err(format!(
            "{flag}: expected an integer >= {minimum}, got {value:?}"
        )),
    }
}

/// `Ok(None)`: help was printed.
fn parse_options() -> Result<Option<Options>, String> {
    let mut options = Options {
        n: DEFAULT_N,
        warmup: DEFAULT_WARMUP,
        runs: DEFAULT_RUNS,
        mlp: false,
    };
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let (flag, inline) = match arg.split_once('=') {
            Some((flag, value)) => (flag.to_owned(), Some(value.to_owned())),
            None => (arg.clone(), None),
        };
        let mut value = |flag: &str| {
            inline
                .clone()
                .or_else(|| args.next())
                .ok_or(format!("{flag} needs a value"))
        };
        match flag.as_str() {
            "--n" => options.n = parse_count(&value("--n")?, "--n", 1)?,
            "--runs" => options.runs = parse_count(&value("--runs")?, "--runs", 1)?,
            "--warmup" => options.warmup = parse_count(&value("--warmup")?, "--warmup", 0)?,
            "--mlp" => options.mlp = true,
            "-h" | "--help" => {
                println!(
                    "usage: featcheck-probe [--n N] [--runs R] [--warmup W] [--mlp]\n\
                     Times an N x N f32 matmul on burn's Flex backend (default N {DEFAULT_N}, \
                     {DEFAULT_WARMUP} warm-up and {DEFAULT_RUNS} timed runs) and prints one \
                     JSON line."
                );
                return Ok(None);
            }
            other => return Err(format!("unknown argument {other:?} (try --help)")),
        }
    }
    if options.mlp && !cfg!(feature = "mlp") {
        return Err("--mlp: this probe was built without the `mlp` feature".to_owned());
    }
    Ok(Some(options))
}

fn main() -> ExitCode {
    let options = match parse_options() {
        Ok(Some(options)) => options,
        Ok(None) => return ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("featcheck-probe: {message}");
            return ExitCode::from(2);
        }
    };
    let matmul = match bench_matmul(&options) {
        Ok(stats) => stats,
        Err(message) => {
            eprintln!("featcheck-probe: {message}");
            return ExitCode::FAILURE;
        }
    };
    #[cfg(feature = "mlp")]
    let mlp = options.mlp.then(|| mlp::bench(&options).json());
    #[cfg(not(feature = "mlp"))]
    let mlp: Option<String> = None;
    let rayon = std::env::var("RAYON_NUM_THREADS")
        .ok()
        .and_then(|v| v.parse::<usize>().ok())
        .map_or_else(|| "null".to_owned(), |t| t.to_string());
    let available = std::thread::available_parallelism().map_or(0, |n| n.get());
    println!(
        "{{\"probe\":1,\"n\":{},\"warmup\":{},\"runs\":{},\"rayon_num_threads\":{rayon},\
         \"available_parallelism\":{available},\"matmul\":{},\"mlp\":{}}}",
        options.n,
        options.warmup,
        options.runs,
        matmul.json(),
        mlp.unwrap_or_else(|| "null".to_owned())
    );
    ExitCode::SUCCESS
}
