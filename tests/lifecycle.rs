//! A workload's process from fork to exit: when it is forked (and charged for it),
//! and that it exits (and frees what exit frees) when its `stop` passes, whatever it
//! is doing then.

use reclaimsim::report::results::Results;

mod common;

fn run(text: &str) -> Results {
    common::run_checked(text, &[])
}

/// A sample's time (s) and each cgroup's memory.current then, in pages.
type Sample = (f64, Vec<(String, u64)>);

/// Runs `text` (invariants checked) and returns its results with its samples.
fn run_sampled(text: &str) -> (Results, Vec<Sample>) {
    let (results, csv) = common::run_checked_csv(text);
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let rows = lines
        .map(|l| {
            let v: Vec<&str> = l.split(',').collect();
            let cgroups = header
                .iter()
                .zip(&v)
                .filter_map(|(h, x)| {
                    let cg = h.strip_prefix("memory.current:")?;
                    Some((cg.to_string(), x.parse().unwrap()))
                })
                .collect();
            (v[0].parse().unwrap(), cgroups)
        })
        .collect();
    (results, rows)
}

/// A workload is forked when it starts, and its cgroup is charged nothing for it
/// before. Fork's objects and stacks, worked from fork.rs's sizes and the objcg stock
/// (each object with its 8-byte objcg pointer; a charge that the stock cannot cover
/// takes whole pages and leaves the rest in the stock):
/// - `later` (2 threads, one mapping) starts at 500 ms: mm_struct 1352 takes a page
///   (stock 2744), signal_cache 1160 fits (1584), sighand_cache 2120 takes a page
///   (3560), files_cache 712 and the vm_area_struct 184 fit (2664), each of the two
///   task_structs (9992) takes 3 pages: 8 slab pages, and two 16 KiB stacks, 8 more.
///   Each thread then writes one page (cursors at pages 0 and 512: two page tables)
///   and thinks past the run's end: 16 + 2 + 2 = 20 pages from 500 ms on, none
///   before.
/// - `after` (1 thread) starts when `first` has done its 3 operations at 10/s (it
///   exits at 300 ms, when its fourth would be due): 5 slab pages, a 4-page stack, a
///   page and its page table: 11 pages, none before.
/// - `cramped` (2 threads) starts at 200 ms in a cgroup with memory.max = 16K (4
///   pages): mm_struct's and sighand_cache's pages fit, the first task_struct's 3 do
///   not; reclaim finds nothing, memory.events max counts the first try and its 16
///   retries, the memcg OOM killer (oom 1) finds no process with memory in it, so
///   the fork fails with ENOMEM 1 us in (two copy_process syscalls of 500 ns) and
///   frees what it took: the objects' bytes go back to the stock, whose whole pages
///   are uncharged once it holds more than a page (`refill_obj_stock`): after
///   mm_struct 4016 bytes, signal_cache 5176 → a page uncharged (1080), then 3200,
///   3912 and exactly 4096, which stays: 1 page charged, 2 at the peak. Its second
///   thread never exists, and `next`, waiting for it, starts then.
#[test]
fn a_workload_is_forked_when_it_starts() {
    let text = r#"
[run]
duration = "1s"
sample_interval = "100ms"
[machine]
memory = "256M"
[[cgroup]]
path = "late"
[[cgroup]]
path = "after"
[[cgroup]]
path = "tiny"
memory.max = "16K"
[[workload]]
name = "first"
kind = "anon"
size = "4M"
rate = 10
ops = 3
[[workload]]
name = "later"
kind = "anon"
size = "4M"
pattern = "sequential"
threads = 2
think_time = "10s"
start = "500ms"
cgroup = "late"
[[workload]]
name = "after"
kind = "anon"
size = "4M"
pattern = "sequential"
think_time = "10s"
start_after = "first"
cgroup = "after"
[[workload]]
name = "cramped"
kind = "anon"
size = "4M"
threads = 2
start = "200ms"
cgroup = "tiny"
[[workload]]
name = "next"
kind = "anon"
size = "4M"
think_time = "10s"
start_after = "cramped"
"#;
    let (r, samples) = run_sampled(text);
    let pages = |t: f64, cg: &str| {
        let (_, row) = samples
            .iter()
            .find(|(at, _)| (at - t).abs() < 1e-9)
            .unwrap_or_else(|| panic!("a sample at {t}"));
        row.iter().find(|(c, _)| c == cg).unwrap().1
    };
    for t in [0.1, 0.2, 0.3, 0.4] {
        assert_eq!(pages(t, "late"), 0, "late at {t}");
    }
    for t in [0.6, 0.8, 1.0] {
        assert_eq!(pages(t, "late"), 20, "late at {t}");
    }
    for t in [0.1, 0.2] {
        assert_eq!(pages(t, "after"), 0, "after at {t}");
    }
    for t in [0.4, 0.7, 1.0] {
        assert_eq!(pages(t, "after"), 11, "after at {t}");
    }
    assert_eq!(pages(0.1, "tiny"), 0);
    let memory = |cg: &str| &r.cgroups[cg]["memory"];
    assert_eq!(memory("late")["peak"].as_u64(), Some(20 * 4096));
    assert_eq!(memory("late")["stat"]["kernel"].as_u64(), Some(18 * 4096));
    assert_eq!(memory("after")["peak"].as_u64(), Some(11 * 4096));
    let tiny = memory("tiny");
    assert_eq!(tiny["current"].as_u64(), Some(4096));
    assert_eq!(tiny["peak"].as_u64(), Some(2 * 4096));
    assert_eq!(tiny["events"]["max"].as_u64(), Some(17));
    assert_eq!(tiny["events"]["oom"].as_u64(), Some(1));
    assert_eq!(tiny["events"]["oom_kill"].as_u64(), Some(0));
    let cramped = &r.workloads["cramped"];
    assert_eq!(cramped.ops, 0);
    assert_eq!(cramped.fork_failed_at_ns, Some(200_001_000));
    assert_eq!(r.events.len(), 1);
    assert_eq!(
        (r.events[0].event.as_str(), r.events[0].workload.as_str()),
        ("fork_failed", "cramped")
    );
    assert_eq!(r.tasks["cramped/0"].system_ns, 1000);
    assert_eq!(r.tasks["cramped/1"].system_ns, 0);
    assert_eq!(r.workloads["next"].ops, 1);
    assert_eq!(r.workloads["later"].ops, 2);
}

/// A thread asleep between operations when its `stop` passes exits at the stop, as a
/// program ended by a signal (`timeout`) leaves its sleep: `think` thinks 10 s after
/// its one access, `paced` waits 1 s for its next (1 op/s), both stop at 500 ms. Each
/// exits then: its page, page table, objects and stack are freed, so its cgroup holds
/// nothing at the end, and the workload waiting for it starts at 500 ms and issues its
/// 1000 ops/s until the run's end at 1 s: 500 operations.
#[test]
fn a_thread_asleep_past_its_stop_exits_at_the_stop() {
    let text = r#"
[run]
duration = "1s"
[machine]
memory = "256M"
[[cgroup]]
path = "a"
[[cgroup]]
path = "b"
[[workload]]
name = "think"
kind = "anon"
size = "4M"
pattern = "uniform"
think_time = "10s"
stop = "500ms"
cgroup = "a"
[[workload]]
name = "paced"
kind = "anon"
size = "4M"
pattern = "uniform"
rate = 1
stop = "500ms"
cgroup = "b"
[[workload]]
name = "after-think"
kind = "anon"
size = "4M"
rate = 1000
start_after = "think"
[[workload]]
name = "after-paced"
kind = "anon"
size = "4M"
rate = 1000
start_after = "paced"
"#;
    let r = run(text);
    for (w, cg) in [("think", "a"), ("paced", "b")] {
        assert_eq!(r.workloads[w].ops, 1, "{w}");
        assert_eq!(
            r.cgroups[cg]["memory"]["current"].as_u64(),
            Some(0),
            "{w}'s cgroup"
        );
    }
    for w in ["after-think", "after-paced"] {
        assert_eq!(r.workloads[w].ops, 500, "{w}");
    }
    // Left: the two waiting workloads' stacks.
    assert_eq!(r.vm("nr_kernel_stack"), 2 * 16);
}
