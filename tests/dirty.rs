//! Dirty throttling (balance_dirty_pages) and the vm.dirty_bytes keys, against bounds
//! worked out by hand from the kernel's rules. The invariant checker is on in every run.

mod common;

use reclaimsim::report::Run;
use reclaimsim::scenario::{self, parse_str, units::Bytes};
use reclaimsim::sim::{RunOptions, Simulation};
use reclaimsim::stats::series::COLUMNS;
use reclaimsim::stats::trace::Tracer;

/// A `dd`: one task writing a 4 GiB file sequentially in 64 KiB write()s as fast as it
/// can, on a 1 GiB machine whose storage writes 50 MiB/s. The thresholds are set in
/// bytes so that they do not move with memory: 64 MiB = 16384 pages, background 32 MiB
/// = 8192 pages; freerun (16384 + 8192) / 2 = 12288, setpoint (12288 + 16384) / 2 =
/// 14336.
const DD: &str = r#"[run]
duration = "30s"
sample_interval = "10ms"
[machine]
memory = "1G"
nr_cpus = 2
[machine.storage]
write_bandwidth = "50M"
[kernel]
vm.dirty_bytes = "64M"
vm.dirty_background_bytes = "32M"
[[workload]]
name = "dd"
kind = "file-write"
nr_files = 1
file_size = "4G"
io_size = "64K"
pattern = "sequential"
"#;

const PAGE: f64 = 4096.0;
const THRESH: u64 = 16384;
const BG_THRESH: u64 = 8192;
const FREERUN: u64 = (THRESH + BG_THRESH) / 2;
const SETPOINT: u64 = (FREERUN + THRESH) / 2;
const NR_CPUS: u64 = 2;
const IO_PAGES: u64 = 16;
/// How far dirty + writeback may pass the limit. A writer that finds dirty at or over
/// the limit sleeps MAX_PAUSE and checks again after its next write, so the overshoot
/// is what was dirtied after the last check that found room. The per-CPU ratelimit
/// bounds that: a CPU on which `ratelimit_pages` = thresh / (CPUs × 32) = 256 pages
/// were dirtied forces a check (the kernel's "at most 1/32 over the threshold"), and
/// the simulator checks at the end of a write(), so up to one write (16 pages) more per
/// CPU: 2 × (256 + 16) = 544 pages. (Over the limit the writer adds one 16-page write
/// per 200 ms pause while the device cleans 2560 pages in that time, so that does not
/// pile up.)
const OVERSHOOT: u64 = NR_CPUS * (THRESH / (NR_CPUS * 32) + IO_PAGES);

/// The device's pages per second: 50 MiB/s of 4 KiB pages.
const DEVICE_PAGES_PER_S: u64 = 12800;

/// Bounds on what `dd` writes per second over `secs`, by conservation: each byte
/// written dirties a page (the 4 GiB file is never rewritten at ~50 MiB/s), which has
/// since been written back or is dirty or under writeback at the end. Written back:
/// at most the device's 12800 pages a second, and at least that from 100 ms on (from
/// the first few milliseconds the flusher has pages over the background threshold,
/// which is below freerun, where nothing holds the writer back: 8192 pages take it
/// under 4 ms). Dirty or under writeback at the end: between freerun and the limit
/// plus its overshoot (dirty_pages_stay_within_the_limit_and_its_allowance).
fn dd_bytes_per_sec_bounds(secs: u64) -> std::ops::RangeInclusive<f64> {
    let per_s = |pages: u64| (pages as f64 * PAGE) / secs as f64;
    let written_min = DEVICE_PAGES_PER_S * (secs * 10 - 1) / 10;
    let written_max = DEVICE_PAGES_PER_S * secs;
    per_s(written_min + FREERUN)..=per_s(written_max + THRESH + OVERSHOOT)
}

/// Runs with the invariant checker, the timeseries and the given tracepoints.
fn run_traced(text: &str, sets: &[&str], events: &str) -> Run {
    let sets: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
    let sc = parse_str(text, "dirty.toml", &sets).unwrap_or_else(|e| panic!("{e}"));
    let mut sim = Simulation::new(sc);
    sim.enable_trace(Tracer::parse(events, 10_000_000).unwrap());
    reclaimsim::report::run_with_series(
        sim,
        RunOptions {
            check: true,
            ..Default::default()
        },
    )
    .unwrap_or_else(|e| panic!("{e}"))
}

/// nr_dirty + nr_writeback in every timeseries row.
fn dirty_samples(out: &Run) -> Vec<u64> {
    let col = |name: &str| COLUMNS.iter().position(|c| *c == name).unwrap();
    let (d, w) = (col("nr_dirty"), col("nr_writeback"));
    out.series
        .rows
        .iter()
        .map(|r| (r[d] + r[w]) as u64)
        .collect()
}

/// The `field=N` values of one event's lines.
fn field(trace: &str, event: &str, name: &str) -> Vec<i64> {
    let key = format!(" {name}=");
    trace
        .lines()
        .filter(|l| l.contains(&format!(": {event}: ")))
        .map(|l| {
            let v = l.split(&key).nth(1).expect("field present");
            v.split(' ').next().unwrap().parse().unwrap()
        })
        .collect()
}

#[test]
fn fast_writer_is_held_at_the_device_bandwidth() {
    let out = run_traced(DD, &["run.sample_interval=1s"], "balance_dirty_pages");
    let r = &out.results;
    let bw = (50u64 << 20) as f64;
    // Unthrottled, a 64 KiB write() costs the syscall (500 ns) and 16 page copies
    // (400 ns each): 6.9 us, about 9.5 GB/s. The device takes 50 MiB/s.
    //
    // Written: the device's bandwidth, to within what dirty_bytes holds back.
    let dd = &r.workloads["dd"];
    let bounds = dd_bytes_per_sec_bounds(30);
    assert!(
        bounds.contains(&dd.bytes_per_sec),
        "dd wrote {} B/s, bounds {bounds:?} (device {bw} B/s)",
        dd.bytes_per_sec
    );
    // The device's own limit: 12800 pages a second.
    assert!(
        r.vm("nr_written") <= DEVICE_PAGES_PER_S * 30,
        "{}",
        r.vm("nr_written")
    );
    // It was throttled by pauses: some slept, none longer than MAX_PAUSE (200 ms). (A
    // check whose pause is too short to sleep traces min(pause, 0).)
    let t = out.trace.unwrap();
    let pauses = field(&t, "balance_dirty_pages", "pause");
    assert!(pauses.iter().any(|&p| p > 0), "no pause");
    assert!(pauses.iter().all(|&p| p <= 200), "{pauses:?}");
    assert!(dd.latency_ns.max >= 1_000_000, "{}", dd.latency_ns.max);
    // Every check above freerun saw the limit and setpoint worked out above.
    assert!(field(&t, "balance_dirty_pages", "limit")
        .iter()
        .all(|&l| l == THRESH as i64));
    assert!(field(&t, "balance_dirty_pages", "setpoint")
        .iter()
        .all(|&s| s == SETPOINT as i64));
}

#[test]
fn dirty_pages_stay_within_the_limit_and_its_allowance() {
    let out = run_traced(DD, &[], "balance_dirty_pages");
    assert_eq!(out.results.vm("nr_dirty_threshold"), THRESH);
    assert_eq!(out.results.vm("nr_dirty_background_threshold"), BG_THRESH);
    let samples = dirty_samples(&out);
    assert_eq!(samples.len(), 3000);
    let max = *samples.iter().max().unwrap();
    // The bound: 16384 + 544 = 16928 pages.
    assert!(max <= THRESH + OVERSHOOT, "{max} > {}", THRESH + OVERSHOOT);
    // Not vacuous: the writer was in the throttled range, above freerun.
    assert!(max > FREERUN, "{max}");
    // And it is held there: over the last 10 s every sample is between freerun and
    // the bound (below freerun nothing holds the writer back, and at 9.5 GB/s it is
    // back above it within a millisecond; the pauses are a few tens of ms, in which
    // the device cleans a few hundred pages).
    for &s in &samples[2000..] {
        assert!((FREERUN..=THRESH + OVERSHOOT).contains(&s), "{s}");
    }
}

#[test]
fn two_writers_share_the_bandwidth() {
    // Two dd threads: together they are held at the device's bandwidth, as one is
    // (the same conservation bounds), and each gets half: balance_dirty_pages gives
    // every task the same task_ratelimit (the balanced dirty_ratelimit, write_bw / N,
    // times the one pos_ratio), so they dirty pages at one rate.
    let out = run_traced(
        &DD.replace(
            "pattern = \"sequential\"\n",
            "pattern = \"sequential\"\nthreads = 2\n",
        ),
        &["run.sample_interval=100ms"],
        "balance_dirty_pages",
    );
    let r = &out.results;
    let dd = &r.workloads["dd"];
    let bounds = dd_bytes_per_sec_bounds(30);
    assert!(
        bounds.contains(&dd.bytes_per_sec),
        "dd wrote {} B/s, bounds {bounds:?}",
        dd.bytes_per_sec
    );
    // Two tasks, each checked on its own: the allowance is per CPU, so unchanged.
    let max = *dirty_samples(&out).iter().max().unwrap();
    assert!(max <= THRESH + OVERSHOOT, "{max}");
    // Bytes written by each: its 64 KiB write()s.
    let (a, b) = (r.tasks["dd/0"].ops, r.tasks["dd/1"].ops);
    assert_eq!(((a + b) * 65536) as f64, (dd.bytes_per_sec * 30.0).round());
    let share = a as f64 / (a + b) as f64;
    assert!((0.45..=0.55).contains(&share), "{a} vs {b} writes");
}

#[test]
fn slow_writer_below_freerun_is_never_paused() {
    // 100 writes of 64 KiB a second: 1600 pages/s, 64000 pages in 40 s, well past the
    // background threshold (8192), so background writeback runs from about 5 s on. The
    // flusher, woken at the writer's next check (every dirty_poll_interval pages:
    // 2^(ilog2(16384 - 8192) / 2) = 64) writes everything over 8192 at 12800 pages/s,
    // eight times the writer's rate, so dirty + writeback stays near 8192 + 64 plus a
    // request or two in flight: far below freerun (12288), where nothing is throttled.
    let text = DD
        .replace("duration = \"30s\"", "duration = \"40s\"")
        .replace("sample_interval = \"10ms\"", "sample_interval = \"100ms\"")
        .replace(
            "pattern = \"sequential\"\n",
            "pattern = \"sequential\"\nrate = 100\n",
        );
    let out = run_traced(&text, &[], "balance_dirty_pages");
    let r = &out.results;
    // balance_dirty_pages traces every check above freerun, paused or not: none.
    let t = out.trace.as_deref().unwrap();
    assert!(!t.contains(": balance_dirty_pages: "), "{t}");
    let max = *dirty_samples(&out).iter().max().unwrap();
    assert!(max <= FREERUN, "{max}");
    // Background writeback did the writing: by 40 s, expiry (30 s) alone would have
    // written only what was dirtied before 10 s (16000 pages).
    assert!(r.vm("nr_written") > 40_000, "{}", r.vm("nr_written"));
    // Every write() cost what an unthrottled one costs: 500 + 16 × 400 ns (the
    // histogram keeps 3 significant digits), and none was held back.
    let w = &r.workloads["dd"];
    assert_eq!(w.ops, 100 * 40);
    assert!(
        (6900..6910).contains(&w.latency_ns.max),
        "{}",
        w.latency_ns.max
    );
}

/// A short run for the thresholds results.json reports (an anon workload: nothing is
/// dirtied, the thresholds are read at the end).
const IDLE: &str = r#"[run]
duration = "200ms"
[machine]
memory = "1G"
[[workload]]
name = "idle"
kind = "anon"
size = "4M"
rate = 1000
"#;

#[test]
fn dirty_bytes_set_the_thresholds() {
    let r = common::run_checked(
        IDLE,
        &[
            "kernel.vm.dirty_bytes=64M",
            "kernel.vm.dirty_background_bytes=32M",
        ],
    );
    assert_eq!(r.vm("nr_dirty_threshold"), (64 << 20) / 4096);
    assert_eq!(r.vm("nr_dirty_background_threshold"), (32 << 20) / 4096);
    // Rounded up to whole pages (DIV_ROUND_UP): 10000 bytes are 3 pages; the background
    // ratio's 10 % of ~1 GiB is above that, so it becomes half of it (3 / 2 = 1).
    let r = common::run_checked(IDLE, &["kernel.vm.dirty_bytes=10000"]);
    assert_eq!(r.vm("nr_dirty_threshold"), 3);
    assert_eq!(r.vm("nr_dirty_background_threshold"), 1);
    // A background size with the dirty ratio: 20 % of ~1 GiB is above 8M.
    let r = common::run_checked(IDLE, &["kernel.vm.dirty_background_bytes=8M"]);
    assert_eq!(r.vm("nr_dirty_background_threshold"), 2048);
    assert!(r.vm("nr_dirty_threshold") > 2048 * 20);
}

#[test]
fn writing_a_ratio_puts_it_back_in_force() {
    // As the sysctl handlers do: a ratio written zeroes its *_bytes twin.
    let sc = parse_str(
        DD,
        "dirty.toml",
        &[
            "kernel.vm.dirty_ratio=30".into(),
            "kernel.vm.dirty_background_ratio=5".into(),
        ],
    )
    .unwrap();
    assert_eq!(sc.kernel.vm.dirty_bytes, Bytes(0));
    assert_eq!(sc.kernel.vm.dirty_background_bytes, Bytes(0));
    // The kernel's dirty_ratio reads 0 while dirty_bytes is in force: writing 0 is no
    // change and keeps the bytes.
    let mut sc = parse_str(DD, "dirty.toml", &[]).unwrap();
    scenario::set_key(&mut sc, "kernel.vm.dirty_ratio", &toml::Value::Integer(0)).unwrap();
    assert_eq!(sc.kernel.vm.dirty_bytes, Bytes(64 << 20));
    // A file giving both keeps both: the bytes win.
    let both = DD.replace("[kernel]\n", "[kernel]\nvm.dirty_ratio = 30\n");
    let sc = parse_str(&both, "dirty.toml", &[]).unwrap();
    assert_eq!(sc.kernel.vm.dirty_bytes, Bytes(64 << 20));
    // At run time: an action writing vm.dirty_ratio = 30 at 100 ms leaves 30 % of
    // dirtyable memory (at least ~230000 of the 262144 pages of 1 GiB: the kernel's
    // reserves are a few thousand pages) instead of 16384 pages.
    let text = format!(
        "{}\n[[action]]\nat = \"100ms\"\nset = \"kernel.vm.dirty_ratio\"\nvalue = 30\n",
        IDLE.replace(
            "[[workload]]",
            "[kernel]\nvm.dirty_bytes = \"64M\"\n[[workload]]"
        )
    );
    let r = common::run_checked(&text, &[]);
    let thresh = r.vm("nr_dirty_threshold");
    assert!(
        (230_000 * 30 / 100..=262_144 * 30 / 100).contains(&thresh),
        "{thresh}"
    );
}

#[test]
fn bad_dirty_bytes_are_scenario_errors() {
    let err = |text: &str, sets: &[&str]| {
        let sets: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
        match parse_str(text, "dirty.toml", &sets) {
            Ok(_) => panic!("expected an error"),
            Err(e) => e.to_string(),
        }
    };
    // Line 10 of DD is vm.dirty_bytes; the kernel's minimum is 2 pages.
    let e = err(
        &DD.replace("vm.dirty_bytes = \"64M\"", "vm.dirty_bytes = \"4K\""),
        &[],
    );
    assert_eq!(
        e,
        "dirty.toml:10: kernel.vm.dirty_bytes: must be 0 (use dirty_ratio) or at least \
         8K (2 pages), got 4K"
    );
    // The background size must be below the dirty size (line 11).
    let e = err(&DD.replace("\"32M\"", "\"64M\""), &[]);
    assert_eq!(
        e,
        "dirty.toml:11: kernel.vm.dirty_background_bytes: must be below dirty_bytes \
         (64M), got 64M"
    );
    // More pages than 32 bits count (the kernel's -ERANGE).
    let e = err(DD, &["kernel.vm.dirty_bytes=20T"]);
    assert_eq!(
        e,
        "--set kernel.vm.dirty_bytes=20T: kernel.vm.dirty_bytes: must be below 16T, got 20T"
    );
    let e = err(DD, &["kernel.vm.dirty_bytes=lots"]);
    assert!(
        e.starts_with("--set kernel.vm.dirty_bytes=lots: kernel.vm.dirty_bytes: "),
        "{e}"
    );
    // A timed action is checked the same way.
    let e = err(
        &format!("{DD}[[action]]\nat = \"1s\"\nset = \"kernel.vm.dirty_bytes\"\nvalue = 4096\n"),
        &[],
    );
    assert!(e.contains("action[0].value: "), "{e}");
    assert!(e.contains("at least 8K (2 pages), got 4K"), "{e}");
}

#[test]
fn reclaim_that_finds_only_dirty_pages_makes_the_flusher_write_them_all() {
    // A writer fills a 64 MiB cgroup with dirty page cache. Background writeback starts
    // at 50 % of the machine's dirtyable memory (~120 MiB) and nothing expires within
    // the run, so only the cgroup's reclaim can get the pages written: every page it
    // isolates is dirty and unqueued, so it wakes the flushers (wakeup_flusher_threads)
    // and their next round writes every page dirty then (wb_check_start_all),
    // threshold or not.
    let r = common::run_checked(
        r#"
[run]
duration = "2s"
[machine]
memory = "256M"
[kernel]
vm.dirty_ratio = 60
vm.dirty_background_ratio = 50
[[cgroup]]
path = "w"
memory.max = "64M"
[[workload]]
name = "writer"
kind = "file-write"
nr_files = 1
file_size = "1G"
io_size = "64K"
pattern = "sequential"
rate = 2000
cgroup = "w"
"#,
        &[],
    );
    let v = |k: &str| r.vmstat[k];
    assert!(v("nr_vmscan_immediate_reclaim") > 0);
    // The cgroup's 16384 pages, less what its kernel objects take.
    assert!(v("nr_written") >= 16_000, "{}", v("nr_written"));
    assert_eq!(v("nr_vmscan_write"), 0);
}
