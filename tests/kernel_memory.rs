//! Unmovable kernel memory a workload declares: page tables and kernel stacks.

mod common;

const HEAP: &str = r#"
[run]
duration = "1s"
[machine]
memory = "1G"
[[workload]]
name = "heap"
kind = "anon"
size = "64M"
pattern = "sequential"
page_tables = true
kernel_stacks = true
threads = 4
"#;

/// 64 MiB touched: a page-table page per 2 MiB, 32; a THP fault deposits one too.
/// Four threads: four 16 KiB stacks, nr_kernel_stack 64 (KiB). Both are unmovable:
/// the first such allocation on a fresh machine takes a movable pageblock over.
#[test]
fn page_tables_and_stacks_are_counted_and_unmovable() {
    let r = common::run_checked(HEAP, &[]);
    assert_eq!(r.vm("nr_page_table_pages"), 32);
    assert_eq!(r.vm("nr_kernel_stack"), 64);
    let thp = common::run_checked(HEAP, &["kernel.transparent_hugepage.enabled=\"always\""]);
    assert_eq!(thp.vm("nr_page_table_pages"), 32);
    let off = common::run_checked(
        HEAP,
        &[
            "workload.0.page_tables=false",
            "workload.0.kernel_stacks=false",
        ],
    );
    assert_eq!(
        (off.vm("nr_page_table_pages"), off.vm("nr_kernel_stack")),
        (0, 0)
    );
    // Unmovable: their first allocation falls back to a movable block and takes it
    // over (mm_page_alloc_extfrag with alloc_migratetype=0); without them nothing
    // falls back.
    let extfrag = |sets: &[&str]| {
        use reclaimsim::sim::{RunOptions, Simulation};
        let sc = reclaimsim::scenario::parse_str(
            HEAP,
            "t.toml",
            &sets.iter().map(|s| s.to_string()).collect::<Vec<_>>(),
        )
        .unwrap();
        let mut sim = Simulation::new(sc);
        sim.enable_trace(
            reclaimsim::stats::trace::Tracer::parse("mm_page_alloc_extfrag", 1000).unwrap(),
        );
        let t = sim
            .run_with_series(RunOptions::default())
            .unwrap()
            .trace
            .unwrap();
        t.lines()
            .filter(|l| l.contains("mm_page_alloc_extfrag:") && l.contains("alloc_migratetype=0"))
            .count()
    };
    // (Kernel stacks are allocated before tracing starts: look at page tables.)
    assert!(extfrag(&["workload.0.kernel_stacks=false"]) > 0);
    assert_eq!(
        extfrag(&[
            "workload.0.page_tables=false",
            "workload.0.kernel_stacks=false"
        ]),
        0
    );
}

/// mmap-latency maps and unmaps: its page tables go with each unmap, and an OOM kill
/// frees a victim's page tables and stacks (the checker counts every held page).
#[test]
fn page_tables_go_with_the_memory() {
    let text = r#"
[run]
duration = "2s"
[machine]
memory = "256M"
[[workload]]
name = "maps"
kind = "mmap-latency"
size = "8M"
page_tables = true
[[workload]]
name = "big"
kind = "anon"
size = "400M"
pattern = "sequential"
page_tables = true
kernel_stacks = true
"#;
    let r = common::run_checked(text, &["kernel.reclaim_throttle=\"throttle-current\""]);
    assert_eq!(r.vm("oom_kill"), 1);
    assert_eq!(r.events[0].workload, "big");
    // Left: at most one live 8 MiB mapping of maps (4 tables); big's are freed.
    assert!(
        r.vm("nr_page_table_pages") <= 4,
        "{}",
        r.vm("nr_page_table_pages")
    );
    assert_eq!(r.vm("nr_kernel_stack"), 0);
}

/// One page table per 2 MiB range, however the faults go: a 600 MiB heap on a 512 MiB
/// machine swapping to disk touches all 300 ranges while faults sleep in reclaim (a
/// full device queue, throttling) and are retried after the sleep, and with THP some
/// ranges fault as huge pages (their deposited table) and some fall back.
#[test]
fn one_page_table_per_range_under_pressure() {
    let text = r#"
[run]
duration = "3s"
[machine]
memory = "512M"
[machine.swap]
type = "disk"
size = "1G"
[[workload]]
name = "heap"
kind = "anon"
size = "600M"
pattern = "uniform"
page_tables = true
threads = 4
"#;
    for thp in ["never", "always"] {
        let set = format!("kernel.transparent_hugepage.enabled=\"{thp}\"");
        let r = common::run_checked(text, &[&set]);
        assert!(
            r.vm("pgscan_direct") > 0,
            "{thp}: faults reclaimed directly"
        );
        assert_eq!(r.vm("nr_page_table_pages"), 300, "{thp}");
    }
}
