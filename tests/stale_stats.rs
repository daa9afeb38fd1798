//! memcg statistics as reclaim reads them (issue 34). Reclaim's deactivation and
//! refault decisions read the copies the last rstat flush left; the kernel flushes them
//! every 2 s (`flush_memcg_stats_dwork`) and on a memory.stat read. The twin
//! experiment (tools/kernel-twin, docs/scenarios.md "memcg statistics and the flusher's phase")
//! ran this scenario on Linux 6.18: 18 of 21 runs without memory.stat reads and all 6
//! with reads every 250 ms ended with pgsteal 725-728 k and pgmajfault 659-662 k; the
//! other 3 unread runs were OOM-killed, their inactive anon list drained between two
//! flushes that both said it was not low.

mod common;

use reclaimsim::report::results::Results;

/// The issue's scenario: 768 MiB written once, then 10 uniform passes of writes, in a
/// 512 MiB memcg over zram.
const TWIN: &str = r#"
[run]
duration = "120s"
stop_when_done = true
[machine]
memory = "4G"
nr_cpus = 2
[machine.swap]
type = "zram"
size = "2G"
compression_ratio = 1.87
[kernel]
vm.swappiness = 60
vm.page-cluster = 3
[[cgroup]]
path = "exp"
memory.max = "512M"
[[workload]]
name = "access"
kind = "anon"
cgroup = "exp"
size = "768M"
init = true
pattern = "uniform"
write_ratio = 1.0
ops = 2162688
"#;

const OPS: u64 = 2_162_688;

fn stat(r: &Results, key: &str) -> u64 {
    r.cgroups["exp"]["memory"]["stat"][key].as_u64().unwrap()
}

fn killed(r: &Results) -> bool {
    r.workloads["access"].killed_at_ns.is_some()
}

/// Done as the kernel is, whether or not anything reads memory.stat: every operation
/// runs, and pgsteal and pgmajfault are within 10 % of the kernel's 725 k and 659 k
/// (the issue's figures; the twin runs measured 725-728 k and 659-662 k). The run's
/// flush phase is the one seed 1 draws.
#[test]
fn the_twin_runs_to_the_end_read_or_not() {
    for poll in ["0s", "250ms"] {
        let r = common::run_checked(TWIN, &[&format!("run.memory_stat_poll=\"{poll}\"")]);
        assert!(!killed(&r), "poll {poll}: OOM-killed");
        assert_eq!(r.workloads["access"].ops, OPS, "poll {poll}");
        for (key, kernel) in [("pgsteal", 725_000.0), ("pgmajfault", 659_000.0)] {
            let got = stat(&r, key) as f64;
            assert!(
                (got / kernel - 1.0).abs() < 0.10,
                "poll {poll}: {key} {got} against the kernel's {kernel}"
            );
        }
    }
}

/// Where in the 2 s flush period the run starts decides whether reclaim reads a flush
/// taken just before its inactive list ran dry; the kernel OOM-killed 3 of 21 unread
/// runs that way and none of 6 read every 250 ms (a read flushes, so the copies are
/// never more than 250 ms old). Here: a first flush at 0.1 s, before the memcg filled,
/// and the next at 2.1 s, which finds inactive anon still above active with a large
/// active list, leaves reclaim neither deactivating nor refilling the inactive list
/// until 4.1 s, and it empties first. Other phases, and every phase under reads, run on.
#[test]
fn an_unlucky_flush_phase_ooms_unless_memory_stat_is_read() {
    let run = |first: &str, poll: &str| {
        common::run_checked(
            TWIN,
            &[
                "run.duration=\"6s\"",
                "run.stop_when_done=false",
                &format!("run.memcg_stats_flush_first=\"{first}\""),
                &format!("run.memory_stat_poll=\"{poll}\""),
            ],
        )
    };
    let phases = ["100ms", "500ms", "1s", "1500ms"];
    for first in phases {
        assert!(
            !killed(&run(first, "250ms")),
            "first flush {first}, read: OOM"
        );
    }
    let unread: Vec<bool> = phases.iter().map(|f| killed(&run(f, "0s"))).collect();
    assert!(unread[0], "first flush 100ms, unread: no OOM");
    assert!(
        unread.contains(&false),
        "every phase OOMs unread: {unread:?}"
    );
}

/// The phase is drawn from the seed when not given: within (0, 2 s], the same for the
/// same seed, not the same for every seed; results.json records it.
#[test]
fn the_flush_phase_is_drawn_from_the_seed_and_recorded() {
    let first = |sets: &[&str]| {
        let mut sets = sets.to_vec();
        sets.extend(["run.duration=\"10ms\"", "run.stop_when_done=false"]);
        common::run_checked(TWIN, &sets)
            .provenance
            .memcg_stats_flush_first_ns
    };
    let drawn: Vec<u64> = (1..=4)
        .map(|seed| first(&[&format!("run.seed={seed}")]))
        .collect();
    assert!(drawn.iter().all(|&ns| ns > 0 && ns <= 2_000_000_000));
    assert_eq!(drawn[0], first(&["run.seed=1"]));
    assert!(drawn.iter().any(|&ns| ns != drawn[0]));
    assert_eq!(
        first(&["run.memcg_stats_flush_first=\"1500ms\""]),
        1_500_000_000
    );
}

/// A first flush outside (0, 2 s] is refused at its key.
#[test]
fn a_flush_phase_outside_the_period_is_refused() {
    for bad in ["0s", "2001ms"] {
        let sets = vec![format!("run.memcg_stats_flush_first=\"{bad}\"")];
        let err = reclaimsim::scenario::parse_str(TWIN, "twin.toml", &sets)
            .err()
            .unwrap_or_else(|| panic!("{bad} accepted"))
            .to_string();
        assert!(err.contains("run.memcg_stats_flush_first"), "{err}");
    }
}

/// MAP_POPULATE of 64 MiB into a 32 MiB memcg with swap: every populated page is young
/// and referenced (FOLL_TOUCH), so limit reclaim's first pass activates the whole
/// inactive list and reclaims nothing; the force-deactivate retry has no inactive
/// list to scan, and the rebalance at the end of shrink_lruvec reads statistics no
/// flush has brought up to date: nothing is aged and the memcg OOM-kills. Linux 6.18
/// did so in 8 of 8 runs (tools/kernel-twin/populate.sh), and swapped 8,340-8,370
/// pages without an OOM when the same memory was written page by page; the simulator
/// swaps the 8,192 pages over the limit and a few more.
#[test]
fn populate_into_a_smaller_memcg_ooms_as_the_kernel_does() {
    let text = r#"
[run]
duration = "2s"
stop_when_done = true
[machine]
memory = "1G"
nr_cpus = 2
[machine.swap]
type = "zram"
size = "1G"
[[cgroup]]
path = "box"
memory.max = "32M"
[[workload]]
name = "heap"
kind = "anon"
cgroup = "box"
size = "64M"
pattern = "sequential"
ops = 16384
"#;
    let populated = common::run_checked(text, &["workload.0.populate=true"]);
    assert!(populated.workloads["heap"].killed_at_ns.is_some());
    assert_eq!(populated.vm("oom_kill"), 1);
    let touched = common::run_checked(text, &[]);
    assert!(touched.workloads["heap"].killed_at_ns.is_none());
    assert_eq!(touched.workloads["heap"].ops, 16384);
    let swapped = touched.vm("pswpout");
    assert!((8192..=8_500).contains(&swapped), "pswpout {swapped}");
}
