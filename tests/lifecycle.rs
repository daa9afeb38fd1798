//! A workload's process from fork to exit: when it is forked (and charged for it),
//! and that it exits (and frees what exit frees) when its `stop` passes, whatever it
//! is doing then.

use reclaimsim::report::results::Results;

mod common;

fn run(text: &str) -> Results {
    common::run_checked(text, &[])
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
