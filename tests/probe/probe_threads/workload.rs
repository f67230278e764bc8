//! A stand-in for the probe's matmul, for featcheck's tests: the same per-thread measurement
//! (the probe crate's threads.rs, copied next to this file) around work done either on the
//! calling thread or by a pool of workers, without burn and without the network.
//!
//! usage: workload one|pool WORKERS
//!   one   the calling thread does every chunk; WORKERS idle workers exist (like a rayon pool
//!         that gemm never uses)
//!   pool  the calling thread hands the chunks to WORKERS workers and waits, as rayon does
//! Prints one JSON line: {"mode":…,"workers":…,"threads":<threads.rs evidence>}.

mod threads;

use std::hint::black_box;
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::thread;

const ROUNDS: usize = 4;
const CHUNKS: usize = 32;
const STEPS_PER_CHUNK: u64 = 1_500_000;

fn chunk(seed: u64) -> u64 {
    let mut x = seed;
    for step in 0..STEPS_PER_CHUNK {
        x = black_box(x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(step));
    }
    x
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let mode = args.get(1).map(String::as_str).unwrap_or("one");
    let workers: usize = args.get(2).and_then(|w| w.parse().ok()).unwrap_or(2);
    let (job_tx, job_rx) = mpsc::channel::<u64>();
    let (done_tx, done_rx) = mpsc::channel::<u64>();
    let jobs = Arc::new(Mutex::new(job_rx));
    let pool: Vec<_> = (0..workers)
        .map(|_| {
            let (jobs, done) = (Arc::clone(&jobs), done_tx.clone());
            thread::spawn(move || loop {
                let job = jobs.lock().expect("job queue").recv();
                match job {
                    Ok(seed) => done.send(chunk(seed)).expect("result"),
                    Err(_) => break,
                }
            })
        })
        .collect();
    let before = threads::snapshot();
    let mut total = 0u64;
    for round in 0..ROUNDS {
        for index in 0..CHUNKS {
            let seed = (round * CHUNKS + index) as u64;
            if mode == "pool" {
                job_tx.send(seed).expect("queue");
            } else {
                total ^= chunk(seed);
            }
        }
        if mode == "pool" {
            for _ in 0..CHUNKS {
                total ^= done_rx.recv().expect("result");
            }
        }
    }
    let after = threads::snapshot();
    let evidence = threads::between(before.as_ref(), after.as_ref());
    drop(job_tx);
    for worker in pool {
        worker.join().expect("worker");
    }
    black_box(total);
    println!(
        "{{\"mode\":\"{mode}\",\"workers\":{workers},\"threads\":{}}}",
        threads::json(evidence.as_ref())
    );
}
