//! Which threads of this process did the work: CPU time per thread across a timed region.
//!
//! This is the probe's structural evidence. Whether gemm splits a matmul across threads is a
//! property of the build, and it shows in where the CPU time goes, whatever else the machine
//! runs: a build without a parallel gemm does all of it on the calling thread; a build that
//! hands the matmul to rayon's pool does it on the pool's workers, several of them. Wall-clock
//! speedups, by contrast, need idle cores to show.
//!
//! Methods (`METHOD` names them in the probe's JSON; featcheck's README documents them):
//!
//! - `linux-schedstat-1`: `/proc/self/task/<tid>/schedstat`, whose first field is the thread's
//!   time on a CPU in nanoseconds (the scheduler's own account; exact).
//! - `linux-stat-1`: `/proc/self/task/<tid>/stat`, utime + stime in clock ticks, where a
//!   kernel lacks schedstat. Linux reports these in USER_HZ, which its ABI fixes at 100 on
//!   every architecture Rust targets; the resolution (10 ms) is coarse but the timed loops last
//!   hundreds of milliseconds.
//! - other platforms: not measured (`snapshot` returns None, the JSON says `null`).
//!
//! std only, so that featcheck's tests can compile this file alone with rustc, offline.

use std::collections::BTreeMap;

/// CPU time per thread id at one instant.
pub struct Snapshot {
    method: &'static str,
    main: u64,
    cpu_ns: BTreeMap<u64, u64>,
}

/// CPU time each thread spent between two snapshots.
pub struct Evidence {
    method: &'static str,
    /// The thread that called the workload (the process's main thread).
    main_ms: f64,
    /// Every other thread that ran in the region, busiest first.
    others_ms: Vec<f64>,
    /// Threads the process had at the end of the region, including idle ones.
    alive: usize,
}

/// Linux's USER_HZ: the unit of utime/stime in /proc/<pid>/stat.
#[cfg(target_os = "linux")]
const USER_HZ: u64 = 100;

#[cfg(target_os = "linux")]
fn schedstat_ns(tid: u64) -> Option<u64> {
    let text = std::fs::read_to_string(format!("/proc/self/task/{tid}/schedstat")).ok()?;
    text.split_whitespace().next()?.parse().ok()
}

#[cfg(target_os = "linux")]
fn stat_ns(tid: u64) -> Option<u64> {
    let text = std::fs::read_to_string(format!("/proc/self/task/{tid}/stat")).ok()?;
    // "pid (comm) state ppid ..."; comm may hold spaces and parentheses, so split after the
    // last ')'. utime and stime are fields 14 and 15 overall, 12th and 13th after it.
    let rest = &text[text.rfind(')')? + 1..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let utime: u64 = fields.get(11)?.parse().ok()?;
    let stime: u64 = fields.get(12)?.parse().ok()?;
    Some((utime + stime) * (1_000_000_000 / USER_HZ))
}

/// The CPU time of every thread of this process now; None where the platform gives none.
#[cfg(target_os = "linux")]
pub fn snapshot() -> Option<Snapshot> {
    let main = u64::from(std::process::id());
    let (method, read): (&'static str, fn(u64) -> Option<u64>) = if schedstat_ns(main).is_some() {
        ("linux-schedstat-1", schedstat_ns)
    } else if stat_ns(main).is_some() {
        ("linux-stat-1", stat_ns)
    } else {
        return None;
    };
    let mut cpu_ns = BTreeMap::new();
    for entry in std::fs::read_dir("/proc/self/task").ok()? {
        let Some(tid) = entry.ok().and_then(|e| e.file_name().to_str()?.parse::<u64>().ok())
        else {
            continue;
        };
        // A thread may end between listing and reading: it simply is not counted.
        if let Some(ns) = read(tid) {
            cpu_ns.insert(tid, ns);
        }
    }
    Some(Snapshot {
        method,
        main,
        cpu_ns,
    })
}

#[cfg(not(target_os = "linux"))]
pub fn snapshot() -> Option<Snapshot> {
    None
}

/// What each thread did between `before` and `after`; None if either is missing.
pub fn between(before: Option<&Snapshot>, after: Option<&Snapshot>) -> Option<Evidence> {
    let (before, after) = (before?, after?);
    if before.method != after.method {
        return None;
    }
    let spent = |tid: &u64, end: &u64| {
        // A thread born inside the region started at zero.
        let start = before.cpu_ns.get(tid).copied().unwrap_or(0);
        end.saturating_sub(start) as f64 / 1e6
    };
    let mut main_ms = 0.0;
    let mut others_ms = Vec::new();
    for (tid, end) in &after.cpu_ns {
        let ms = spent(tid, end);
        if *tid == after.main {
            main_ms = ms;
        } else if ms > 0.0 {
            others_ms.push(ms);
        }
    }
    others_ms.sort_by(|a, b| b.total_cmp(a));
    Some(Evidence {
        method: after.method,
        main_ms,
        others_ms,
        alive: after.cpu_ns.len(),
    })
}

impl Evidence {
    /// `{"method":…,"main_ms":…,"others_ms":[…],"alive":…}`.
    pub fn json(&self) -> String {
        let others: Vec<String> = self.others_ms.iter().map(|ms| format!("{ms:.3}")).collect();
        format!(
            "{{\"method\":\"{}\",\"main_ms\":{:.3},\"others_ms\":[{}],\"alive\":{}}}",
            self.method,
            self.main_ms,
            others.join(","),
            self.alive
        )
    }
}

/// `null` when not measured.
pub fn json(evidence: Option<&Evidence>) -> String {
    evidence.map_or_else(|| "null".to_owned(), Evidence::json)
}
