//! CPU micro-benchmark for burn's Flex backend.
//!
//! The same file is the `main.rs` of every `pitb-exec-cpu*` crate; only the
//! burn feature set in each crate's `Cargo.toml` differs, so any difference in
//! the numbers comes from the features, not from the code.
//!
//! Two workloads, each timed with the same protocol (warm-up, then two rounds
//! of 20 timed runs, min and median per round):
//! 1. an `n x n` f32 matmul on `Device::flex()` (n = 1024 by default);
//! 2. one training step of a 784-512-10 MLP (batch 256, cross-entropy, SGD)
//!    on `Device::flex().autodiff()`.
//!
//! Usage: `pitb-exec-cpu [--n N] [--json]`; `PITB_N` sets the default `n`.

use std::hint::black_box;
use std::process::ExitCode;
use std::time::Instant;

use burn::nn::loss::{CrossEntropyLoss, CrossEntropyLossConfig};
use burn::nn::{Linear, LinearConfig, Relu};
use burn::optim::{GradientsParams, ModuleOptimizer, SgdConfig};
use burn::prelude::*;
use burn::tensor::Distribution;

const DEFAULT_N: usize = 1024;
const WARMUP_RUNS: usize = 3;
const TIMED_RUNS: usize = 20;
const ROUNDS: usize = 2;

const MLP_INPUT: usize = 784;
const MLP_HIDDEN: usize = 512;
const MLP_CLASSES: usize = 10;
const MLP_BATCH: usize = 256;
const LEARNING_RATE: f64 = 0.01;

/// Fixed so that repeated runs (and the different crates) time the same data.
const SEED: u64 = 42;

struct Options {
    n: usize,
    json: bool,
}

/// Min and median of one round, in milliseconds.
#[derive(Clone, Copy)]
struct RoundStats {
    min_ms: f64,
    median_ms: f64,
}

impl RoundStats {
    fn from_samples(mut samples_ms: Vec<f64>) -> Self {
        samples_ms.sort_by(f64::total_cmp);
        let len = samples_ms.len();
        // With an even count (20) the median is the mean of the two middle runs.
        let median_ms = if len % 2 == 0 {
            (samples_ms[len / 2 - 1] + samples_ms[len / 2]) / 2.0
        } else {
            samples_ms[len / 2]
        };
        Self {
            min_ms: samples_ms[0],
            median_ms,
        }
    }
}

/// Best over rounds: the lowest min and the lowest median. Later rounds are
/// usually the warmer ones, but we do not assume which round wins.
fn best(rounds: &[RoundStats]) -> RoundStats {
    RoundStats {
        min_ms: rounds
            .iter()
            .map(|r| r.min_ms)
            .fold(f64::INFINITY, f64::min),
        median_ms: rounds
            .iter()
            .map(|r| r.median_ms)
            .fold(f64::INFINITY, f64::min),
    }
}

/// Runs `run` `WARMUP_RUNS` times untimed, then `ROUNDS` rounds of
/// `TIMED_RUNS` timed runs. `run` must only return once its work is finished
/// (see `finish`), otherwise the clock would stop too early.
fn measure(mut run: impl FnMut()) -> Vec<RoundStats> {
    for _ in 0..WARMUP_RUNS {
        run();
    }
    (0..ROUNDS)
        .map(|_| {
            let samples_ms = (0..TIMED_RUNS)
                .map(|_| {
                    let start = Instant::now();
                    run();
                    start.elapsed().as_secs_f64() * 1e3
                })
                .collect();
            RoundStats::from_samples(samples_ms)
        })
        .collect()
}

/// Waits until `device` has finished all queued work.
///
/// Flex executes every operation eagerly on the calling thread (and joins its
/// rayon workers before returning), so for Flex this is a no-op; calling it
/// anyway keeps the timing honest should the backend ever become asynchronous.
fn finish(device: &Device) {
    device.sync().expect("device sync failed");
}

#[derive(Module, Debug)]
struct Mlp {
    hidden: Linear,
    activation: Relu,
    output: Linear,
}

impl Mlp {
    fn new(device: &Device) -> Self {
        Self {
            hidden: LinearConfig::new(MLP_INPUT, MLP_HIDDEN).init(device),
            activation: Relu::new(),
            output: LinearConfig::new(MLP_HIDDEN, MLP_CLASSES).init(device),
        }
    }

    fn forward(&self, input: Tensor<2>) -> Tensor<2> {
        self.output
            .forward(self.activation.forward(self.hidden.forward(input)))
    }
}

/// Everything one training step needs; the model is replaced by every step.
struct Trainer {
    /// `Option` only so that `step` can move the model into the optimizer.
    model: Option<Mlp>,
    optimizer: ModuleOptimizer,
    loss: CrossEntropyLoss,
    inputs: Tensor<2>,
    targets: Tensor<1, Int>,
}

impl Trainer {
    fn new(device: &Device) -> Self {
        let inputs = Tensor::<2>::random([MLP_BATCH, MLP_INPUT], Distribution::Default, device);
        // Deterministic labels covering every class keep the loss well defined.
        let labels: Vec<i64> = (0..MLP_BATCH as i64)
            .map(|i| i % MLP_CLASSES as i64)
            .collect();
        let targets = Tensor::<1, Int>::from_data(TensorData::new(labels, [MLP_BATCH]), device);
        Self {
            model: Some(Mlp::new(device)),
            optimizer: SgdConfig::new().init(),
            loss: CrossEntropyLossConfig::new().init(device),
            inputs,
            targets,
        }
    }

    /// Forward, loss, backward and SGD update; returns the (pre-update) loss.
    fn step(&mut self) -> Tensor<1> {
        let model = self.model.take().expect("model is always put back");
        let logits = model.forward(self.inputs.clone());
        let loss = self.loss.forward(logits, self.targets.clone());
        let grads = GradientsParams::from_grads(loss.backward(), &model);
        self.model = Some(self.optimizer.step(LEARNING_RATE, model, grads));
        loss
    }
}

/// Recomputes one output element on the host, so that a backend that skipped
/// (or botched) the work would be noticed instead of reported as fast.
fn check_matmul(a: &Tensor<2>, b: &Tensor<2>, out: &Tensor<2>, n: usize) {
    let a = a.to_data().try_to_vec::<f32>().expect("f32 data");
    let b = b.to_data().try_to_vec::<f32>().expect("f32 data");
    let out = out.to_data().try_to_vec::<f32>().expect("f32 data");
    let (row, col) = (n / 2, n / 3);
    let expected: f64 = (0..n)
        .map(|k| f64::from(a[row * n + k]) * f64::from(b[k * n + col]))
        .sum();
    let got = f64::from(out[row * n + col]);
    let tolerance = 1e-4 * expected.abs().max(1.0);
    assert!(
        (got - expected).abs() <= tolerance,
        "matmul check failed at [{row}, {col}]: got {got}, expected {expected}"
    );
}

fn bench_matmul(n: usize) -> Vec<RoundStats> {
    let device = Device::flex();
    device.seed(SEED);
    let a = Tensor::<2>::random([n, n], Distribution::Default, &device);
    let b = Tensor::<2>::random([n, n], Distribution::Default, &device);

    // Cloning a tensor only bumps a reference count; the product is dropped
    // inside the timed region, just as a real caller would pay for it.
    let rounds = measure(|| {
        black_box(a.clone().matmul(b.clone()));
        finish(&device);
    });

    check_matmul(&a, &b, &a.clone().matmul(b.clone()), n);
    rounds
}

/// Returns the per-round stats and the loss before and after all steps.
fn bench_mlp() -> (Vec<RoundStats>, f32, f32) {
    let device = Device::flex().autodiff();
    device.seed(SEED);
    let mut trainer = Trainer::new(&device);

    let first_loss: f32 = trainer.step().into_scalar();
    let rounds = measure(|| {
        black_box(trainer.step());
        finish(&device);
    });
    let last_loss: f32 = trainer.step().into_scalar();
    (rounds, first_loss, last_loss)
}

fn parse_n(value: &str, source: &str) -> Result<usize, String> {
    match value.parse::<usize>() {
        Ok(n) if n > 0 => Ok(n),
        _ => Err(format!(
            "{source}: expected a positive integer, got {value:?}"
        )),
    }
}

/// `Ok(None)` means the user asked for help, which has already been printed.
fn parse_options() -> Result<Option<Options>, String> {
    let mut options = Options {
        n: match std::env::var("PITB_N") {
            Ok(value) => parse_n(&value, "PITB_N")?,
            Err(_) => DEFAULT_N,
        },
        json: false,
    };
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--json" => options.json = true,
            "--n" => {
                let value = args.next().ok_or("--n needs a value")?;
                options.n = parse_n(&value, "--n")?;
            }
            "-h" | "--help" => {
                println!(
                    "usage: {} [--n N] [--json]  (PITB_N sets the default n, {DEFAULT_N})",
                    env!("CARGO_PKG_NAME")
                );
                return Ok(None);
            }
            other => match other.strip_prefix("--n=") {
                Some(value) => options.n = parse_n(value, "--n")?,
                None => return Err(format!("unknown argument {other:?} (try --help)")),
            },
        }
    }
    Ok(Some(options))
}

/// The rayon pool size the user asked for, if any; rayon itself defaults to
/// one thread per core when the variable is unset or not a number.
fn rayon_threads() -> Option<usize> {
    std::env::var("RAYON_NUM_THREADS").ok()?.parse().ok()
}

fn print_table(options: &Options, matmul: &[RoundStats], mlp: &[RoundStats], losses: (f32, f32)) {
    let threads = rayon_threads().map_or_else(|| "unset".to_owned(), |t| t.to_string());
    println!(
        "{} (burn Flex CPU), RAYON_NUM_THREADS={threads}",
        env!("CARGO_PKG_NAME")
    );
    println!("{WARMUP_RUNS} warm-up runs, then {ROUNDS} rounds of {TIMED_RUNS} timed runs");
    println!();
    println!(
        "{:<28} {:>5} {:>10} {:>10}",
        "workload", "round", "min ms", "median ms"
    );
    let n = options.n;
    let workloads = [
        (format!("matmul {n}x{n} f32"), matmul),
        (
            format!("mlp {MLP_INPUT}-{MLP_HIDDEN}-{MLP_CLASSES} b{MLP_BATCH} step"),
            mlp,
        ),
    ];
    for (name, rounds) in &workloads {
        for (i, round) in rounds.iter().enumerate() {
            println!(
                "{name:<28} {:>5} {:>10.3} {:>10.3}",
                i + 1,
                round.min_ms,
                round.median_ms
            );
        }
        let overall = best(rounds);
        println!(
            "{name:<28} {:>5} {:>10.3} {:>10.3}",
            "best", overall.min_ms, overall.median_ms
        );
    }
    println!();
    println!(
        "mlp loss: {:.4} before, {:.4} after training",
        losses.0, losses.1
    );
}

fn print_json(options: &Options, matmul: &[RoundStats], mlp: &[RoundStats]) {
    // Hand-written to avoid a serde dependency; every value is a number or null.
    let threads = rayon_threads().map_or_else(|| "null".to_owned(), |t| t.to_string());
    let (matmul, mlp) = (best(matmul), best(mlp));
    println!(
        "{{\"n\":{},\"threads\":{threads},\"matmul_min_ms\":{:.4},\"matmul_median_ms\":{:.4},\
         \"mlp_min_ms\":{:.4},\"mlp_median_ms\":{:.4}}}",
        options.n, matmul.min_ms, matmul.median_ms, mlp.min_ms, mlp.median_ms
    );
}

fn main() -> ExitCode {
    let options = match parse_options() {
        Ok(Some(options)) => options,
        Ok(None) => return ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("{message}");
            return ExitCode::from(2);
        }
    };

    let matmul = bench_matmul(options.n);
    let (mlp, first_loss, last_loss) = bench_mlp();

    if options.json {
        print_json(&options, &matmul, &mlp);
    } else {
        print_table(&options, &matmul, &mlp, (first_loss, last_loss));
    }
    ExitCode::SUCCESS
}
