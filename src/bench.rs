//! `reclaimsim bench`: the simulator's own speed and memory, measured on this machine.
//!
//! Each figure runs a real scenario through the public API and divides simulated work
//! by wall time; the machines are shared and noisy, so compare figures from one run.

use crate::mm::page::Frame;
use crate::scenario;
use crate::sim::{RunOptions, Simulation};
use serde::Serialize;
use std::time::Instant;

#[derive(Debug, Serialize)]
pub struct BenchReport {
    /// Accesses to resident pages per wall second: a 1 GiB anonymous working set fully
    /// resident, zipf 0.99, one thread, random-number generation included.
    pub hit_accesses_per_sec: f64,
    /// Page faults per wall second: a working set twice memory under uniform random
    /// access, so about half the accesses fault, allocate, reclaim and swap to zram.
    pub faults_per_sec: f64,
    /// Share of accesses that faulted in the faults benchmark.
    pub fault_ratio: f64,
    pub bytes_per_frame: usize,
    /// Peak RSS of the simulator with a 64 GiB machine's memory fully in use.
    pub peak_rss_bytes_64g: u64,
}

impl BenchReport {
    pub fn text(&self) -> String {
        format!(
            "hit_accesses_per_sec  {:.1} M\nfaults_per_sec        {:.2} M (fault ratio {:.2})\nbytes_per_frame       {}\npeak_rss_bytes_64g    {:.0} MiB\n",
            self.hit_accesses_per_sec / 1e6,
            self.faults_per_sec / 1e6,
            self.fault_ratio,
            self.bytes_per_frame,
            self.peak_rss_bytes_64g as f64 / (1 << 20) as f64
        )
    }
}

fn scenario_from(text: &str) -> scenario::Scenario {
    scenario::parse_str(text, "<bench>", &[]).expect("bench scenario is valid")
}

/// Runs a scenario; returns (wall seconds, results).
fn timed(text: &str) -> (f64, crate::report::results::Results) {
    let sc = scenario_from(text);
    let t = Instant::now();
    let r = Simulation::new(sc)
        .run(RunOptions::default())
        .expect("bench run");
    (t.elapsed().as_secs_f64(), r)
}

pub fn run(quick: bool) -> BenchReport {
    let secs = if quick { 2 } else { 10 };
    let (wall, r) = timed(&format!(
        r#"
[run]
duration = "{secs}s"
[machine]
memory = "4G"
[[workload]]
name = "hot"
kind = "anon"
size = "1G"
pattern = "zipf"
skew = 0.99
"#
    ));
    let w = &r.workloads["hot"];
    let hits = w.ops - r.vm("pgfault");
    let hit_accesses_per_sec = hits as f64 / wall;

    let (wall, r) = timed(&format!(
        r#"
[run]
duration = "{}s"
[machine]
memory = "1G"
[machine.swap]
type = "zram"
size = "4G"
[[workload]]
name = "big"
kind = "anon"
size = "2G"
pattern = "uniform"
write_ratio = 0.5
"#,
        secs / 2
    ));
    let faults = r.vm("pgfault");
    let faults_per_sec = faults as f64 / wall;
    let fault_ratio = faults as f64 / r.workloads["big"].ops.max(1) as f64;

    BenchReport {
        hit_accesses_per_sec,
        faults_per_sec,
        fault_ratio,
        bytes_per_frame: std::mem::size_of::<Frame>(),
        peak_rss_bytes_64g: measure_rss_in_child(),
    }
}

/// Runs `reclaimsim bench-rss` in a fresh process so its peak RSS is the 64 GiB run's.
fn measure_rss_in_child() -> u64 {
    let exe = std::env::current_exe().expect("current exe");
    let out = std::process::Command::new(exe)
        .arg("bench-rss")
        .output()
        .expect("run bench-rss");
    String::from_utf8_lossy(&out.stdout)
        .trim()
        .parse()
        .unwrap_or(0)
}

/// Fills a 64 GiB machine: 62 GiB of anonymous memory touched sequentially, plus 2 GiB
/// of page cache; returns VmHWM in bytes.
pub fn fill_64g_and_measure() -> u64 {
    let sc = scenario_from(
        r#"
[run]
duration = "20s"
[machine]
memory = "64G"
nr_cpus = 2
[[workload]]
name = "fill"
kind = "anon"
size = "62G"
pattern = "sequential"
[[workload]]
name = "cache"
kind = "file-read"
nr_files = 2
file_size = "1G"
pattern = "sequential"
io_size = "128K"
"#,
    );
    let r = Simulation::new(sc)
        .run(RunOptions::default())
        .expect("64g run");
    assert!(
        r.vm("nr_free_pages") < (1 << 20),
        "64 GiB machine not filled: {} free pages",
        r.vm("nr_free_pages")
    );
    peak_rss_bytes()
}

/// VmHWM from /proc/self/status.
pub fn peak_rss_bytes() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines().find(|l| l.starts_with("VmHWM:")).and_then(|l| {
                l.split_whitespace()
                    .nth(1)
                    .and_then(|v| v.parse::<u64>().ok())
            })
        })
        .map_or(0, |kb| kb * 1024)
}
