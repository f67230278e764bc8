//! burn's CPU backend (Flex) multiplying two n x n f32 matrices: how long it takes and which
//! threads of the process do the work (`featcheck probe`'s verdict rests on the latter).
//!
//! Built against burn-flex and burn-backend only (the traits Flex implements, which burn's
//! `Tensor::matmul` calls), pinned to the member's versions and exact features, with the gemm
//! crates below them: nothing of burn's facade, autodiff or nn is compiled.
//!
//! Protocol (the published measurement's): warm-up runs, then `runs` timed runs, minimum and
//! median. Around the timed loop: the process CPU time (every thread) next to the wall clock
//! (cpu / wall is the parallelism) and the CPU time of every thread (threads.rs), the
//! structural evidence that holds under any load. burn-flex hands gemm `Parallelism::Rayon`
//! only with its `rayon` feature and only from m*n*k >= 192^3; featcheck calls a smaller n
//! inconclusive. `RAYON_NUM_THREADS` sizes the pool as usual.
//!
//! Output: one JSON line on stdout (hand-written: no serde). Exit codes: 0 ok, 1 a wrong
//! product, 2 bad usage.

use std::hint::black_box;
use std::process::ExitCode;
use std::time::Instant;

use burn_backend::ops::FloatTensorOps;
use burn_backend::{read_sync, TensorData};
use burn_flex::{Flex, FlexDevice};

const DEFAULT_N: usize = 1024;
const DEFAULT_WARMUP: usize = 3;
const DEFAULT_RUNS: usize = 20;
/// Fixed so that repeated runs (and the builds compared) multiply the same data.
const SEED: u64 = 42;

struct Options {
    n: usize,
    warmup: usize,
    runs: usize,
}

/// Timings of the timed loop.
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
fn process_cpu_ms() -> Option<f64> {
    harness::cpu_ms(harness::Clock::Process)
}

/// Runs `run` `warmup` times untimed, then `runs` times timed.
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

/// n * n values in [0, 1), a pseudo-random stream (xorshift) from `seed`.
fn matrix(n: usize, seed: u64) -> Vec<f32> {
    let mut state = seed | 1;
    (0..n * n)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 40) as f32 / (1u64 << 24) as f32
        })
        .collect()
}

/// Recomputes one output element on the host, so that a backend that skipped (or botched)
/// the work would be noticed instead of reported as fast.
fn check(a: &[f32], b: &[f32], out: &[f32], n: usize) -> Result<(), String> {
    let (row, col) = (n / 2, n / 3);
    let expected: f64 = (0..n)
        .map(|k| f64::from(a[row * n + k]) * f64::from(b[k * n + col]))
        .sum();
    let got = f64::from(out[row * n + col]);
    if (got - expected).abs() <= 1e-4 * expected.abs().max(1.0) {
        Ok(())
    } else {
        Err(format!("matmul check failed at [{row}, {col}]: got {got}, expected {expected}"))
    }
}

fn bench_matmul(options: &Options) -> Result<Stats, String> {
    let n = options.n;
    let device = FlexDevice;
    let (a, b) = (matrix(n, SEED), matrix(n, SEED + 1));
    let lhs = Flex::float_from_data(TensorData::new(a.clone(), [n, n]), &device);
    let rhs = Flex::float_from_data(TensorData::new(b.clone(), [n, n]), &device);
    // Cloning a tensor only bumps a reference count; the product is dropped inside the timed
    // region, as a real caller would pay for it. Flex is eager: the product is computed when
    // float_matmul returns.
    let stats = measure(options, || {
        black_box(Flex::float_matmul(lhs.clone(), rhs.clone()));
    });
    let product = read_sync(Flex::float_into_data(Flex::float_matmul(lhs, rhs)))
        .map_err(|e| format!("reading the product: {e:?}"))?;
    let values = product.as_slice::<f32>().map_err(|e| format!("the product: {e:?}"))?;
    check(&a, &b, values, n)?;
    Ok(stats)
}

fn parse_count(value: &str, flag: &str, minimum: usize) -> Result<usize, String> {
    match value.parse::<usize>() {
        Ok(v) if v >= minimum => Ok(v),
        _ => Err(format!("{flag}: expected an integer >= {minimum}, got {value:?}")),
    }
}

/// `Ok(None)`: help was printed.
fn parse_options() -> Result<Option<Options>, String> {
    let mut options = Options { n: DEFAULT_N, warmup: DEFAULT_WARMUP, runs: DEFAULT_RUNS };
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let (flag, inline) = match arg.split_once('=') {
            Some((flag, value)) => (flag.to_owned(), Some(value.to_owned())),
            None => (arg.clone(), None),
        };
        let mut value =
            |flag: &str| inline.clone().or_else(|| args.next()).ok_or(format!("{flag} needs a value"));
        match flag.as_str() {
            "--n" => options.n = parse_count(&value("--n")?, "--n", 1)?,
            "--runs" => options.runs = parse_count(&value("--runs")?, "--runs", 1)?,
            "--warmup" => options.warmup = parse_count(&value("--warmup")?, "--warmup", 0)?,
            "-h" | "--help" => {
                println!(
                    "usage: featcheck-probe [--n N] [--runs R] [--warmup W]\n\
                     Times an N x N f32 matmul on burn's Flex backend (default N {DEFAULT_N}, \
                     {DEFAULT_WARMUP} warm-up and {DEFAULT_RUNS} timed runs) and prints one \
                     JSON line."
                );
                return Ok(None);
            }
            other => return Err(format!("unknown argument {other:?} (try --help)")),
        }
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
    let rayon = std::env::var("RAYON_NUM_THREADS")
        .ok()
        .and_then(|v| v.parse::<usize>().ok())
        .map_or_else(|| "null".to_owned(), |t| t.to_string());
    let available = std::thread::available_parallelism().map_or(0, |n| n.get());
    println!(
        "{{\"probe\":1,\"n\":{},\"warmup\":{},\"runs\":{},\"rayon_num_threads\":{rayon},\
         \"available_parallelism\":{available},\"matmul\":{},\"mlp\":null}}",
        options.n,
        options.warmup,
        options.runs,
        matmul.json()
    );
    ExitCode::SUCCESS
}
