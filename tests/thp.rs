//! Transparent huge pages: the THP fault, its fallback by defrag mode, and the split
//! when reclaim takes one.

mod common;

const HEAP: &str = r#"
[run]
duration = "1s"
[machine]
memory = "1G"
[kernel]
transparent_hugepage.enabled = "always"
[[workload]]
name = "heap"
kind = "anon"
size = "64M"
pattern = "sequential"
"#;

/// 64 MiB touched in order on a fresh machine: with THP each 2 MiB range faults once
/// and maps 512 pages (32 faults); without, 16,384 faults. A 65 MiB heap has a last
/// partial range of 256 pages, which base pages fill: 32 + 256 faults.
#[test]
fn a_thp_fault_maps_512_pages() {
    let r = common::run_checked(HEAP, &[]);
    assert_eq!(r.vm("thp_fault_alloc"), 32);
    assert_eq!(r.vm("pgfault"), 32);
    assert_eq!(r.vm("nr_inactive_anon") + r.vm("nr_active_anon"), 16_384);
    let r = common::run_checked(HEAP, &["kernel.transparent_hugepage.enabled=\"never\""]);
    assert_eq!((r.vm("thp_fault_alloc"), r.vm("pgfault")), (0, 16_384));
    // madvise: only memory that asked for it.
    let madvise = ["kernel.transparent_hugepage.enabled=\"madvise\""];
    assert_eq!(common::run_checked(HEAP, &madvise).vm("pgfault"), 16_384);
    let r = common::run_checked(HEAP, &[madvise[0], "workload.0.madvise_hugepage=true"]);
    assert_eq!(r.vm("thp_fault_alloc"), 32);
    let r = common::run_checked(&HEAP.replace("64M", "65M"), &[]);
    assert_eq!((r.vm("thp_fault_alloc"), r.vm("pgfault")), (32, 32 + 256));
}

/// Memory full of page cache when a 128 MiB heap starts: no free 2 MiB block. The
/// defrag mode decides: `never` and (for memory not madvised) `madvise` fall back
/// to base pages at once; `defer` wakes kswapd and kcompactd and gets some THPs
/// later; for madvised memory `madvise` reclaims and compacts directly and gets some
/// (how many depends on how the cache lies in memory: with readahead's runs, direct
/// compaction soon fails and is deferred). Non-madvised memory under `always` carries __GFP_NORETRY: with
/// compaction skipped for lack of free memory it gives up without reclaim.
#[test]
fn the_defrag_mode_decides_how_hard_a_thp_fault_tries() {
    let text = r#"
[run]
duration = "4s"
[machine]
memory = "512M"
[kernel]
transparent_hugepage.enabled = "always"
# When memory fills, the cache's readahead falls back into the pageblocks fork's
# objects took, and the watermark boost that follows sends it into direct reclaim:
# off, so only the heap's THP faults can reclaim directly. So are v6.7's per-CPU
# refills, which grow to 63 << 5 pages while the cache only allocates and jump from
# above the low watermark to below min (181 pages apart here): v5.14's are 63.
vm.watermark_boost_factor = 0
pcp = "v5.14"
[[workload]]
name = "cache"
kind = "file-read"
nr_files = 2
file_size = "400M"
pattern = "sequential"
stop = "2s"
[[workload]]
name = "heap"
kind = "anon"
size = "128M"
pattern = "sequential"
start = "2500ms"
"#;
    // The order-9 direct reclaims (a THP fault's), from the tracepoint: base-page
    // allocations may reclaim directly too when the zone's free-page counter, held
    // off the exact count by the CPUs' vmstat diffs, lets them run below min.
    let run = |defrag: &str, madvised: bool| {
        use reclaimsim::sim::{RunOptions, Simulation};
        let sets = [
            format!("kernel.transparent_hugepage.defrag=\"{defrag}\""),
            format!("workload.1.madvise_hugepage={madvised}"),
        ];
        let sc = reclaimsim::scenario::parse_str(text, "t.toml", &sets).unwrap();
        let mut sim = Simulation::new(sc);
        sim.enable_trace(
            reclaimsim::stats::trace::Tracer::parse("mm_vmscan_direct_reclaim_begin", 1 << 20)
                .unwrap(),
        );
        let out = reclaimsim::report::run_with_series(
            sim,
            RunOptions {
                check: true,
                ..Default::default()
            },
        )
        .unwrap();
        let thp_reclaims = out
            .trace
            .unwrap()
            .lines()
            .filter(|l| l.contains("mm_vmscan_direct_reclaim_begin: order=9"))
            .count();
        (out.results, thp_reclaims)
    };
    for (defrag, madvised) in [("never", true), ("madvise", false), ("always", false)] {
        let (r, thp_reclaims) = run(defrag, madvised);
        assert_eq!(r.vm("thp_fault_alloc"), 0, "{defrag}");
        assert_eq!(r.vm("thp_fault_fallback"), 64, "{defrag}");
        assert_eq!(thp_reclaims, 0, "{defrag}: no direct reclaim for a THP");
        assert_eq!(r.vm("compact_stall"), 0, "{defrag}: no direct compaction");
    }
    // defer: the fault neither compacts nor reclaims; it wakes kcompactd and falls
    // back. Whether kcompactd's work arrives in time for a later fault depends on the
    // layout the cache left (here its scanners meet at once over pageblocks marked
    // skip, and only compaction_restarting clears them): not asserted.
    let (r, thp_reclaims) = run("defer", false);
    assert!(r.vm("thp_fault_fallback") > 0);
    assert_eq!(r.vm("thp_fault_alloc") + r.vm("thp_fault_fallback"), 64);
    assert!(r.vm("compact_daemon_wake") > 0);
    assert_eq!(r.vm("compact_stall"), 0, "no direct compaction");
    assert_eq!(thp_reclaims, 0);
    let (r, thp_reclaims) = run("madvise", true);
    assert!(r.vm("thp_fault_alloc") > 0);
    assert!(r.vm("compact_stall") > 0, "direct compaction");
    assert!(thp_reclaims > 0 && r.vm("pgsteal_direct") > 0);
    assert!(r.vm("allocstall_dma32") + r.vm("allocstall_normal") > 0);
}

/// A heap larger than memory with zram: reclaim takes pages of THPs and splits them
/// first (thp_split_page), then swaps the pages out one by one. The invariant checker
/// checks every THP's 512 frames at each sample.
#[test]
fn reclaim_splits_a_thp_before_swapping_it() {
    let text = r#"
[run]
duration = "3s"
[machine]
memory = "512M"
[machine.swap]
type = "zram"
size = "1G"
[kernel]
transparent_hugepage.enabled = "always"
[[workload]]
name = "heap"
kind = "anon"
size = "700M"
pattern = "uniform"
"#;
    let r = common::run_checked(text, &[]);
    let (alloc, split) = (r.vm("thp_fault_alloc"), r.vm("thp_split_page"));
    assert!(alloc > 0 && split > 0 && split <= alloc, "{alloc} {split}");
    assert!(r.vm("pswpout") > 0);
}

/// A THP is charged to its memcg in one charge of 512 pages, which limit reclaim may
/// fail but never answers with an OOM kill (`mem_cgroup_oom` declines orders above
/// PAGE_ALLOC_COSTLY_ORDER): the fault falls back to a base page. Under memory.max
/// 3M, no swap, a 4 MiB heap whose first 2 MiB range is touched whole (one THP:
/// 2 MiB charged, with the process's kernel memory under 1 MiB) and then 10 pages of
/// the second: 2 MiB more does not fit and nothing can be reclaimed, so the second
/// range falls back once (its page table is then populated: no second attempt), and
/// its 10 base pages fit. Charged page by page, the THP would have been OOM-killed at
/// the limit.
#[test]
fn a_thp_over_memory_max_falls_back_instead_of_oom() {
    let text = r#"
[run]
duration = "1s"
[machine]
memory = "1G"
[kernel]
transparent_hugepage.enabled = "always"
[[cgroup]]
path = "box"
memory.max = "3M"
[[workload]]
name = "heap"
kind = "anon"
cgroup = "box"
size = "4M"
pattern = "sequential"
ops = 522
"#;
    let r = common::run_checked(text, &[]);
    assert!(r.workloads["heap"].killed_at_ns.is_none(), "OOM-killed");
    assert_eq!(r.vm("oom_kill"), 0);
    assert_eq!(r.vm("thp_fault_alloc"), 1);
    assert_eq!(r.vm("thp_fault_fallback"), 1);
    assert_eq!(r.vm("thp_fault_fallback_charge"), 1);
    // One THP fault, then 10 base-page faults; all 522 pages were charged at once
    // (the heap exits at its last operation and frees them: the peak tells).
    assert_eq!(r.vm("pgfault"), 11);
    assert_eq!(r.workloads["heap"].ops, 522);
    let peak = r.cgroups["box"]["memory"]["peak"].as_u64().unwrap();
    assert!((522 * 4096..=3 << 20).contains(&peak), "memory.peak {peak}");
}
