//! Output: results.json, timeseries.csv (both written atomically) and the summary
//! printed after a run.

pub mod compare;
pub mod damon_record;
pub mod damon_table;
pub mod heatmap;
pub mod highalloc_table;
pub mod html;
pub mod mrc;
pub mod natural;
pub mod outdir;
pub mod plot;
pub mod results;
pub mod sweep_dir;

use crate::sim::{RunOptions, RunOutput, SimError, Simulation};
use crate::stats::series::TimeSeries;
use results::Results;
use std::fmt::Write as _;
use std::io::Write as _;
use std::path::Path;

/// A finished run: its results and what was recorded on the way.
pub type Run = RunOutput<Results>;

/// Runs `sim` to the end and reads its results ([`Results::collect`]) from the state
/// it ended in, which is then dropped.
pub fn run_with_series(sim: Simulation, opts: RunOptions) -> Result<Run, SimError> {
    Ok(sim.run(opts)?.map(|end| Results::collect(&end)))
}

/// Runs `sim` to the end and returns its results.
pub fn run(sim: Simulation, opts: RunOptions) -> Result<Results, SimError> {
    run_with_series(sim, opts).map(|r| r.results)
}

/// Writes `contents` to `path` via a temporary file in the same directory and a rename,
/// so a reader never sees a partial file. On any error (a full disk, a read-only
/// directory) the temporary file is removed and `path` is left as it was.
pub fn write_atomic(path: &Path, contents: &[u8]) -> std::io::Result<()> {
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("out");
    let tmp = dir.join(format!(".{name}.{}.tmp", std::process::id()));
    let written = std::fs::File::create(&tmp).and_then(|mut f| {
        f.write_all(contents)?;
        f.sync_all()
    });
    written
        .and_then(|_| std::fs::rename(&tmp, path))
        .inspect_err(|_| {
            let _ = std::fs::remove_file(&tmp);
        })
}

/// The files a run writes into its directory (results.json last: it marks the run
/// complete).
pub const RUN_FILES: [&str; 10] = [
    "timeseries.csv",
    "trace.txt",
    "lru_gen.txt",
    "damon.data",
    "buddyinfo.txt",
    "pagetypeinfo.txt",
    "unusable_index.txt",
    "extfrag_index.txt",
    "zoneinfo.txt",
    "results.json",
];

/// results.json text (pretty, with a trailing newline).
pub fn results_json(r: &Results) -> String {
    let mut s = serde_json::to_string_pretty(r).expect("results serialise");
    s.push('\n');
    s
}

/// Writes DIR/results.json and DIR/timeseries.csv.
pub fn write_run_dir(dir: &Path, r: &Results, series: &TimeSeries) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    write_atomic(&dir.join("timeseries.csv"), series.to_csv().as_bytes())?;
    write_atomic(&dir.join("results.json"), results_json(r).as_bytes())
}

fn ms(ns: u64) -> String {
    format!("{:.1}ms", ns as f64 / 1e6)
}

fn lat(ns: u64) -> String {
    if ns >= 1_000_000 {
        format!("{:.2}ms", ns as f64 / 1e6)
    } else if ns >= 1_000 {
        format!("{:.1}us", ns as f64 / 1e3)
    } else {
        format!("{ns}ns")
    }
}

/// The human summary: key /proc/vmstat counters, workloads, CPU, PSI.
pub fn summary(r: &Results) -> String {
    let mut s = String::new();
    let secs = r.duration_ns as f64 / 1e9;
    let _ = writeln!(
        s,
        "reclaimsim {}: {secs:.1}s simulated, seed {}",
        r.reclaimsim_version, r.seed
    );
    let _ = writeln!(s, "\n/proc/vmstat (selected)");
    for k in [
        "pgscan_kswapd",
        "pgscan_direct",
        "pgsteal_kswapd",
        "pgsteal_direct",
        "pgscan_anon",
        "pgscan_file",
        "pgrefill",
        "pgactivate",
        "pgdeactivate",
        "pswpin",
        "pswpout",
        "pgmajfault",
        "workingset_refault_anon",
        "workingset_refault_file",
        "workingset_activate_anon",
        "workingset_activate_file",
        "workingset_restore_anon",
        "workingset_restore_file",
        "allocstall_normal",
        "allocstall_dma32",
        "kswapd_low_wmark_hit_quickly",
        "kswapd_high_wmark_hit_quickly",
        "nr_vmscan_write",
        "nr_vmscan_immediate_reclaim",
        "oom_kill",
        "nr_free_pages",
    ] {
        let _ = writeln!(s, "  {k:<32} {}", r.vm(k));
    }
    let _ = writeln!(s, "\nworkloads");
    let _ = writeln!(
        s,
        "  {:<16} {:>12} {:>14} {:>10} {:>10} {:>10}",
        "name", "ops", "ops/s", "p50", "p99", "max"
    );
    let mut workloads: Vec<_> = r.workloads.iter().collect();
    workloads.sort_by(|a, b| natural::natural_cmp(a.0, b.0));
    for (name, w) in workloads {
        let _ = writeln!(
            s,
            "  {:<16} {:>12} {:>14.1} {:>10} {:>10} {:>10}{}",
            name,
            w.ops,
            w.throughput,
            lat(w.latency_ns.p50),
            lat(w.latency_ns.p99),
            lat(w.latency_ns.max),
            if let Some(t) = w.killed_at_ns {
                format!("  OOM-killed at {:.3}s", t as f64 / 1e9)
            } else if let Some(t) = w.fork_failed_at_ns {
                format!("  fork failed (ENOMEM) at {:.3}s", t as f64 / 1e9)
            } else {
                String::new()
            }
        );
    }
    let _ = writeln!(s, "\nCPU time");
    let _ = writeln!(
        s,
        "  kswapd0 {}, direct reclaim {}",
        ms(r.reclaim.kswapd_cpu_ns),
        ms(r.reclaim.direct_reclaim_cpu_ns)
    );
    // Natural order: `w/2` before `w/10`.
    let mut tasks: Vec<_> = r.tasks.iter().collect();
    tasks.sort_by(|a, b| natural::natural_cmp(a.0, b.0));
    for (name, t) in tasks {
        let _ = writeln!(
            s,
            "  {name:<20} user {:>10} system {:>10}",
            ms(t.user_ns),
            ms(t.system_ns)
        );
    }
    let p = &r.psi.memory;
    let _ = writeln!(s, "\n/proc/pressure/memory");
    let _ = writeln!(
        s,
        "  some avg10={:.2} avg60={:.2} avg300={:.2} total={}",
        p.some.avg10, p.some.avg60, p.some.avg300, p.some.total
    );
    let _ = writeln!(
        s,
        "  full avg10={:.2} avg60={:.2} avg300={:.2} total={}",
        p.full.avg10, p.full.avg60, p.full.avg300, p.full.total
    );
    if r.swap.kind != "none" {
        let _ = writeln!(
            s,
            "\nswap ({}): {} of {} pages used; zram pool {} bytes for {} stored",
            r.swap.kind,
            r.swap.used_pages,
            r.swap.total_pages,
            r.swap.mem_used_total,
            r.swap.orig_data_size
        );
    }
    if !r.reclaim_throttle.is_empty() {
        let _ = writeln!(
            s,
            "\nreclaim throttling (sleeps: count usec_delayed reason)"
        );
        s.push_str(&throttle_histogram(r));
    }
    for e in &r.events {
        let at = e.time_ns as f64 / 1e9;
        let _ = if e.event == "fork_failed" {
            writeln!(s, "\n{} at {at:.3}s: {} (ENOMEM)", e.event, e.workload)
        } else {
            writeln!(
                s,
                "\n{} at {at:.3}s: {} (rss {} pages, swap {} pages)",
                e.event, e.workload, e.rss_pages, e.swap_pages
            )
        };
    }
    s
}

/// The sleeps in reclaim as the seed's tables show them (`sort | uniq -c` of the
/// tracepoint lines): one line per reason and usec_delayed, with a per-reason total of
/// sleeps woken early and sleeps that ran the whole timeout.
pub fn throttle_histogram(r: &Results) -> String {
    let mut s = String::new();
    for (reason, t) in &r.reclaim_throttle {
        for (usec, n) in &t.usec_delayed {
            let _ = writeln!(s, "  {n:>8} usec_delayed={usec} reason={reason}");
        }
        let _ = writeln!(
            s,
            "  {:>8} total: {} woken early, {} full timeout  reason={reason}",
            t.count, t.woken_early, t.timed_out
        );
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Paced accesses run back to back (`workload::paced_anon_hits`) are the loop's one-access
    /// operations: the same results to the byte, with zipf and uniform threads whose
    /// pacing interval does not divide the slice, a late start, a stop inside a slice,
    /// and memory short enough that accesses miss, fault and reclaim.
    #[test]
    fn paced_runs_are_the_loop_one_access_at_a_time() {
        let text = r#"
[run]
duration = "1500ms"
[machine]
memory = "256M"
nr_cpus = 2
[machine.swap]
type = "zram"
size = "512M"
[[workload]]
name = "zipf"
kind = "anon"
size = "200M"
pattern = "zipf"
skew = 0.9
write_ratio = 0.3
threads = 3
rate = 333333
[[workload]]
name = "uniform"
kind = "anon"
size = "100M"
pattern = "uniform"
rate = 70000
start = "30ms"
stop = "1234567us"
"#;
        let run = |off: bool| {
            crate::workload::test_switch::PACED_RUNS_OFF.with(|c| c.set(off));
            let sc = crate::scenario::parse_str(text, "paced.toml", &[]).unwrap();
            let r = super::run(Simulation::new(sc), RunOptions::default()).unwrap();
            crate::workload::test_switch::PACED_RUNS_OFF.with(|c| c.set(false));
            serde_json::to_string(&r).unwrap()
        };
        let (fast, one_by_one) = (run(false), run(true));
        assert!(fast.contains("\"pswpout\""));
        let v: serde_json::Value = serde_json::from_str(&fast).unwrap();
        assert!(
            v["vmstat"]["pswpout"].as_u64().unwrap() > 0,
            "memory is short"
        );
        assert!(v["workloads"]["uniform"]["ops"].as_u64().unwrap() > 10_000);
        assert_eq!(fast, one_by_one);
    }

    #[test]
    fn a_failed_atomic_write_leaves_no_temporary_file() {
        let dir = tempfile::tempdir().unwrap();
        // The target is a non-empty directory: the file is written, the rename fails.
        let target = dir.path().join("results.json");
        std::fs::create_dir(&target).unwrap();
        std::fs::write(target.join("x"), "").unwrap();
        assert!(write_atomic(&target, b"{}").is_err());
        let names: Vec<String> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(names, ["results.json"], "a temporary file was left behind");
    }
}
