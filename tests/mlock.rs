//! mlock and MAP_POPULATE of a workload's anonymous mapping (`mlock`, `populate`): the
//! pages on the unevictable list, never reclaimed, counted as /proc/vmstat counts
//! them; the populate inside the mapping call; a locked mapping beyond memory.max
//! OOM-killed. Every run has the invariant checker on (NR_MLOCK against the
//! PG_mlocked pages, each page of a locked mapping mlocked and on the unevictable
//! list).

mod common;

use reclaimsim::report::results::Results;
use reclaimsim::scenario;

fn vm(r: &Results, k: &str) -> u64 {
    r.vmstat[k]
}

fn stat(r: &Results, cg: &str, k: &str) -> u64 {
    r.cgroups[cg]["memory"]["stat"][k].as_u64().unwrap()
}

/// The unevictable_pgs_* counters: mlocked, culled, munlocked, rescued, stranded,
/// scanned, cleared.
fn unevictable(r: &Results) -> [u64; 7] {
    [
        "mlocked",
        "culled",
        "munlocked",
        "rescued",
        "stranded",
        "scanned",
        "cleared",
    ]
    .map(|c| vm(r, &format!("unevictable_pgs_{c}")))
}

/// A 64 MiB mlocked working set (N = 16384 pages) beside a 300 MiB hog on 256 MiB with
/// zram: the hog is reclaimed and swapped; the locked set is not.
const PRESSURE: &str = r#"[run]
duration = "4s"
[machine]
memory = "256M"
nr_cpus = 2
[machine.swap]
type = "zram"
size = "512M"
[[cgroup]]
path = "locked"
[[cgroup]]
path = "hog"
[[workload]]
name = "locked"
kind = "anon"
size = "64M"
mlock = true
pattern = "uniform"
rate = 1000
cgroup = "locked"
[[workload]]
name = "hog"
kind = "anon-hog"
size = "300M"
cgroup = "hog"
"#;

const N: u64 = 16384;

#[test]
fn mlocked_pages_stay_resident_while_the_neighbour_is_reclaimed() {
    for lru in ["classic", "mglru"] {
        let r = common::run_checked(PRESSURE, &[&format!("kernel.lru=\"{lru}\"")]);
        // All N pages mlocked as the mapping call populated them (mlock_new_folio:
        // mlocked and culled onto the unevictable list), none munlocked yet.
        assert_eq!(unevictable(&r), [N, N, 0, 0, 0, 0, 0], "{lru}");
        assert_eq!(vm(&r, "nr_mlock"), N, "{lru}");
        assert_eq!(vm(&r, "nr_unevictable"), N, "{lru}");
        assert_eq!(stat(&r, "locked", "unevictable"), N * 4096, "{lru}");
        assert_eq!(stat(&r, "locked", "anon"), N * 4096, "{lru}");
        // Never scanned, never reclaimed, never faulted again: its only faults are
        // the populate's.
        for k in ["pgscan", "pgsteal", "pgmajfault"] {
            assert_eq!(stat(&r, "locked", k), 0, "{lru} {k}");
        }
        assert_eq!(stat(&r, "locked", "pgfault"), N, "{lru}");
        // The unlocked neighbour pays: reclaimed and swapped.
        assert!(stat(&r, "hog", "pgsteal") > 10_000, "{lru}");
        assert!(vm(&r, "pswpout") > 10_000, "{lru}");
        assert!(r.workloads["locked"].ops > 3000, "{lru}");
    }
}

#[test]
fn exit_munlocks_every_page() {
    // `ops = 100`: the workload finishes and exits; unmapping munlocks each page
    // (munlocked) and moves it off the unevictable list (rescued) before it is freed.
    for lru in ["classic", "mglru"] {
        let r = common::run_checked(
            PRESSURE,
            &[&format!("kernel.lru=\"{lru}\""), "workload.0.ops=100"],
        );
        assert_eq!(unevictable(&r), [N, N, N, N, 0, 0, 0], "{lru}");
        assert_eq!(vm(&r, "nr_mlock"), 0, "{lru}");
        assert_eq!(vm(&r, "nr_unevictable"), 0, "{lru}");
        assert_eq!(stat(&r, "locked", "unevictable"), 0, "{lru}");
    }
}

#[test]
fn mlocked_runs_are_deterministic() {
    let a = serde_json::to_string(&common::run_checked(PRESSURE, &[])).unwrap();
    let b = serde_json::to_string(&common::run_checked(PRESSURE, &[])).unwrap();
    assert_eq!(a, b);
}

/// One anonymous mapping of 16 MiB (4096 pages) and nothing else; no kernel memory
/// charged, so memory.current is its pages.
const POPULATE: &str = r#"[run]
duration = "40ms"
[machine]
memory = "256M"
[kernel]
memcg_kmem = false
[[cgroup]]
path = "app"
[[workload]]
name = "pop"
kind = "anon"
size = "16M"
populate = true
pattern = "uniform"
cgroup = "app"
"#;

const POP_N: u64 = 4096;

#[test]
fn populate_faults_every_page_in_the_mapping_call() {
    // The run ends some 30 ms after the call: memory.current is the 4096 pages, all
    // faulted by the call (pgfault = 4096 with the access loop running since: every
    // access hits). The call is no operation of the workload's.
    let r = common::run_checked(POPULATE, &[]);
    assert_eq!(vm(&r, "pgfault"), POP_N);
    assert_eq!(
        r.cgroups["app"]["memory"]["current"].as_u64().unwrap(),
        POP_N * 4096
    );
    assert_eq!(stat(&r, "app", "anon"), POP_N * 4096);
    assert_eq!(unevictable(&r), [0; 7], "populate alone locks nothing");
    assert!(r.workloads["pop"].ops > 10_000);
    // With `ops = 1` the one access comes after the call's 4096 faults (1 us each,
    // costs.minor_fault) and its syscall: the faults are in the mapping call.
    let r = common::run_checked(POPULATE, &["workload.0.ops=1"]);
    let t = &r.tasks["pop/0"];
    assert_eq!((t.ops, vm(&r, "pgfault")), (1, POP_N));
    assert!(t.last_op_ns.unwrap() > POP_N * 1_000);
    assert!(t.system_ns > POP_N * 1_000);
    // Without populate the first access faults its own page and is done at once.
    let r = common::run_checked(POPULATE, &["workload.0.ops=1", "workload.0.populate=false"]);
    assert_eq!(vm(&r, "pgfault"), 1);
    assert!(r.tasks["pop/0"].last_op_ns.unwrap() < 100_000);
}

#[test]
fn other_threads_start_when_the_mapping_call_returns() {
    // Thread 0 makes the call; thread 1 waits for it, so it finds every page present
    // and spends no time in the kernel.
    let r = common::run_checked(POPULATE, &["workload.0.threads=2"]);
    assert_eq!(vm(&r, "pgfault"), POP_N);
    assert!(r.tasks["pop/0"].system_ns > POP_N * 1_000);
    assert_eq!(r.tasks["pop/1"].system_ns, 0);
    assert!(r.tasks["pop/1"].ops > 10_000);
}

#[test]
fn mlock_onfault_mlocks_each_page_as_it_faults() {
    // populate = false with mlock = true (mlock2's MLOCK_ONFAULT): nothing at the
    // mapping call; a sequential pass faults the pages one by one, each mlocked and
    // culled as it comes, the first access at once.
    let r = common::run_checked(
        POPULATE,
        &[
            "workload.0.mlock=true",
            "workload.0.populate=false",
            "workload.0.pattern=\"sequential\"",
        ],
    );
    assert_eq!(vm(&r, "pgfault"), POP_N);
    assert_eq!(unevictable(&r), [POP_N, POP_N, 0, 0, 0, 0, 0]);
    assert_eq!(stat(&r, "app", "unevictable"), POP_N * 4096);
    let r = common::run_checked(
        POPULATE,
        &[
            "workload.0.mlock=true",
            "workload.0.populate=false",
            "workload.0.ops=1",
        ],
    );
    assert_eq!(unevictable(&r)[..2], [1, 1]);
}

#[test]
fn a_growing_locked_hog_mlocks_what_it_grows_into() {
    // anon-hog: the call populates the 8 MiB kept at the start; each 8 MiB step it
    // grows by faults in as it is written, mlocked then. 40 ms in: 32 MiB, all locked.
    let r = common::run_checked(
        r#"[run]
duration = "40ms"
[machine]
memory = "256M"
[[workload]]
name = "hog"
kind = "anon-hog"
size = "8M"
grow_by = "8M"
grow_every = "10ms"
max_size = "32M"
mlock = true
"#,
        &[],
    );
    assert_eq!(vm(&r, "nr_mlock"), 8192);
    assert_eq!(unevictable(&r)[..2], [8192, 8192]);
    assert_eq!(vm(&r, "pgfault"), 8192);
}

/// 64 MiB locked in a memcg with memory.max = 32 MiB.
const OVER_MAX: &str = r#"[run]
duration = "2s"
[machine]
memory = "256M"
[machine.swap]
type = "zram"
size = "512M"
[[cgroup]]
path = "box"
memory.max = "32M"
[[workload]]
name = "locked"
kind = "anon"
size = "64M"
mlock = true
cgroup = "box"
"#;

#[test]
fn mlocking_beyond_memory_max_is_oom_killed() {
    // The call's faults charge the memcg up to its limit; then limit reclaim finds
    // nothing evictable (the pages are mlocked, the rest is kernel memory), and after
    // MAX_RECLAIM_RETRIES the memcg OOM killer kills the task. Its exit munlocks what
    // it had mlocked: at most the 8192 pages of memory.max, less its kernel memory.
    let r = common::run_checked(OVER_MAX, &[]);
    assert_eq!(vm(&r, "oom_kill"), 1);
    assert_eq!(r.cgroups["box"]["memory"]["events"]["oom_kill"], 1);
    assert!(r.workloads["locked"].killed_at_ns.is_some());
    let [mlocked, culled, munlocked, rescued, 0, 0, 0] = unevictable(&r) else {
        panic!("{:?}", unevictable(&r));
    };
    assert!((8192 - 64..=8192).contains(&mlocked), "{mlocked}");
    assert_eq!((culled, munlocked, rescued), (mlocked, mlocked, mlocked));
    assert_eq!(vm(&r, "nr_mlock"), 0);
    assert_eq!(vm(&r, "pswpout"), 0);
    // Unlocked, the same memory is swapped instead.
    let r = common::run_checked(
        OVER_MAX,
        &["workload.0.mlock=false", "workload.0.init=true"],
    );
    assert_eq!(vm(&r, "oom_kill"), 0);
    assert!(vm(&r, "pswpout") > 8192);
}

#[test]
fn mglru_mixed_with_a_locked_memcached_holds_every_invariant() {
    // scenarios/mglru-mixed.toml at an eighth of its size (as tests/mglru.rs runs it)
    // with memcached's memory locked (memcached -k): its 224000 pages are populated by
    // the first client's mapping call, the other three start after it; none is ever
    // on a generation, scanned or swapped, and fio's page cache takes the pressure.
    let text = std::fs::read_to_string("scenarios/mglru-mixed.toml")
        .unwrap()
        .replace("memory = \"16G\"", "memory = \"2G\"")
        .replace("size = \"4G\"", "size = \"512M\"")
        .replace("keys = 3670016", "keys = 458752")
        .replace("size = \"2560M\"", "size = \"320M\"")
        .replace("ramp_time = \"10s\"", "ramp_time = \"2500ms\"")
        .replace("duration = \"16s\"", "duration = \"5s\"");
    let pages = 458752 * 2000 / 4096;
    let r = common::run_checked(&text, &["workload.0.mlock=true"]);
    assert_eq!(vm(&r, "nr_mlock"), pages);
    // Compaction may move locked pages (compact_unevictable_allowed): each move
    // munlocks the old page and mlocks the new one.
    let [mlocked, culled, munlocked, rescued, 0, 0, 0] = unevictable(&r) else {
        panic!("{:?}", unevictable(&r));
    };
    assert_eq!(mlocked - pages, munlocked);
    assert_eq!((culled, rescued), (mlocked, munlocked));
    assert!(munlocked <= vm(&r, "pgmigrate_success"));
    assert_eq!(stat(&r, "memcached", "unevictable"), pages * 4096);
    assert_eq!(stat(&r, "memcached", "pgscan"), 0);
    assert_eq!(vm(&r, "pswpout"), 0);
    assert_eq!(vm(&r, "pgfault"), pages);
    assert!(stat(&r, "fio", "pgsteal") > 100_000);
    assert!(r.workloads["memcached"].ops > 100_000);
}

#[test]
fn compaction_moves_mlocked_pages_and_counts_it() {
    // stress-highalloc with cc1's mappings locked: compaction (compact_unevictable_allowed
    // = 1) migrates some of their pages. Each move munlocks the old page and mlocks
    // the new one (rescued from the PG_unevictable it inherits, culled back), so the
    // counts exceed the pages faulted by the pages moved; at the end (cc1 stopped)
    // every page was munlocked and rescued.
    let text = std::fs::read_to_string("scenarios/stress-highalloc.toml").unwrap();
    let r = common::run_checked(&text, &["workload.2.mlock=true"]);
    let [mlocked, culled, munlocked, rescued, 0, 0, 0] = unevictable(&r) else {
        panic!("{:?}", unevictable(&r));
    };
    let faulted = vm(&r, "pgfault");
    assert!(mlocked > faulted, "{mlocked} {faulted}");
    assert!(mlocked - faulted <= vm(&r, "pgmigrate_success"));
    assert_eq!((culled, munlocked, rescued), (mlocked, mlocked, mlocked));
    assert_eq!(vm(&r, "nr_mlock"), 0);
}

#[test]
fn populate_and_mlock_only_for_anonymous_mappings() {
    let text =
        "[machine]\nmemory = \"64M\"\n[[workload]]\nname = \"f\"\nkind = \"fio\"\nrw = \"read\"\nsize = \"4M\"\nmlock = true\n";
    let e = scenario::parse_str(text, "s.toml", &[])
        .unwrap_err()
        .to_string();
    assert!(e.contains("s.toml:8"), "{e}");
    assert!(e.contains("workload[0].mlock"), "{e}");
    assert!(e.contains("not allowed for kind \"fio\""), "{e}");
    assert!(
        e.contains("\"anon\", \"kv\", \"anon-hog\" and \"mmap-latency\""),
        "{e}"
    );
    let e = scenario::parse_str(&text.replace("mlock", "populate"), "s.toml", &[])
        .unwrap_err()
        .to_string();
    assert!(e.contains("workload[0].populate"), "{e}");
    let e = scenario::parse_str(
        "[machine]\nmemory = \"64M\"\n[[workload]]\nname = \"a\"\nkind = \"anon\"\nsize = \"4M\"\nmlock = \"yes\"\n",
        "s.toml",
        &[],
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("s.toml:7") && e.contains("mlock"), "{e}");
}
