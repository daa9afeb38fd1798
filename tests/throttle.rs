//! Reclaim throttling on a small version of scenarios/stutterp.toml: 4 workers (one
//! mmap latency worker, two fio random writers, one anon hog) for 10 s, under the legacy
//! congestion_wait and under reclaim_throttle as merged. The directions are the seed
//! series' ("mm/vmscan: throttle reclaim until some writeback completes if congested"):
//! direct reclaimers that sleep until writeback makes progress instead of rescanning
//! dirty and writeback pages burn less CPU, scan less and meet fewer pages tagged for
//! immediate reclaim. Exact wake-up rules and timeouts are unit-tested in
//! src/mm/throttle.rs. The runs read exact memcg statistics: under rstat's 2 s-old
//! copies classic reclaim meets other pages in these 10 s (no writeback sleeps at
//! all); the full-size sweep keeps the directions under rstat (docs/experiments/stutterp.md).

mod common;

use reclaimsim::report::results::Results;

const DURATION_NS: u64 = 10_000_000_000;

fn run(mode: &str) -> Results {
    let text = include_str!("../scenarios/stutterp.toml");
    let mode = format!("kernel.reclaim_throttle={mode}");
    common::run_checked(
        text,
        &[
            "run.duration=10s",
            &mode,
            "kernel.memcg_stats_flush=\"exact\"",
        ],
    )
}

fn reclaim_cpu_ns(r: &Results) -> u64 {
    r.reclaim.kswapd_cpu_ns + r.reclaim.direct_reclaim_cpu_ns
}

#[test]
fn throttling_spends_less_on_reclaim_than_congestion_wait() {
    let old = run("congestion_wait");
    let new = run("throttle");
    // Much less CPU in reclaim, fewer direct scans, fewer immediate-reclaim pages.
    assert!(
        reclaim_cpu_ns(&new) * 2 < reclaim_cpu_ns(&old),
        "reclaim CPU {} ns vs {} ns",
        reclaim_cpu_ns(&new),
        reclaim_cpu_ns(&old)
    );
    let (d_new, d_old) = (new.vm("pgscan_direct"), old.vm("pgscan_direct"));
    assert!(d_new * 4 < d_old * 3, "pgscan_direct {d_new} vs {d_old}");
    let (i_new, i_old) = (
        new.vm("nr_vmscan_immediate_reclaim"),
        old.vm("nr_vmscan_immediate_reclaim"),
    );
    assert!(i_new * 10 < i_old * 9, "immediate {i_new} vs {i_old}");

    // The legacy sleeps: congestion_wait always runs its HZ/10, wait_iff_congested
    // never sleeps (nothing marks a device congested).
    let cw = &old.reclaim_throttle["writeback_congestion_wait"];
    assert!(cw.count > 0);
    assert_eq!((cw.timed_out, cw.woken_early), (cw.count, 0));
    assert_eq!(cw.usec_delayed.keys().collect::<Vec<_>>(), [&100_000]);
    let wic = &old.reclaim_throttle["writeback_wait_iff_congested"];
    assert!(wic.count > 0);
    assert_eq!(wic.usec_delayed.keys().collect::<Vec<_>>(), [&0]);
    assert!(!old
        .reclaim_throttle
        .contains_key("VMSCAN_THROTTLE_WRITEBACK"));

    // reclaim_throttle: writeback sleepers woken early by completions, and sleeps that
    // ran their whole timeout.
    let wb = &new.reclaim_throttle["VMSCAN_THROTTLE_WRITEBACK"];
    assert!(wb.woken_early > 0);
    assert!(
        new.reclaim_throttle.values().any(|t| t.timed_out > 0),
        "{:?}",
        new.reclaim_throttle
    );
    for (reason, t) in &new.reclaim_throttle {
        assert_eq!(t.count, t.woken_early + t.timed_out, "{reason}");
        assert!(!reason.starts_with("writeback_"), "{reason}");
    }
}

#[test]
fn every_worker_makes_progress_in_every_mode() {
    // The longest sleep a worker can take is NOPROGRESS's 500 ms; a dirty-throttled
    // write pauses at most 200 ms. So a worker that is not stuck completes something in
    // every second: each one's last operation falls in the last second of the run.
    for mode in ["congestion_wait", "throttle", "throttle-current"] {
        let r = run(mode);
        for (name, t) in r.tasks.iter().filter(|(n, _)| n.contains('/')) {
            assert!(t.ops > 0, "{mode}: {name} did nothing");
            let last = t.last_op_ns.expect("an operation completed");
            assert!(
                last + 1_000_000_000 >= DURATION_NS,
                "{mode}: {name}'s last operation at {last} ns"
            );
        }
        assert_eq!(r.vm("oom_kill"), 0, "{mode}");
    }
}

/// The 12-worker point of the stutterp sweep under `throttle`: direct reclaimers meet a
/// congested lruvec and sleep VMSCAN_THROTTLE_WRITEBACK part-way through their reclaim,
/// most of them woken early by the writeback completing around them. The kernel goes
/// on with the same `try_to_free_pages` after such a sleep; only a reclaim attempt that
/// ends with nothing counts towards MAX_RECLAIM_RETRIES. With 2 GiB of zram swap
/// mostly free there is always something to reclaim, so nobody is OOM-killed (counting
/// each interrupted attempt killed a hog 10.4 s in).
#[test]
fn writeback_throttles_part_way_through_reclaim_do_not_reach_the_oom_killer() {
    let text = include_str!("../scenarios/stutterp.toml");
    let r = common::run_checked(
        text,
        &[
            "run.duration=11s",
            "kernel.reclaim_throttle=throttle",
            // Today's lists, with which the interrupted attempts added up to an OOM.
            "kernel.pcp=\"v6.7\"",
            "workload.1.numjobs=6",
            "workload.1.size=\"67M\"",
            "workload.2.threads=5",
        ],
    );
    let wb = &r.reclaim_throttle["VMSCAN_THROTTLE_WRITEBACK"];
    assert!(wb.count > 1000, "{}", wb.count);
    // Each one ended by completed writes, not by its timeout.
    assert!(wb.woken_early > 1000, "{} of {}", wb.woken_early, wb.count);
    assert_eq!(r.vm("oom_kill"), 0);
    assert!(
        r.swap.used_pages < r.swap.total_pages / 2,
        "swap mostly free"
    );
}

/// `throttle_direct_reclaim`: eight hog threads fill 512 MiB at once, swapping to zram
/// that halves their pages (the pool allocates with reclaim's PF_MEMALLOC rights, and
/// the per-CPU lists take their batches past the watermark check). When the first of
/// them reach direct reclaim, NR_FREE_PAGES is at or below half the min watermark, so
/// they wait on `pfmemalloc_wait` for kswapd instead of reclaiming. The wait has no
/// timeout: each ends when kswapd restores the reserves.
#[test]
fn direct_reclaimers_wait_for_kswapd_below_half_the_reserves() {
    let text = r#"
[run]
duration = "1s"
seed = 1
[machine]
memory = "512M"
nr_cpus = 4
[machine.swap]
type = "zram"
size = "2G"
compression_ratio = 2.0
[[workload]]
name = "hog"
kind = "anon-hog"
size = "600M"
threads = 8
"#;
    let r = common::run_checked(text, &[]);
    let throttled = r.vm("pgscan_direct_throttle");
    assert!(throttled > 0, "no direct reclaimer was throttled");
    let t = &r.reclaim_throttle["throttle_direct_reclaim"];
    // Every entry sleeps once; a sleep still going at the end is not yet recorded.
    assert!(
        t.count > 0 && t.count <= throttled,
        "{} of {throttled}",
        t.count
    );
    assert_eq!((t.timed_out, t.woken_early), (0, t.count));
    // They reclaimed after: the run went on swapping without an OOM kill.
    assert!(r.vm("pgscan_direct") > 0 && r.vm("pswpout") > 0);
    assert_eq!(r.vm("oom_kill"), 0);
}
