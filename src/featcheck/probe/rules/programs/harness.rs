//! featcheck's rule probes share this timing loop (as benchmarks/rulepack does): warm up, time
//! `runs` calls, print the median.
//!
//! Times are the calling thread's CPU time, not wall time: on a shared machine with more runnable
//! processes than cores, a workload that outlasts the scheduler's time slice is preempted and its
//! wall time grows with the load while a shorter one escapes, which would bias the ratio. Every
//! workload here runs on the calling thread alone.

use std::hint::black_box;

/// Which CPU-time clock `cpu_ms` reads.
pub enum Clock {
    /// The calling thread's (every rule probe's workload runs on it alone).
    Thread,
    /// The whole process's, every thread (the matmul's, whose threads are the question).
    Process,
}

/// CPU time in milliseconds, by clock_gettime (declared here so that a probe depends on
/// nothing but the crates it times); None where the platform has no such clock.
#[cfg(any(target_os = "linux", target_os = "macos"))]
pub fn cpu_ms(clock: Clock) -> Option<f64> {
    #[repr(C)]
    struct Timespec {
        tv_sec: i64,
        tv_nsec: i64,
    }
    extern "C" {
        fn clock_gettime(clock: i32, now: *mut Timespec) -> i32;
    }
    let id = match (clock, cfg!(target_os = "linux")) {
        (Clock::Thread, true) => 3,   // CLOCK_THREAD_CPUTIME_ID
        (Clock::Process, true) => 2,  // CLOCK_PROCESS_CPUTIME_ID
        (Clock::Thread, false) => 16, // macOS's values
        (Clock::Process, false) => 12,
    };
    let mut now = Timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: `now` is a valid timespec to write to; the clock id is one the OS knows.
    let status = unsafe { clock_gettime(id, &mut now) };
    (status == 0).then(|| now.tv_sec as f64 * 1e3 + now.tv_nsec as f64 / 1e6)
}

#[cfg(not(any(target_os = "linux", target_os = "macos")))]
pub fn cpu_ms(_clock: Clock) -> Option<f64> {
    None
}

fn thread_cpu_ms() -> f64 {
    cpu_ms(Clock::Thread).expect("clock_gettime(CLOCK_THREAD_CPUTIME_ID) failed")
}

/// Times `work` `runs` times after two warm-up calls and prints `name<TAB>median ms<TAB>result`.
/// The result is printed so that the builds can be checked to compute the same thing.
pub fn time<R: std::fmt::Debug>(name: &str, runs: usize, mut work: impl FnMut() -> R) {
    let mut result = work();
    black_box(work());
    let mut samples: Vec<f64> = (0..runs)
        .map(|_| {
            let start = thread_cpu_ms();
            result = black_box(work());
            thread_cpu_ms() - start
        })
        .collect();
    samples.sort_by(f64::total_cmp);
    println!("{name}\t{:.4}\t{result:?}", samples[samples.len() / 2]);
}

/// Like `time`, for work that leaves its result in `state`: `check` reads it once, untimed.
pub fn time_then<S, R: std::fmt::Debug>(
    name: &str,
    runs: usize,
    state: &mut S,
    mut work: impl FnMut(&mut S),
    check: impl FnOnce(&S) -> R,
) {
    work(state);
    work(state);
    let mut samples: Vec<f64> = (0..runs)
        .map(|_| {
            let start = thread_cpu_ms();
            work(black_box(&mut *state));
            thread_cpu_ms() - start
        })
        .collect();
    samples.sort_by(f64::total_cmp);
    println!("{name}\t{:.4}\t{:?}", samples[samples.len() / 2], check(state));
}

/// Deterministic text: words from a small vocabulary, a pseudo-random stream (xorshift).
pub fn text(bytes: usize, seed: u64) -> String {
    const WORDS: &[&str] = &[
        "the", "of", "and", "to", "in", "a", "is", "that", "for", "it", "as", "was", "with", "be",
        "by", "on", "not", "he", "this", "are", "or", "his", "from", "at", "which", "but", "have",
        "an", "had", "they", "you", "were", "their", "one", "all", "we", "can", "her", "has",
        "there", "been", "if", "more", "when", "will", "would", "who", "so", "no", "running",
        "walking", "error", "warning", "request", "response", "timeout", "server", "client",
    ];
    let mut state = seed | 1;
    let mut out = String::with_capacity(bytes + 16);
    while out.len() < bytes {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        out.push_str(WORDS[(state % WORDS.len() as u64) as usize]);
        out.push(if state % 13 == 0 { '\n' } else { ' ' });
    }
    out
}

/// Like `time`, by wall time: for workloads a feature spreads over threads (`rayon`,
/// `threading`), whose calling thread's CPU time would hide the other threads' work.
pub fn time_wall<R: std::fmt::Debug>(name: &str, runs: usize, mut work: impl FnMut() -> R) {
    let mut result = work();
    black_box(work());
    let mut samples: Vec<f64> = (0..runs)
        .map(|_| {
            let start = std::time::Instant::now();
            result = black_box(work());
            start.elapsed().as_secs_f64() * 1e3
        })
        .collect();
    samples.sort_by(f64::total_cmp);
    println!("{name}\t{:.4}\t{result:?}", samples[samples.len() / 2]);
}
