//! Tracepoints, checked against the vmstat counters the same code paths bump (a second
//! count of the same events), and the trace file's bound.

use reclaimsim::scenario;
use reclaimsim::sim::{RunOptions, Simulation};
use reclaimsim::stats::trace::Tracer;

const BURST: &str = r#"
[run]
duration = "3s"
[machine]
memory = "512M"
nr_cpus = 2
[machine.swap]
type = "zram"
size = "1G"
[[workload]]
name = "cache"
kind = "file-read"
nr_files = 1
file_size = "400M"
io_size = "1M"
pattern = "sequential"
stop = "1s"
[[workload]]
name = "grow"
kind = "anon"
size = "400M"
pattern = "sequential"
start = "1s"
threads = 2
"#;

/// The `field=N` values of one event's lines that also contain `also`.
fn values(trace: &str, event: &str, field: &str, also: &str) -> Vec<u64> {
    let key = format!("{field}=");
    trace
        .lines()
        .filter(|l| l.contains(&format!(": {event}: ")) && l.contains(also))
        .map(|l| {
            let v = l.split(&key).nth(1).expect("field present");
            v.split(' ').next().unwrap().parse::<u64>().unwrap()
        })
        .collect()
}

/// Sums `field=N` over the lines of one event.
fn sum(trace: &str, event: &str, field: &str) -> u64 {
    values(trace, event, field, "").iter().sum()
}

#[test]
fn tracepoints_agree_with_vmstat() {
    let sc = scenario::parse_str(BURST, "t.toml", &[]).unwrap();
    let mut sim = Simulation::new(sc);
    sim.enable_trace(Tracer::parse("all", 10_000_000).unwrap());
    let run = reclaimsim::report::run_with_series(
        sim,
        RunOptions {
            check: true,
            ..Default::default()
        },
    )
    .unwrap();
    let r = &run.results;
    let t = run.trace.unwrap();
    let count = |e: &str| {
        t.lines()
            .filter(|l| l.contains(&format!(": {e}: ")))
            .count() as u64
    };
    assert!(
        r.vm("allocstall_normal") + r.vm("allocstall_dma32") > 0,
        "the burst must reach direct reclaim"
    );
    // Every balance_pgdat run starts with mm_vmscan_kswapd_wake and counts pageoutrun.
    assert_eq!(count("mm_vmscan_kswapd_wake"), r.vm("pageoutrun"));
    // Every shrink_inactive_list call traces what it scanned and stole.
    let scanned = r.vm("pgscan_kswapd") + r.vm("pgscan_direct");
    assert_eq!(
        sum(&t, "mm_vmscan_lru_shrink_inactive", "nr_scanned"),
        scanned
    );
    let stolen = r.vm("pgsteal_kswapd") + r.vm("pgsteal_direct");
    assert_eq!(
        sum(&t, "mm_vmscan_lru_shrink_inactive", "nr_reclaimed"),
        stolen
    );
    // Direct reclaim: what each call reports reclaimed adds up to pgsteal_direct.
    assert_eq!(
        count("mm_vmscan_direct_reclaim_begin"),
        count("mm_vmscan_direct_reclaim_end")
    );
    // (nr_reclaimed also counts the slab pages the shrinkers it ran gave back,
    // reclaim_state's, which pgsteal does not.)
    let ended = sum(&t, "mm_vmscan_direct_reclaim_end", "nr_reclaimed");
    assert!(ended >= r.vm("pgsteal_direct"));
    assert!(ended == r.vm("pgsteal_direct") || r.vm("slabs_scanned") > 0);
    assert_eq!(
        sum(&t, "mm_vmscan_lru_shrink_active", "nr_deactivated"),
        r.vm("pgdeactivate")
    );
    assert_eq!(count("mm_vmscan_write_folio"), r.vm("nr_vmscan_write"));
    // Lines are in time order.
    let stamps: Vec<f64> = t
        .lines()
        .filter(|l| !l.starts_with('#'))
        .map(|l| {
            l.split("..... ")
                .nth(1)
                .unwrap()
                .split(':')
                .next()
                .unwrap()
                .trim()
                .parse()
                .unwrap()
        })
        .collect();
    assert!(stamps.windows(2).all(|w| w[0] <= w[1]));
}

#[test]
fn trace_is_bounded_with_a_dropped_line() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("t.toml");
    std::fs::write(&file, BURST).unwrap();
    let out = dir.path().join("out");
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_reclaimsim"))
        .args([
            "run".as_ref(),
            file.as_os_str(),
            "--out".as_ref(),
            out.as_os_str(),
            "-q".as_ref(),
        ])
        .args([
            "--trace",
            "mm_vmscan_lru_shrink_inactive",
            "--trace-limit",
            "100",
        ])
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let t = std::fs::read_to_string(out.join("trace.txt")).unwrap();
    assert_eq!(
        t.lines()
            .filter(|l| l.contains("mm_vmscan_lru_shrink_inactive: nid=0 "))
            .count(),
        100
    );
    let last = t.lines().last().unwrap();
    assert!(
        last.starts_with("# dropped ") && last.ends_with("the limit of 100 lines was reached"),
        "{last}"
    );
    // An unknown event is a clear error before anything runs.
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_reclaimsim"))
        .args([
            "run".as_ref(),
            file.as_os_str(),
            "--out".as_ref(),
            out.as_os_str(),
        ])
        .args(["--trace", "mm_vmscan_kswapd_wake,mm_vmscan_nope"])
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("unknown event `mm_vmscan_nope`"));
}

#[test]
fn throttle_tracepoints_agree_with_the_histograms() {
    // The 4-worker stutterp point for 3 s, old and new: every sleep the results count
    // is one tracepoint line, and the lines' usec_delayed add up to the histogram's.
    let text = include_str!("../scenarios/stutterp.toml");
    for mode in ["congestion_wait", "throttle"] {
        let sets = [
            "run.duration=3s".to_string(),
            format!("kernel.reclaim_throttle={mode}"),
        ];
        let sc = scenario::parse_str(text, "stutterp.toml", &sets).unwrap();
        let mut sim = Simulation::new(sc);
        sim.enable_trace(
            Tracer::parse(
                "mm_vmscan_throttled,writeback_congestion_wait,writeback_wait_iff_congested",
                10_000_000,
            )
            .unwrap(),
        );
        let run = reclaimsim::report::run_with_series(sim, RunOptions::default()).unwrap();
        let t = run.trace.unwrap();
        let r = &run.results;
        assert!(!r.reclaim_throttle.is_empty(), "{mode}: no sleeps");
        for (kind, h) in &r.reclaim_throttle {
            let (event, field, filter) = match kind.as_str() {
                // v5.15's too_many_isolated loop sleeps in msleep(100), and
                // throttle_direct_reclaim in wait_event_killable: no tracepoints.
                "msleep_too_many_isolated" | "throttle_direct_reclaim" => continue,
                "writeback_congestion_wait" | "writeback_wait_iff_congested" => {
                    (kind.as_str(), "usec_delayed", String::new())
                }
                reason => (
                    "mm_vmscan_throttled",
                    "usect_delayed",
                    format!("reason={reason}"),
                ),
            };
            let delays = values(&t, event, field, &filter);
            assert_eq!(delays.len() as u64, h.count, "{mode} {kind}");
            let counted: u64 = h.usec_delayed.iter().map(|(us, n)| us * n).sum();
            assert_eq!(delays.iter().sum::<u64>(), counted, "{mode} {kind}");
        }
    }
}
