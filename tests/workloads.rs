//! The benchmark-shaped workloads against values worked out by hand, in cases without
//! memory pressure (so every figure follows from the costs alone), plus one direction
//! each under pressure. Default costs: access 100 ns, minor fault 1 us, syscall 500 ns,
//! page copy 400 ns, unmap/free 300 ns a page.

use reclaimsim::report::results::Results;

mod common;

fn run(text: &str) -> Results {
    common::run_checked(text, &[])
}

fn close(got: f64, want: f64, tolerance: f64) -> bool {
    (got - want).abs() <= tolerance * want
}

/// Latency percentiles come from an HDR histogram with 3 significant digits: a value is
/// reported as the top of its bucket, within 0.1% of the true value.
fn hdr(got: u64, want: u64) -> bool {
    got >= want && close(got as f64, want as f64, 0.001)
}

#[test]
fn kv_at_a_fixed_think_time() {
    // 1000 keys of 4 KiB: one page per value. A request costs request_time 2 us plus one
    // page access (100 ns) = 2.1 us; then the client thinks 8 us. One request per
    // 10.1 us: 1e9 / 10100 = 99009.9 requests/s. (The first touch of each key adds a
    // 1 us fault, 1000 times in 2 s: 0.05%.)
    let r = run(r#"
[run]
duration = "2s"
[machine]
memory = "1G"
[[workload]]
name = "kv"
kind = "kv"
keys = 1000
value_size = "4K"
request_time = "2us"
think_time = "8us"
pattern = "zipf"
set_ratio = 0.1
"#);
    let w = &r.workloads["kv"];
    assert!(close(w.throughput, 99_009.9, 0.001), "{}", w.throughput);
    assert!(hdr(w.latency_ns.p50, 2100), "{}", w.latency_ns.p50);
    // Each request moves one value: bytes/s = 4096 × requests/s.
    assert!(close(w.bytes_per_sec, 4096.0 * w.throughput, 1e-9));
}

#[test]
fn kv_pipelined_requests_queue_behind_each_other() {
    // pipeline 4: a batch is 4 × 2.1 us = 8.4 us, then 8 us of think time: 4 requests
    // per 16.4 us = 243902.4/s. Latency runs from the batch's start: 2.1, 4.2, 6.3 and
    // 8.4 us: the mean of the four is 5.25 us, the fastest 2.1 us, and the 90th
    // percentile 8.4 us (the rare first-touch faults, 1000 in 2 s, add 1.1 us to a few).
    let r = run(r#"
[run]
duration = "2s"
[machine]
memory = "1G"
[[workload]]
name = "kv"
kind = "kv"
keys = 1000
value_size = "4K"
request_time = "2us"
think_time = "8us"
pipeline = 4
"#);
    let w = &r.workloads["kv"];
    assert!(close(w.throughput, 243_902.4, 0.002), "{}", w.throughput);
    assert_eq!(w.latency_ns.min, 2100);
    assert!(
        close(w.latency_ns.mean, 5250.0, 0.01),
        "{}",
        w.latency_ns.mean
    );
    assert!(hdr(w.latency_ns.p90, 8400), "{}", w.latency_ns.p90);
}

#[test]
fn fio_sequential_read_from_cache() {
    // One job reads a 64 MiB file in 64 KiB blocks. The first pass (during the 1 s
    // ramp) brings it into the page cache; measured reads then cost one syscall (500 ns)
    // plus 16 page copies (16 × 400 ns): 6.9 us, so 1e9 / 6900 = 144927.5 IOPS, and
    // bandwidth is bs × IOPS.
    let r = run(r#"
[run]
duration = "4s"
[machine]
memory = "1G"
[[workload]]
name = "fio"
kind = "fio"
rw = "read"
bs = "64K"
size = "64M"
ramp_time = "1s"
runtime = "2s"
"#);
    let w = &r.workloads["fio"];
    assert!(close(w.throughput, 144_927.5, 0.001), "{}", w.throughput);
    assert!(close(w.bytes_per_sec, 65_536.0 * w.throughput, 1e-9));
    assert!(hdr(w.latency_ns.p50, 6900), "{}", w.latency_ns.p50);
    // runtime bounds the measured window: about 2 s of ops, none after 3 s.
    assert!(close(w.ops as f64, 2.0 * 144_927.5, 0.001), "{}", w.ops);
}

#[test]
fn fio_random_write_dirties_and_numjobs_run_in_parallel() {
    // Two jobs, 4 KiB random writes to their own 16 MiB files: each write is a syscall
    // plus one page copy, 900 ns, so each job does 1e9/900 = 1111111 IOPS and the
    // workload 2222222. The random map visits every block once per pass: after one
    // second each job has passed over its 4096 blocks hundreds of times, dirtying all
    // 2 × 4096 pages.
    let r = run(r#"
[run]
duration = "1s"
[machine]
memory = "1G"
nr_cpus = 2
[[workload]]
name = "fio"
kind = "fio"
rw = "randwrite"
bs = "4K"
size = "16M"
numjobs = 2
"#);
    let w = &r.workloads["fio"];
    assert!(close(w.throughput, 2_222_222.2, 0.002), "{}", w.throughput);
    assert_eq!(r.vm("nr_dirtied"), 8192);
    assert_eq!(
        r.tasks.len(),
        5,
        "fio/0, fio/1, kswapd0, flusher, kcompactd0"
    );
}

#[test]
fn mmap_latency_faults_in_each_mapping() {
    // A 1 MiB mapping is 256 pages; each is a zero-fill fault (1 us) and a write
    // (100 ns): 281.6 us to fault it in, the reported latency. Unmapping frees 256
    // pages at 300 ns: 76.8 us more. One mapping per 358.4 us = 2790.2 mappings/s.
    let r = run(r#"
[run]
duration = "2s"
[machine]
memory = "1G"
[[workload]]
name = "stutter"
kind = "mmap-latency"
size = "1M"
"#);
    let w = &r.workloads["stutter"];
    assert!(hdr(w.latency_ns.p50, 281_600), "{}", w.latency_ns.p50);
    assert!(hdr(w.latency_ns.max, 281_600), "{}", w.latency_ns.max);
    assert!(close(w.throughput, 2790.2, 0.001), "{}", w.throughput);
    // Every completed mapping faulted 256 pages; one more may be part-way at the end.
    let faults = r.vm("pgfault");
    assert!(
        faults >= 256 * w.ops && faults < 256 * (w.ops + 1),
        "{faults} for {} ops",
        w.ops
    );
    assert!(r.vm("nr_free_pages") > 250_000, "mappings are freed");
}

/// `ops = N` counts whole mmap-latency operations: a 1 MiB mapping takes 281.6 us to
/// fault in (256 faults of 1.1 us) and 76.8 us to unmap, so each operation spans
/// several 100 us slices and is one operation all the same. `ops = 1`: one operation,
/// its 256 faults, nothing more. `ops = 5` on two threads: each thread takes the next
/// operation while any are left and finishes the one it began, 5 and 1280 faults.
#[test]
fn mmap_latency_ops_counts_operations_that_span_slices() {
    let text = r#"
[run]
duration = "2s"
stop_when_done = true
[machine]
memory = "1G"
[[workload]]
name = "stutter"
kind = "mmap-latency"
size = "1M"
ops = 1
"#;
    let r = run(text);
    let w = &r.workloads["stutter"];
    assert_eq!(w.ops, 1);
    assert_eq!(r.vm("pgfault"), 256);
    assert!(hdr(w.latency_ns.max, 281_600), "{}", w.latency_ns.max);
    let r = run(&text.replace("ops = 1", "ops = 5\nthreads = 2"));
    assert_eq!(r.workloads["stutter"].ops, 5);
    assert_eq!(r.vm("pgfault"), 5 * 256);
}

/// memory.high's penalty sleeps after a fault, on the way back to user space
/// (`mem_cgroup_handle_over_high`), and the program's next store comes after it: a
/// 31 MiB mapping (7936 pages) under memory.high = 30M (7680 pages), no swap, goes
/// over high, and reclaim can free nothing (every page is anon). Once the overage is
/// ~86 pages, a batch of 64 over high costs more than HZ/100 jiffies, so the faults
/// sleep (past 10 ms each) between batches; the operation still takes all 7936
/// faults, then unmaps, which leaves the cgroup its process's kernel memory: slab
/// pages for mm_struct (1), sighand_cache (1) and the task_struct (3), the others
/// fitting in the objcg stock, and one 16 KiB stack: 9 pages, 36864 bytes. The
/// thread then thinks past the run's end. With memory.high = max the same faults and
/// no sleep: 7936 × 1.1 us.
#[test]
fn mmap_latency_over_memory_high_finishes_its_mapping_after_the_sleeps() {
    let text = r#"
[run]
duration = "1s"
[machine]
memory = "1G"
[[cgroup]]
path = "lat"
memory.high = "30M"
[[workload]]
name = "maps"
kind = "mmap-latency"
size = "31M"
cgroup = "lat"
think_time = "10s"
"#;
    let faults_ns = 7936 * 1_100;
    let r = run(text);
    let w = &r.workloads["maps"];
    assert_eq!(w.ops, 1);
    assert_eq!(r.vm("pgfault"), 7936);
    assert!(
        w.latency_ns.max > faults_ns + 10_000_000,
        "{}",
        w.latency_ns.max
    );
    let m = &r.cgroups["lat"]["memory"];
    assert!(m["events"]["high"].as_u64().unwrap() > 0);
    assert_eq!(m["current"].as_u64(), Some(9 * 4096));
    let r = run(&text.replace("memory.high = \"30M\"", "memory.high = \"max\""));
    let w = &r.workloads["maps"];
    assert_eq!(w.ops, 1);
    assert_eq!(r.vm("pgfault"), 7936);
    assert!(hdr(w.latency_ns.max, faults_ns), "{}", w.latency_ns.max);
    assert_eq!(
        r.cgroups["lat"]["memory"]["current"].as_u64(),
        Some(9 * 4096)
    );
}

#[test]
fn mmap_latency_grows_under_reclaim() {
    // The same worker beside a hog that fills memory with zram swap: faults now wait
    // for reclaim, so mappings take longer than the 281.6 us of an idle machine.
    let r = run(r#"
[run]
duration = "3s"
[machine]
memory = "256M"
nr_cpus = 2
[machine.swap]
type = "zram"
size = "512M"
[[workload]]
name = "stutter"
kind = "mmap-latency"
size = "4M"
[[workload]]
name = "hog"
kind = "anon-hog"
size = "300M"
"#);
    let w = &r.workloads["stutter"];
    assert!(w.latency_ns.max > 4 * 281_600, "max {}", w.latency_ns.max);
    assert!(r.vm("pswpout") > 0);
}

#[test]
fn anon_hog_grows_step_by_step() {
    // 16 MiB, growing by 16 MiB every second up to 48 MiB: in a 3 s run it reaches
    // 3 × 4096 pages, each first-touched once (no pressure), so exactly 12288 faults,
    // and every access is a write (stress --vm-keep re-dirties).
    let r = run(r#"
[run]
duration = "3s"
[machine]
memory = "1G"
[[workload]]
name = "hog"
kind = "anon-hog"
size = "16M"
grow_by = "16M"
grow_every = "1s"
max_size = "48M"
"#);
    assert_eq!(r.vm("pgfault"), 12_288);
    // 3 s at 100 ns per access, less 12288 faults at 1 us: 30 M − 122880 accesses of
    // time, plus the faulting accesses themselves.
    let w = &r.workloads["hog"];
    assert!(
        close(w.ops as f64, 30_000_000.0 - 122_880.0, 0.001),
        "{}",
        w.ops
    );
}

#[test]
fn phases_runtime_and_slowdown() {
    // Phase 1: 0.5 s of work (5 M accesses) uniformly over 64 MiB; phase 2: 1 s
    // (10 M accesses) over the first 16 MiB, zipf. Unconstrained, the 16384 pages of
    // phase 1 each fault once (1 us) and phase 2 finds its pages resident:
    // runtime = 15 M × 100 ns + 16384 × 1 us = 1.516384 s, and 3 ns more: kcompactd's
    // proactive checks at 0.5, 1 and 1.5 s take the one CPU for 1 ns each.
    let text = r#"
[run]
duration = "4s"
[machine]
memory = "1G"
[machine.swap]
type = "zram"
size = "1G"
[[workload]]
name = "prog"
kind = "phases"
[[workload.phase]]
duration = "500ms"
size = "64M"
pattern = "uniform"
[[workload.phase]]
duration = "1s"
size = "16M"
pattern = "zipf"
skew = 0.9
"#;
    let r = run(text);
    assert_eq!(r.workloads["prog"].runtime_ns, Some(1_516_384_003));
    assert_eq!(r.workloads["prog"].ops, 15_000_000);
    // On a machine too small for phase 1 it refaults and takes longer (over 4 s: give
    // it the time to finish).
    let r = run(&text
        .replace("memory = \"1G\"", "memory = \"64M\"")
        .replace("duration = \"4s\"", "duration = \"10s\""));
    let t = r.workloads["prog"].runtime_ns.expect("finishes");
    assert!(t > 1_516_384_000, "{t}");
    assert!(r.vm("pswpin") > 0);
}

/// Runs a scenario on a thread and fails (rather than hangs) if it does not finish.
fn run_or_hang(sc: reclaimsim::scenario::Scenario) -> Results {
    use reclaimsim::sim::{RunOptions, Simulation};
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let r = reclaimsim::report::run(
            Simulation::new(sc),
            RunOptions {
                check: true,
                ..Default::default()
            },
        );
        let _ = tx.send(r);
    });
    rx.recv_timeout(std::time::Duration::from_secs(120))
        .expect("the run loops at one virtual instant")
        .unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn least_costs_still_advance_time() {
    // Every cost at the least validation allows (1ns). 1 MiB = 256 pages: after 256
    // zero-fill faults (2ns each with the access) every access hits, at 1ns each, so
    // 10ms of one task on one CPU does 10^7 accesses less the few faults: between
    // 0.99e7 and 1e7 operations, never more than one per nanosecond.
    let mut text = String::from(
        r#"
[run]
duration = "10ms"
sample_interval = "1ms"
[machine]
memory = "256M"
[costs]
"#,
    );
    for key in [
        "access",
        "minor_fault",
        "major_fault",
        "scan_page",
        "reclaim_page",
        "syscall",
        "copy_page",
    ] {
        text.push_str(&format!("{key} = \"1ns\"\n"));
    }
    text.push_str("[[workload]]\nname = \"a\"\nkind = \"anon\"\nsize = \"1M\"\n");
    let sc = reclaimsim::scenario::parse_str(&text, "t.toml", &[]).unwrap();
    let ops = run_or_hang(sc).workloads["a"].ops;
    assert!((9_900_000..=10_000_000).contains(&ops), "{ops}");
}

#[test]
fn zero_costs_past_validation_still_advance_time() {
    // The engine's own guard, for a path validation might miss: every cost (and the
    // think time) forced to 0 after loading. Each access still takes 1ns, each
    // completed operation at least 1ns, and kswapd under pressure never reruns at the
    // instant it started: the run ends, and no workload does more than one operation
    // per nanosecond of its CPU.
    let text = r#"
[run]
duration = "20ms"
sample_interval = "1ms"
[machine]
memory = "64M"
nr_cpus = 2
swap = { type = "zram", size = "128M" }
[[workload]]
name = "a"
kind = "anon"
size = "1M"
think_time = "1us"
[[workload]]
name = "f"
kind = "file-read"
nr_files = 1
file_size = "1M"
[[workload]]
name = "hog"
kind = "anon-hog"
size = "72M"
"#;
    use reclaimsim::scenario::units::Nanos;
    let mut sc = reclaimsim::scenario::parse_str(text, "t.toml", &[]).unwrap();
    sc.costs = reclaimsim::scenario::Costs {
        access: Nanos(0),
        minor_fault: Nanos(0),
        major_fault: Nanos(0),
        scan_page: Nanos(0),
        reclaim_page: Nanos(0),
        rmap_walk: Nanos(0),
        syscall: Nanos(0),
        copy_page: Nanos(0),
        walk_pte: Nanos(0),
        walk_young: Nanos(0),
        damon_check: Nanos(0),
        shrink_object: Nanos(0),
        tlb_flush: Nanos(0),
        tlb_ipi: Nanos(0),
    };
    sc.workloads[0].think_time = Some(Nanos(0));
    let r = run_or_hang(sc);
    for name in ["a", "f", "hog"] {
        let ops = r.workloads[name].ops;
        assert!(ops > 0 && ops <= 20_000_000, "{name}: {ops}");
    }
}

/// A slab workload: 256-byte objects (16 to an order-0 slab with 4 CPUs), 1000 a
/// second, each freed after exactly 1 s. By hand, after 5 s the objects of the last
/// second are live, ~1000, packed in allocation order: 63 slabs (62.5 full, the oldest
/// half emptied), give or take one. Beside them, the workload's process holds the
/// first slab of each of fork's caches on 4 CPUs (min_objects 16): task_struct,
/// mm_struct, signal_cache, sighand_cache 8 pages each, files_cache 4 (no mapping, no
/// vm_area_struct): 36 pages. Those, at fork, took the largest free movable block,
/// order 10: two pageblocks turned unmovable before the run, and the workload's slabs
/// fit in them: no mm_page_alloc_extfrag during the run.
#[test]
fn slab_objects_live_their_lifetime_in_unmovable_pageblocks() {
    let text = r#"
[run]
duration = "5s"
[machine]
memory = "256M"
nr_cpus = 4
[[workload]]
name = "dentries"
kind = "slab"
object_size = "256"
lifetime = "1s"
lifetime_dist = "fixed"
rate = 1000
"#;
    let r = common::run_checked(text, &[]);
    let slab = r.vmstat["nr_slab_unreclaimable"];
    assert!((36 + 62..=36 + 65).contains(&slab), "{slab}");
    assert_eq!(r.vmstat["nr_slab_reclaimable"], 0);
    let ops = r.workloads["dentries"].ops;
    assert!((4990..=5001).contains(&ops), "{ops}");

    // The same run traced and viewed: one fallback, two unmovable pageblocks.
    let sc = reclaimsim::scenario::parse_str(text, "s.toml", &[]).unwrap();
    let mut sim = reclaimsim::sim::Simulation::new(sc);
    sim.enable_trace(
        reclaimsim::stats::trace::Tracer::parse("mm_page_alloc_extfrag", 100).unwrap(),
    );
    let out = reclaimsim::report::run_with_series(
        sim,
        reclaimsim::sim::RunOptions {
            proc_files: vec![reclaimsim::mm::vmstat::ProcFile::Pagetypeinfo],
            ..Default::default()
        },
    )
    .unwrap();
    let trace = out.trace.unwrap();
    assert_eq!(
        trace.matches("mm_page_alloc_extfrag:").count(),
        0,
        "{trace}"
    );
    let pti = &out.proc_files[0].1;
    let last = &pti[pti.rfind("# t=").unwrap()..];
    let blocks = last
        .lines()
        .find(|l| l.starts_with("Node 0, zone    DMA32 "))
        .unwrap();
    let unmovable: u64 = blocks.split_whitespace().nth(4).unwrap().parse().unwrap();
    assert_eq!(unmovable, 2, "{last}");
}

/// Reclaimable caches count as nr_slab_reclaimable; with exponential lifetimes of the
/// same mean about as many objects are live (rate × mean = 1000), and SLUB's reuse of
/// partial slabs keeps them about as densely packed (63 slabs, give or take a few).
/// The process's own objects are unreclaimable: 36 pages (see above).
#[test]
fn slab_reclaimable_caches_and_exponential_lifetimes() {
    let text = "[run]\nduration = \"5s\"\n[machine]\nmemory = \"256M\"\nnr_cpus = 4\n\
                [[workload]]\nname = \"s\"\nkind = \"slab\"\nobject_size = \"256\"\n\
                lifetime = \"1s\"\nrate = 1000\nslab_type = \"reclaimable\"\n";
    let r = common::run_checked(text, &[]);
    let slab = r.vmstat["nr_slab_reclaimable"];
    assert!((58..=75).contains(&slab), "{slab}");
    assert_eq!(r.vmstat["nr_slab_unreclaimable"], 36);
}

#[test]
fn slab_configuration_errors_name_the_key() {
    let base = "[machine]\nmemory = \"256M\"\n[[workload]]\nname = \"s\"\nkind = \"slab\"\n";
    let err = |extra: &str| {
        reclaimsim::scenario::parse_str(&format!("{base}{extra}"), "s.toml", &[])
            .unwrap_err()
            .to_string()
    };
    let e = err("lifetime = \"1s\"\nrate = 10\n");
    assert!(e.contains("workload[0].object_size: required"), "{e}");
    let e = err("object_size = \"64\"\nrate = 10\n");
    assert!(e.contains("workload[0].lifetime: required"), "{e}");
    let e = err("object_size = \"64\"\nlifetime = \"1s\"\n");
    assert!(e.contains("workload[0].rate: required"), "{e}");
    let e = err("object_size = \"8M\"\nlifetime = \"1s\"\nrate = 10\n");
    assert!(
        e.contains("s.toml:6: workload[0].object_size: must be 1 byte to 4M"),
        "{e}"
    );
    let e = err("object_size = \"64\"\nlifetime = \"1s\"\nrate = 10\nslab_type = \"movable\"\n");
    assert!(e.contains("workload[0].slab_type"), "{e}");
    let e = err("object_size = \"64\"\nlifetime = \"1s\"\nrate = 10\nsize = \"1M\"\n");
    assert!(e.contains("workload[0].size"), "{e}");
}

/// highalloc: order-9 blocks with GFP_NOWAIT|__GFP_HIGH on a fresh 1 GiB machine
/// (262144 pages, one DMA32 zone, MIN 1024). By hand: __GFP_HIGH halves MIN to 512,
/// and an order-9 request needs free − 511 > 512, i.e. free ≥ 1024. The process holds
/// 30 pages from the start (a 4-page stack; on one CPU the first slabs of fork's
/// caches: task_struct 8, mm_struct 4, signal_cache 4, sighand_cache 8, files_cache
/// 2), so with n blocks taken free = 262114 − 512 n, and attempts succeed while
/// n ≤ 509: 510 of 600. That is v4.5's per-CPU lists, which take order 0 only (none of
/// these). Today's (v6.7) take orders 1 to 3 and 9 too, and refill them in batches
/// of max(63 >> order, 2) blocks: the stack, mm_struct and signal slabs (order 2) take
/// a refill of 15 (60 pages), task_struct and sighand (order 3) one of 7 (56), files
/// (order 1) one of 31 (62): 178 pages out of the buddy. An order-9 attempt that
/// finds the THP list empty refills it with 2 blocks, so attempt j checks the
/// watermark with j − 1 (odd j) or j (even j) blocks taken: free = 261966 − 512 ×
/// that ≥ 1024 lets odd j ≤ 510 and even j ≤ 508 through. Attempt 509 takes blocks
/// 509 and 510; 510 then finds free 846 and fails, its block left on the list: 509.
/// Without __GFP_HIGH (free ≥ 1536): odd j ≤ 509, even j ≤ 508, again 509.
#[test]
fn highalloc_takes_order_9_blocks_down_to_the_watermark() {
    let text = r#"
[run]
duration = "2s"
[machine]
memory = "1G"
[[workload]]
name = "thp"
kind = "highalloc"
order = 9
gfp = "GFP_NOWAIT|__GFP_HIGH|__GFP_COMP"
rate = 1000
count = 600
"#;
    let v4 = "kernel.pcp=\"v4.5\"";
    let r = common::run_checked(text, &[v4]);
    let w = &r.workloads["thp"];
    assert_eq!(w.ops, 600);
    assert_eq!(w.alloc_success, Some(510));
    // Without __GFP_HIGH, MIN stays 1024: free − 511 > 1024, free ≥ 1536, n ≤ 508:
    // 509 blocks.
    let no_high = "workload.0.gfp=\"GFP_NOWAIT|__GFP_COMP\"";
    let r = common::run_checked(text, &[v4, no_high]);
    assert_eq!(r.workloads["thp"].alloc_success, Some(509));
    // Today's lists.
    let r = common::run_checked(text, &[]);
    assert_eq!(r.workloads["thp"].alloc_success, Some(509));
    let r = common::run_checked(text, &[no_high]);
    assert_eq!(r.workloads["thp"].alloc_success, Some(509));
    // A bad flag names the key.
    let bad = ["workload.0.gfp=\"GFP_NOWAIT|__GFP_THISNOT\"".to_string()];
    let e = reclaimsim::scenario::parse_str(text, "s.toml", &bad)
        .unwrap_err()
        .to_string();
    assert!(e.contains(".gfp: unknown GFP flag `__GFP_THISNOT`"), "{e}");
}

/// `start_after`: a paced workload waiting for another starts when the other's threads
/// are done. `first` issues until its `stop` at 1 s (its two threads exit at their next
/// step after it); `second`, 1000 ops/s on one thread, then runs the last second of the
/// 2 s run: 1000 operations (the first at 1 s, the last before 2 s) where on its own
/// it would do 2000. `third` waits for `second`, which never finishes: it never starts.
#[test]
fn start_after_waits_for_the_other_workload_to_end() {
    let text = r#"
[run]
duration = "2s"
[machine]
memory = "256M"
[[workload]]
name = "first"
kind = "anon"
size = "4M"
threads = 2
stop = "1s"
[[workload]]
name = "second"
kind = "anon"
size = "4M"
rate = 1000
start_after = "first"
[[workload]]
name = "third"
kind = "anon"
size = "4M"
start_after = "second"
"#;
    let r = run(text);
    let ops = r.workloads["second"].ops;
    assert!((999..=1001).contains(&ops), "{ops}");
    assert_eq!(r.workloads["third"].ops, 0);
    let alone = run(&text.replace("start_after = \"first\"\n", ""));
    assert!((1999..=2001).contains(&alone.workloads["second"].ops));
    // Names that do not resolve, or wait in a circle, are refused at their key.
    for (bad, part) in [
        ("start_after = \"first\"", "start_after = \"nobody\""),
        ("start_after = \"first\"", "start_after = \"third\""),
    ] {
        let sc = reclaimsim::scenario::parse_str(&text.replace(bad, part), "t.toml", &[]);
        let e = sc.expect_err("refused").to_string();
        assert!(e.contains("workload[1].start_after"), "{e}");
    }
}

/// anon `init`: every page written once in order before the pattern. 64 MiB (16384
/// pages) on two threads, each faulting its half in (1 us a fault, 100 ns the access:
/// 9 ms for 8192 pages), then zipf: every page faulted exactly once and none again
/// (it all fits). Without it, 50 ms of zipf 0.99 over 16384 pages leaves part of the
/// range untouched.
#[test]
fn anon_init_writes_every_page_first() {
    let text = r#"
[run]
duration = "50ms"
sample_interval = "10ms"
[machine]
memory = "512M"
[[workload]]
name = "svc"
kind = "anon"
size = "64M"
pattern = "zipf"
skew = 0.99
threads = 2
init = true
"#;
    let r = run(text);
    assert_eq!(r.vm("pgfault"), 16384);
    assert_eq!(r.vm("nr_inactive_anon") + r.vm("nr_active_anon"), 16384);
    let without = run(&text.replace("init = true\n", ""));
    assert!(without.vm("pgfault") < 16384, "{}", without.vm("pgfault"));
    // Only anon takes it.
    let bad = text
        .replace("kind = \"anon\"", "kind = \"anon-hog\"")
        .replace("pattern = \"zipf\"\nskew = 0.99\n", "");
    let e = reclaimsim::scenario::parse_str(&bad, "t.toml", &[])
        .expect_err("refused")
        .to_string();
    assert!(e.contains("workload[0].init"), "{e}");
}

/// `ops = N`: exactly N operations over all threads, whatever the kind (a hit loop's
/// accesses, reads, requests, I/Os), paced or not; then the workload has finished,
/// which `stop_when_done` ends the run on.
#[test]
fn ops_stops_after_exactly_that_many() {
    let text = r#"
[run]
duration = "3s"
stop_when_done = true
[machine]
memory = "512M"
[[workload]]
name = "a"
kind = "anon"
size = "64M"
pattern = "zipf"
threads = 3
ops = 1000003
[[workload]]
name = "paced"
kind = "anon"
size = "4M"
rate = 10000
threads = 2
ops = 999
[[workload]]
name = "f"
kind = "file-read"
nr_files = 2
file_size = "64M"
io_size = "16K"
pattern = "uniform"
threads = 2
ops = 777
[[workload]]
name = "kv"
kind = "kv"
keys = 10000
value_size = "2000"
pipeline = 8
threads = 2
ops = 12345
[[workload]]
name = "fio"
kind = "fio"
rw = "randread"
size = "32M"
numjobs = 2
ops = 4321
"#;
    let r = run(text);
    for (w, n) in [
        ("a", 1000003),
        ("paced", 999),
        ("f", 777),
        ("kv", 12345),
        ("fio", 4321),
    ] {
        assert_eq!(r.workloads[w].ops, n, "{w}");
    }
    // The paced one is the last to finish: 999 ops at 2 × 10000/s take ~50 ms, so the
    // run ends long before its 3 s.
    assert!(r.duration_ns < 1_000_000_000, "{}", r.duration_ns);
    let e = reclaimsim::scenario::parse_str(&text.replace("ops = 777", "ops = 0"), "t.toml", &[])
        .expect_err("refused")
        .to_string();
    assert!(e.contains("workload[2].ops"), "{e}");
}

/// hotcold inside `phases`, its phase change an access count into the step. 4 MiB
/// (1024 pages), the first quarter hot (256 pages) taking 99.9 % of 40 000 accesses
/// (4 ms at 100 ns): all 256 hot pages are touched (coupon collector: ~1 400 draws
/// suffice), the cold 768 see ~40 accesses. With the change after 20 000 accesses the
/// hot set moves to pages 512..768 and faults those 256 in too: 512 faults plus the
/// few cold ones, against 256 plus the few without it.
#[test]
fn hotcold_in_phases_moves_its_hot_set_after_an_access_count() {
    let text = r#"
[run]
duration = "1s"
[machine]
memory = "256M"
[[workload]]
name = "p"
kind = "phases"
[[workload.phase]]
duration = "4ms"
size = "4M"
pattern = "hotcold"
hot_fraction = 0.25
hot_probability = 0.999
phase_change = 20000
"#;
    let moved = run(text).vm("pgfault");
    assert!((512..=580).contains(&moved), "{moved}");
    let still = run(&text.replace("phase_change = 20000\n", "")).vm("pgfault");
    assert!((256..=320).contains(&still), "{still}");
    let e = reclaimsim::scenario::parse_str(
        &text.replace("pattern = \"hotcold\"", "pattern = \"uniform\""),
        "t.toml",
        &[],
    )
    .expect_err("refused")
    .to_string();
    assert!(e.contains("phase[0].hot_fraction"), "{e}");
}
