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
    // Unmovable: once the block the process's objects took at fork is full, a page
    // table falls back to a movable block and takes it over (mm_page_alloc_extfrag
    // with alloc_migratetype=0). 2 GiB needs 1024 tables, more than a 512-page block
    // holds; without them nothing falls back.
    let extfrag = |sets: &[&str]| {
        use reclaimsim::sim::{RunOptions, Simulation};
        let text = HEAP
            .replace("memory = \"1G\"", "memory = \"4G\"")
            .replace("size = \"64M\"", "size = \"2G\"");
        let sc = reclaimsim::scenario::parse_str(
            &text,
            "t.toml",
            &sets.iter().map(|s| s.to_string()).collect::<Vec<_>>(),
        )
        .unwrap();
        let mut sim = Simulation::new(sc);
        sim.enable_trace(
            reclaimsim::stats::trace::Tracer::parse("mm_page_alloc_extfrag", 1000).unwrap(),
        );
        let out = reclaimsim::report::run_with_series(sim, RunOptions::default()).unwrap();
        assert_eq!(
            out.results.vmstat["nr_page_table_pages"] > 0,
            !sets.contains(&"workload.0.page_tables=false")
        );
        out.trace
            .unwrap()
            .lines()
            .filter(|l| l.contains("mm_page_alloc_extfrag:") && l.contains("alloc_migratetype=0"))
            .count()
    };
    assert!(extfrag(&[]) > 0);
    assert_eq!(extfrag(&["workload.0.page_tables=false"]), 0);
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
    // maps' one thread still has its 16 KiB stack.
    assert_eq!(r.vm("nr_kernel_stack"), 16);
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

const APP: &str = r#"
[run]
duration = "1s"
[machine]
memory = "1G"
[[cgroup]]
path = "app"
[[workload]]
name = "heap"
kind = "anon"
size = "64M"
pattern = "sequential"
threads = 4
cgroup = "app"
"#;

/// memory.stat's kernel items for a 64 MiB heap with four threads, worked by hand:
/// pagetables 32 pages (one per 2 MiB); kernel_stack four 16 KiB stacks;
/// slab_unreclaimable the objects with their 8-byte objcg pointers: mm_struct 1352,
/// signal_cache 1160, sighand_cache 2120, files_cache 712, one vm_area_struct 184, four
/// task_structs 4 × 9992 = 45496 bytes. Those bytes are charged as pages through the
/// objcg stock: mm_struct takes a page (2744 left), signal_cache fits (1584),
/// sighand_cache takes a page (3560), files_cache and the VMA fit (2664), each
/// task_struct takes 3 pages (2664 + 4 × 2296 left): 14 pages. kernel = 32 + 16 + 14
/// pages, and memory.current is the heap plus that.
#[test]
fn memory_stat_kernel_items_are_the_hand_worked_sums() {
    let r = common::run_checked(APP, &[]);
    let m = &r.cgroups["app"]["memory"];
    let stat = |k: &str| m["stat"][k].as_u64().unwrap();
    assert_eq!(stat("pagetables"), 32 * 4096);
    assert_eq!(stat("kernel_stack"), 4 * 16384);
    assert_eq!(stat("slab_unreclaimable"), 45496);
    assert_eq!(stat("slab_reclaimable"), 0);
    assert_eq!(stat("slab"), 45496);
    assert_eq!(stat("kernel"), (32 + 16 + 14) * 4096);
    assert_eq!(stat("anon"), 64 << 20);
    assert_eq!(
        m["current"].as_u64().unwrap(),
        (64 << 20) + (32 + 16 + 14) * 4096
    );
    // cgroup.memory=nokmem: the same memory is allocated, none of it charged.
    let r = common::run_checked(APP, &["kernel.memcg_kmem=false"]);
    let m = &r.cgroups["app"]["memory"];
    for k in [
        "kernel",
        "kernel_stack",
        "pagetables",
        "slab",
        "slab_unreclaimable",
    ] {
        assert_eq!(m["stat"][k].as_u64(), Some(0), "{k}");
    }
    assert_eq!(m["current"].as_u64(), Some(64 << 20));
    assert_eq!(r.vm("nr_page_table_pages"), 32);
    assert_eq!(r.vm("nr_kernel_stack"), 64);
    assert!(r.vm("nr_slab_unreclaimable") > 0);
    // A boot option: not a run-time switch.
    let text =
        format!("{APP}[[action]]\nat = \"1s\"\nset = \"kernel.memcg_kmem\"\nvalue = false\n")
            .replace("at = \"1s\"", "at = \"500ms\"");
    let e = reclaimsim::scenario::parse_str(&text, "t.toml", &[]).unwrap_err();
    assert!(e.to_string().contains("boot option"), "{e}");
}

/// A scan reads 20000 one-page files once and exits, leaving 20000 unused dentries
/// (on its cgroup's LRU) and inodes (pinned by them, and by their page cache):
/// 20000 × (200 + 1184) bytes of slab_reclaimable. At DEF_PRIORITY the superblock
/// shrinker's new work, (20000 >> 12) · 4 / 2 = 8 objects, stays under its batch of
/// 1024, so light reclaim leaves them; memory.reclaim of 200M (more than the cgroup
/// holds) takes the page cache and then retries down to low priorities, where the
/// shrinker frees dentries and then the inodes they let go. With
/// vm.vfs_cache_pressure = 0 the shrinker counts nothing and all of it stays; at 1000
/// no less goes than at 100.
#[test]
fn reclaim_shrinks_unused_dentries_and_inodes_by_vfs_cache_pressure() {
    let text = r#"
[run]
duration = "4s"
[machine]
memory = "512M"
[[cgroup]]
path = "scan"
[[workload]]
name = "scan"
kind = "file-read"
nr_files = 20000
file_size = "4K"
io_size = "4K"
pattern = "sequential"
ops = 20000
cgroup = "scan"
[[action]]
at = "3s"
cgroup = "scan"
write = "memory.reclaim"
value = "200M"
"#;
    let run = |pressure: u32| {
        let r = common::run_checked(text, &[&format!("kernel.vm.vfs_cache_pressure={pressure}")]);
        let m = &r.cgroups["scan"]["memory"];
        let stat = |k: &str| m["stat"][k].as_u64().unwrap();
        assert_eq!(
            m["current"].as_u64().unwrap(),
            stat("anon") + stat("file") + stat("kernel")
        );
        assert_eq!(stat("file"), 0, "the page cache went first");
        (stat("slab_reclaimable"), r.vm("slabs_scanned"))
    };
    let all = 20000 * (200 + 1184);
    assert_eq!(run(0), (all, 0));
    let (fair, scanned) = run(100);
    assert!(
        scanned > 0 && fair < all / 2,
        "{fair} of {all}, {scanned} scanned"
    );
    let (hard, _) = run(1000);
    assert!(hard <= fair, "{hard} vs {fair}");
}

/// A file mapping's page tables are its mapper's: a 64 MiB file read through mmap once
/// takes a page table per 2 MiB, 32, charged to the reader's memcg (its read faults
/// allocate them, as `do_read_fault` does before fault-around). When the reader is done
/// (its `ops`: one pass of 16384 pages) it exits: the mapping goes with its page
/// tables, the pages stay in the page cache.
#[test]
fn a_file_mapping_has_page_tables_until_its_mapper_exits() {
    let text = r#"
[run]
duration = "3s"
[machine]
memory = "1G"
[[cgroup]]
path = "reader"
[[workload]]
name = "reader"
kind = "file-read"
nr_files = 1
file_size = "64M"
io_size = "4K"
mmap = true
pattern = "sequential"
cgroup = "reader"
"#;
    let r = common::run_checked(text, &[]);
    let m = &r.cgroups["reader"]["memory"]["stat"];
    assert_eq!(m["pagetables"].as_u64(), Some(32 * 4096));
    assert_eq!(r.vm("nr_page_table_pages"), 32);
    assert_eq!(m["file"].as_u64(), Some(64 << 20));
    let r = common::run_checked(text, &["workload.0.ops=16384"]);
    let m = &r.cgroups["reader"]["memory"]["stat"];
    assert_eq!(r.workloads["reader"].ops, 16384);
    assert_eq!(m["pagetables"].as_u64(), Some(0));
    assert_eq!(r.vm("nr_page_table_pages"), 0);
    assert_eq!(m["file"].as_u64(), Some(64 << 20), "the cache stays");
    // page_tables = false: none.
    let r = common::run_checked(text, &["workload.0.page_tables=false"]);
    assert_eq!(r.vm("nr_page_table_pages"), 0);
}
