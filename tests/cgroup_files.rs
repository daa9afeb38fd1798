//! Cgroup files that users and the kernel's own cgroup selftests read and write:
//! memory.peak and memory.swap.peak through named open files. Every expected value
//! is worked out by hand from the kernel's rules (mm/memcontrol.c `peak_write`,
//! `peak_show`; mm/page_counter.c), not taken from a run.

mod common;

use reclaimsim::report::results::Results;

const MIB: u64 = 1 << 20;

fn run(text: &str) -> Results {
    common::run_checked(text, &[])
}

/// The outcome of the action at `at_ns` on `key` (and through `fd`) as a number.
fn shown(r: &Results, at_ns: u64, key: &str, fd: Option<&str>) -> u64 {
    let a = r
        .actions
        .iter()
        .find(|a| a.time_ns == at_ns && a.key == key && a.fd.as_deref() == fd)
        .unwrap_or_else(|| panic!("no action on {key} at {at_ns}"));
    let text = a.outcome.as_deref().unwrap_or_default();
    text.parse()
        .unwrap_or_else(|_| panic!("{key} at {at_ns}: {text:?}"))
}

/// Anonymous workloads of exact sizes in cgroup `app`: no kernel memory charged
/// (kmem off, no page tables), so memory.current is their pages and nothing else.
/// `a` (10M) all along; `b` (10M) from 1 s; `c` (10M) from 1 s to 3 s; `d` (5M)
/// from 4 s. Usage: 10M, 30M from 1 s, 20M from 3 s, 25M from 4 s.
const PEAK: &str = r#"
[run]
duration = "6s"
[machine]
memory = "512M"
nr_cpus = 2
[kernel]
memcg_kmem = false
[[cgroup]]
path = "app"
[[workload]]
name = "a"
kind = "anon"
size = "10M"
init = true
pattern = "sequential"
rate = 1000000
page_tables = false
cgroup = "app"
[[workload]]
name = "b"
kind = "anon"
size = "10M"
init = true
pattern = "sequential"
rate = 1000000
page_tables = false
cgroup = "app"
start = "1s"
[[workload]]
name = "c"
kind = "anon"
size = "10M"
init = true
pattern = "sequential"
rate = 1000000
page_tables = false
cgroup = "app"
start = "1s"
stop = "3s"
[[workload]]
name = "d"
kind = "anon"
size = "5M"
init = true
pattern = "sequential"
rate = 1000000
page_tables = false
cgroup = "app"
start = "4s"

[[action]]
at = "500ms"
cgroup = "app"
write = "memory.peak"
fd = "A"
value = "reset"
[[action]]
at = "3200ms"
cgroup = "app"
read = "memory.peak"
fd = "A"
[[action]]
at = "3500ms"
cgroup = "app"
read = "memory.current"
[[action]]
at = "3500ms"
cgroup = "app"
write = "memory.peak"
fd = "B"
value = "reset"
[[action]]
at = "5s"
cgroup = "app"
read = "memory.peak"
fd = "A"
[[action]]
at = "5s"
cgroup = "app"
read = "memory.peak"
fd = "B"
[[action]]
at = "5s"
cgroup = "app"
read = "memory.peak"
[[action]]
at = "5s"
cgroup = "app"
read = "memory.peak"
fd = "never-written"
"#;

#[test]
fn memory_peak_resets_per_open_file() {
    let r = run(PEAK);
    let s = 1_000_000_000 / 1000; // ns per ms
                                  // A writes at 0.5 s: usage 10M (`a` alone), so A's value and the counter's
                                  // local_watermark are 10M.
    let a0 = &r.actions[0];
    assert_eq!(
        (a0.key.as_str(), a0.outcome.as_deref()),
        ("app/memory.peak", Some("reset to 10485760 bytes"))
    );
    // 1 s: b and c take usage to 30M; 3 s: c exits, usage 20M. A at 3.2 s reads
    // max(its 10M, local_watermark 30M) = 30M.
    assert_eq!(shown(&r, 3200 * s, "app/memory.peak", Some("A")), 30 * MIB);
    assert_eq!(shown(&r, 3500 * s, "app/memory.current", None), 20 * MIB);
    // B writes at 3.5 s, at 20M: local_watermark = 20M and watcher A's value is
    // raised from 10M to 20M. 4 s: d takes usage to 25M, local_watermark 25M.
    // At 5 s A reads max(20M, 25M) = 25M and B max(20M, 25M) = 25M. A's 30M since
    // its own reset is not kept: the kernel's peak_write raises the other files to
    // the usage of the moment, not to the peak they had seen (cgroup-v2.rst promises
    // "since ... the most recent reset for that FD"; the code gives this).
    assert_eq!(shown(&r, 5000 * s, "app/memory.peak", Some("A")), 25 * MIB);
    assert_eq!(shown(&r, 5000 * s, "app/memory.peak", Some("B")), 25 * MIB);
    // A fresh open, and a named file that never wrote: the all-time peak, 30M.
    assert_eq!(shown(&r, 5000 * s, "app/memory.peak", None), 30 * MIB);
    assert_eq!(
        shown(&r, 5000 * s, "app/memory.peak", Some("never-written")),
        30 * MIB
    );
    // results.json: the all-time peak, and each named file's reading at the end
    // (nothing moved after 4 s).
    let m = &r.cgroups["app"]["memory"];
    assert_eq!(m["current"].as_u64(), Some(25 * MIB));
    assert_eq!(m["peak"].as_u64(), Some(30 * MIB));
    let by_fd = &m["peak_by_fd"];
    assert_eq!(
        (
            by_fd["A"].as_u64(),
            by_fd["B"].as_u64(),
            by_fd["never-written"].as_u64()
        ),
        (Some(25 * MIB), Some(25 * MIB), Some(30 * MIB))
    );
    // No swap was used: swap.peak is 0 and no file was named on it.
    assert_eq!(m["swap"]["peak"].as_u64(), Some(0));
    assert!(m["swap"].get("peak_by_fd").is_none());
}

/// memory.swap.peak: `x` and `y` (in `app`) each write 40M, then touch one page
/// for the rest of the run; `y` is stopped at 3 s and exits, freeing its slots.
/// memory.reclaim takes 30M to zram at 2 s and 5M at 4 s. Nothing else moves swap
/// usage (no other reclaim; a zram swap-in would free its slot, but the pages read
/// are never the ones reclaimed), and each reclaim is read at its instant.
const SWAP_PEAK: &str = r#"
[run]
duration = "6s"
[machine]
memory = "512M"
nr_cpus = 2
[machine.swap]
type = "zram"
size = "256M"
[kernel]
memcg_kmem = false
[[cgroup]]
path = "app"
[[workload]]
name = "x"
kind = "phases"
page_tables = false
cgroup = "app"
[[workload.phase]]
duration = "20ms"
size = "40M"
pattern = "sequential"
write_ratio = 1.0
[[workload.phase]]
duration = "10s"
size = "4K"
pattern = "sequential"
[[workload]]
name = "y"
kind = "phases"
page_tables = false
cgroup = "app"
stop = "3s"
[[workload.phase]]
duration = "20ms"
size = "40M"
pattern = "sequential"
write_ratio = 1.0
[[workload.phase]]
duration = "10s"
size = "4K"
pattern = "sequential"

[[action]]
at = "2s"
cgroup = "app"
write = "memory.reclaim"
value = "30M"
[[action]]
at = "2s"
cgroup = "app"
read = "memory.swap.current"
[[action]]
at = "3500ms"
cgroup = "app"
read = "memory.swap.current"
[[action]]
at = "3500ms"
cgroup = "app"
write = "memory.swap.peak"
fd = "S"
value = "1"
[[action]]
at = "4s"
cgroup = "app"
write = "memory.reclaim"
value = "5M"
[[action]]
at = "4s"
cgroup = "app"
read = "memory.swap.current"
[[action]]
at = "5s"
cgroup = "app"
read = "memory.swap.peak"
fd = "S"
[[action]]
at = "5s"
cgroup = "app"
read = "memory.swap.peak"
"#;

/// The pages a memory.reclaim action reports.
fn reclaimed_pages(r: &Results, at_ns: u64) -> u64 {
    let a = r
        .actions
        .iter()
        .find(|a| a.time_ns == at_ns && a.key.ends_with("/memory.reclaim"))
        .expect("a reclaim");
    let text = a.outcome.as_deref().unwrap_or_default();
    text.trim_start_matches("reclaimed ")
        .trim_end_matches(" pages")
        .parse()
        .unwrap_or_else(|_| panic!("{text:?}"))
}

#[test]
fn memory_swap_peak_resets_per_open_file() {
    let r = run(SWAP_PEAK);
    let ms = 1_000_000;
    let current = |at| shown(&r, at * ms, "app/memory.swap.current", None);
    // Anon pages reclaimed to zram each take a new slot (none of them had one), so
    // swap usage right after the first reclaim is its pages, and the second reclaim
    // adds its pages to what was left after y's exit.
    let (s1, s2, s3) = (current(2000), current(3500), current(4000));
    assert_eq!(s1, reclaimed_pages(&r, 2000 * ms) * 4096);
    assert_eq!(s3, s2 + reclaimed_pages(&r, 4000 * ms) * 4096);
    assert!(s2 < s1 && s3 < s1, "{s1} {s2} {s3}");
    // S resets at 3.5 s to the usage then (s2); from there the counter's
    // local_watermark follows usage up to s3, so S reads max(s2, s3) = s3 at 5 s.
    let reset = r
        .actions
        .iter()
        .find(|a| a.key == "app/memory.swap.peak" && a.time_ns == 3500 * ms)
        .and_then(|a| a.outcome.clone());
    assert_eq!(reset, Some(format!("reset to {s2} bytes")));
    assert_eq!(shown(&r, 5000 * ms, "app/memory.swap.peak", Some("S")), s3);
    // A fresh open shows the all-time peak, s1, which S's reset did not touch.
    assert_eq!(shown(&r, 5000 * ms, "app/memory.swap.peak", None), s1);
    let swap = &r.cgroups["app"]["memory"]["swap"];
    assert_eq!(
        (swap["peak"].as_u64(), swap["peak_by_fd"]["S"].as_u64()),
        (Some(s1), Some(s3))
    );
    // The memory counter's peak is its own: S was opened on memory.swap.peak.
    assert!(r.cgroups["app"]["memory"].get("peak_by_fd").is_none());
}

/// `p` (memory.high 29M) holds `p/c1` (memory.max 20M) and `p/c2`. `small` (10M)
/// runs in c2; `big` in c1 writes 30M, no swap. Once big has 19M, p is over its
/// high: big's charges count high events at p (the level over its high, not c1);
/// at 20M c1's max fails the charge (max events at c1), reclaim finds nothing, and
/// the memcg OOM killer kills big inside c1. `small` is left alone.
const EVENTS: &str = r#"
[run]
duration = "5s"
[machine]
memory = "512M"
nr_cpus = 2
[kernel]
memcg_kmem = false
[[cgroup]]
path = "p"
memory.high = "29M"
[[cgroup]]
path = "p/c1"
memory.max = "20M"
[[cgroup]]
path = "p/c2"
[[workload]]
name = "big"
kind = "anon"
size = "30M"
init = true
pattern = "sequential"
rate = 1000000
page_tables = false
cgroup = "p/c1"
[[workload]]
name = "small"
kind = "anon"
size = "10M"
init = true
pattern = "sequential"
rate = 1000000
page_tables = false
cgroup = "p/c2"
"#;

/// memory.events (`hier`) or memory.events.local of a cgroup, in the kernel's order:
/// low, high, max, oom, oom_kill.
fn events(r: &Results, cg: &str, local: bool) -> [u64; 5] {
    let e = &r.cgroups[cg]["memory"]["events"];
    let e = if local { &e["local"] } else { e };
    ["low", "high", "max", "oom", "oom_kill"]
        .map(|k| e[k].as_u64().unwrap_or_else(|| panic!("{cg} {k}")))
}

#[test]
fn memory_events_local_counts_where_it_happened_and_events_sum_the_subtree() {
    let r = run(EVENTS);
    assert!(r.workloads["big"].killed_at_ns.is_some());
    assert!(r.workloads["small"].killed_at_ns.is_none());
    // c1: the max events and the OOM kill are its own; a leaf's two files agree.
    let c1 = events(&r, "p/c1", true);
    let [_, _, max, _, _] = c1;
    assert!(max > 0);
    assert_eq!(c1, [0, 0, max, 1, 1]);
    assert_eq!(events(&r, "p/c1", false), c1);
    // p: only the high events happened at p itself (its usage was over its high);
    // its memory.events adds c1's (and c2's: none) to them.
    let p = events(&r, "p", true);
    let [_, high, _, _, _] = p;
    assert!(high > 0);
    assert_eq!(p, [0, high, 0, 0, 0]);
    assert_eq!(events(&r, "p", false), [0, high, max, 1, 1]);
    // Events go up, never down or sideways: c2 saw none.
    assert_eq!(events(&r, "p/c2", true), [0; 5]);
    assert_eq!(events(&r, "p/c2", false), [0; 5]);
}

fn run_with(text: &str, sets: &[&str]) -> Results {
    common::run_checked(text, sets)
}

/// OOM victims chosen by oom_badness: in `pool` (memory.max 100M, no swap, no
/// kernel memory or page tables charged) `a` holds 60M (15360 pages) and `b` 30M
/// (7680 pages); at 1 s `trigger`, at oom_score_adj -1000, wants 20M, and at 100M
/// the memcg OOM killer picks between a and b. totalpages is mem_cgroup_get_max:
/// memory.max, 25600 pages (no swap to add), so one point of oom_score_adj is
/// 25600 / 1000 = 25 pages (the kernel divides first).
const BADNESS: &str = r#"
[run]
duration = "3s"
[machine]
memory = "512M"
nr_cpus = 2
[kernel]
memcg_kmem = false
[[cgroup]]
path = "pool"
memory.max = "100M"
[[workload]]
name = "a"
kind = "anon"
size = "60M"
init = true
pattern = "sequential"
rate = 1000000
page_tables = false
cgroup = "pool"
[[workload]]
name = "b"
kind = "anon"
size = "30M"
init = true
pattern = "sequential"
rate = 1000000
page_tables = false
cgroup = "pool"
[[workload]]
name = "trigger"
kind = "anon"
size = "20M"
init = true
pattern = "sequential"
rate = 1000000
page_tables = false
cgroup = "pool"
start = "1s"
oom_score_adj = -1000
"#;

/// The one workload the OOM killer killed.
fn killed(r: &Results) -> Vec<&str> {
    r.events.iter().map(|e| e.workload.as_str()).collect()
}

#[test]
fn oom_score_adj_steers_the_victim() {
    // No adjustment: a's 15360 points beat b's 7680.
    let r = run_with(BADNESS, &[]);
    assert_eq!(killed(&r), ["a"]);
    assert_eq!((r.events[0].rss_pages, r.events[0].swap_pages), (15360, 0));
    assert!(r.workloads["trigger"].killed_at_ns.is_none());
    // b at +500: 7680 + 500 × 25 = 20180 > 15360.
    let r = run_with(BADNESS, &["workload[1].oom_score_adj=500"]);
    assert_eq!(killed(&r), ["b"]);
    // a at -300: 15360 - 300 × 25 = 7860 > 7680, a still goes. (Scaled without the
    // kernel's early division, -300 × 25.6 = -7680 would tie a with b, and b, later
    // in the scan, would win the tie.)
    let r = run_with(BADNESS, &["workload[0].oom_score_adj=-300"]);
    assert_eq!(killed(&r), ["a"]);
    // a at -308: 15360 - 7700 = 7660 < 7680: b goes.
    let r = run_with(BADNESS, &["workload[0].oom_score_adj=-308"]);
    assert_eq!(killed(&r), ["b"]);
    // a and b at -1000, like trigger: nothing can be chosen. No one is killed, the
    // trigger's fault fails and is retried (pagefault_out_of_memory), each time
    // over the limit again: usage stays at memory.max and memory.events counts an
    // oom per attempt.
    let r = run_with(
        BADNESS,
        &[
            "workload[0].oom_score_adj=-1000",
            "workload[1].oom_score_adj=-1000",
        ],
    );
    assert!(r.events.is_empty());
    assert_eq!(r.vm("oom_kill"), 0);
    let m = &r.cgroups["pool"]["memory"];
    assert_eq!(m["current"].as_u64(), Some(100 * MIB));
    assert!(m["events"]["oom"].as_u64().unwrap() > 1);
}

/// memory.oom.group: `job` (oom.group 1, memory.max 60M) holds `job/worker` with
/// `big` (writing 80M) and `job/side` with `helper` (10M) and `keeper` (10M,
/// oom_score_adj -1000); `bystander` (10M) is in `other`. No swap, no kernel memory
/// or page tables charged. With helper and keeper in, big reaches 40M (10240
/// points, against helper's 2560) when job hits its max.
const GROUP: &str = r#"
[run]
duration = "3s"
[machine]
memory = "512M"
nr_cpus = 2
[kernel]
memcg_kmem = false
[[cgroup]]
path = "job"
memory.max = "60M"
memory.oom.group = 1
[[cgroup]]
path = "job/worker"
[[cgroup]]
path = "job/side"
[[cgroup]]
path = "other"
[[workload]]
name = "helper"
kind = "anon"
size = "10M"
init = true
pattern = "sequential"
rate = 20000
page_tables = false
cgroup = "job/side"
[[workload]]
name = "keeper"
kind = "anon"
size = "10M"
init = true
pattern = "sequential"
rate = 20000
page_tables = false
cgroup = "job/side"
oom_score_adj = -1000
[[workload]]
name = "bystander"
kind = "anon"
size = "10M"
init = true
pattern = "sequential"
rate = 20000
page_tables = false
cgroup = "other"
[[workload]]
name = "big"
kind = "anon"
size = "80M"
init = true
pattern = "sequential"
rate = 1000000
page_tables = false
cgroup = "job/worker"
start = "500ms"
"#;

/// One memory.events key of a cgroup: its memory.events (`local` false) or
/// memory.events.local.
fn event(r: &Results, cg: &str, key: &str, local: bool) -> u64 {
    let e = &r.cgroups[cg]["memory"]["events"];
    let e = if local { &e["local"] } else { e };
    e[key].as_u64().unwrap_or_else(|| panic!("{cg} {key}"))
}

#[test]
fn oom_group_kills_the_whole_group_but_oom_score_adj_min() {
    let r = run(GROUP);
    // The memcg OOM in job picks big; job, between big's cgroup and the OOM
    // domain (job itself), has oom.group: every process of job's subtree goes but
    // keeper, at -1000. bystander, outside, is untouched.
    assert_eq!(killed(&r), ["big", "helper"]);
    let at = |w: &str| r.workloads[w].killed_at_ns;
    assert!(at("big").is_some() && at("big") == at("helper"));
    assert!(at("keeper").is_none() && at("bystander").is_none());
    assert!(r.workloads["keeper"].ops > r.workloads["helper"].ops);
    // Counters: oom_kill for big, helper, and big once more (the group scan meets
    // big before it has exited: __oom_kill_process counts it again); the group kill
    // is counted at job, the oom at job (whose max was hit).
    assert_eq!(r.vm("oom_kill"), 3);
    assert_eq!(event(&r, "job/worker", "oom_kill", true), 2);
    assert_eq!(event(&r, "job/side", "oom_kill", true), 1);
    assert_eq!(
        [
            event(&r, "job", "oom", true),
            event(&r, "job", "oom_kill", true),
            event(&r, "job", "oom_group_kill", true),
        ],
        [1, 0, 1]
    );
    assert_eq!(
        [
            event(&r, "job", "oom", false),
            event(&r, "job", "oom_kill", false),
            event(&r, "job", "oom_group_kill", false),
        ],
        [1, 3, 1]
    );
    // What is left in job: keeper's 10M.
    assert_eq!(
        r.cgroups["job"]["memory"]["current"].as_u64(),
        Some(10 * MIB)
    );
}

#[test]
fn oom_group_above_the_oom_domain_is_not_used() {
    // The limit moved to job/worker (30M): the OOM is job/worker's, and the search
    // for an oom.group stops there, so job's setting does not apply: big alone.
    let r = run_with(
        GROUP,
        &["cgroup[0].memory.max=max", "cgroup[1].memory.max=30M"],
    );
    assert_eq!(killed(&r), ["big"]);
    assert_eq!(r.vm("oom_kill"), 1);
    assert_eq!(event(&r, "job", "oom_group_kill", false), 0);
    assert_eq!(event(&r, "job/worker", "oom", true), 1);
    assert!(r.workloads["helper"].killed_at_ns.is_none());
}

#[test]
fn oom_group_in_a_global_oom_reaches_up_to_the_root() {
    // No limit; the machine is too small for big (128M, big writing 200M): the
    // global OOM (after reclaim's retries, some seconds in) picks big, and job's
    // oom.group (between big's cgroup and the root) takes helper with it. No memcg
    // oom event: no limit was hit.
    let r = run_with(
        GROUP,
        &[
            "cgroup[0].memory.max=max",
            "machine.memory=128M",
            "workload[3].size=200M",
            "run.duration=12s",
        ],
    );
    assert_eq!(killed(&r), ["big", "helper"]);
    assert_eq!(r.vm("oom_kill"), 3);
    assert_eq!(event(&r, "job", "oom_group_kill", true), 1);
    assert_eq!(event(&r, "job", "oom", false), 0);
    assert!(r.workloads["bystander"].killed_at_ns.is_none());
    assert!(r.workloads["keeper"].killed_at_ns.is_none());
}

#[test]
fn oom_group_is_written_and_read_by_actions() {
    // oom.group off in the file, on from 100 ms by an action (read back at 200 ms):
    // the same group kill.
    let text = GROUP.replace("memory.oom.group = 1\n", "")
        + "[[action]]\nat = \"100ms\"\ncgroup = \"job\"\nwrite = \"memory.oom.group\"\nvalue = 1\n\
           [[action]]\nat = \"200ms\"\ncgroup = \"job\"\nread = \"memory.oom.group\"\n";
    let r = run(&text);
    assert_eq!(r.actions[1].outcome.as_deref(), Some("1"));
    assert_eq!(killed(&r), ["big", "helper"]);
    // Without it, big alone.
    let r = run(&GROUP.replace("memory.oom.group = 1\n", ""));
    assert_eq!(killed(&r), ["big"]);
    assert_eq!(r.vm("oom_kill"), 1);
}

/// memory.stat's page states and the v6.15+ events, by hand. Nothing is under
/// pressure but where asked (512M, kmem off, no page tables), so each state is what
/// its workload made:
/// - `mapper` has loaded every page of its 8M file through mmap within its first
///   pass: `file` and `file_mapped` are both 8M (2048 pages).
/// - `writer` wrote its 4M file once; nothing has expired (dirty_expire 30 s) or
///   crossed the background threshold (10% of ~500M): `file_dirty` 4M, no writeback.
///   Page cache outlives the process, so it is there after the writer exits.
/// - `huge` faulted an 8M madvised mapping: 4 THPs, `anon_thp` 8M, thp_fault_alloc 4.
/// - `swapper` wrote 16M once under an 8M memory.max: at least 2048 pages went out to
///   zram, all by its limit reclaim (`pgsteal_direct`), each a `pswpout` of its
///   memcg; it is the only swapper, so /proc/vmstat's pswpout is the same number.
///   Swapped-out pages leave no swap cache (`swapcached` 0).
/// - `reader` read a 16M file once; memory.reclaim of 4M at 0.5 s takes its clean,
///   once-referenced pages: `pgscan_proactive` and `pgsteal_proactive` at least 1024,
///   none of it direct, and none of it in /proc/vmstat (cgroup reclaim is not).
#[test]
fn memory_stat_page_states_and_proactive_counters() {
    let text = r#"[run]
duration = "1s"
[machine]
memory = "512M"
nr_cpus = 2
[machine.swap]
type = "zram"
size = "256M"
[kernel]
memcg_kmem = false
transparent_hugepage.enabled = "madvise"
[[cgroup]]
path = "map"
[[cgroup]]
path = "write"
[[cgroup]]
path = "thp"
[[cgroup]]
path = "pro"
memory.max = "8M"
[[cgroup]]
path = "cache"
[[workload]]
name = "mapper"
kind = "file-read"
cgroup = "map"
nr_files = 1
file_size = "8M"
io_size = "4K"
mmap = true
pattern = "sequential"
page_tables = false
[[workload]]
name = "writer"
kind = "file-write"
cgroup = "write"
nr_files = 1
file_size = "4M"
io_size = "4K"
pattern = "sequential"
ops = 1024
[[workload]]
name = "huge"
madvise_hugepage = true
kind = "anon"
cgroup = "thp"
size = "8M"
pattern = "sequential"
page_tables = false
[[workload]]
name = "swapper"
kind = "anon"
cgroup = "pro"
size = "16M"
pattern = "sequential"
ops = 4096
page_tables = false
[[workload]]
name = "reader"
kind = "file-read"
cgroup = "cache"
nr_files = 1
file_size = "16M"
io_size = "4K"
pattern = "sequential"
ops = 4096
[[action]]
at = "500ms"
cgroup = "cache"
write = "memory.reclaim"
value = "4M""#;
    let r = run(text);
    let stat = |cg: &str, key: &str| {
        r.cgroups[cg]["memory"]["stat"][key]
            .as_u64()
            .unwrap_or_else(|| panic!("{cg} memory.stat {key}"))
    };
    let vm = |key: &str| r.vmstat[key];
    assert_eq!(stat("map", "file_mapped"), 8 * MIB);
    assert_eq!(stat("map", "file"), 8 * MIB);
    assert_eq!(stat("write", "file_dirty"), 4 * MIB);
    assert_eq!(stat("write", "file_writeback"), 0);
    assert_eq!(stat("write", "file_mapped"), 0);
    assert_eq!(stat("thp", "anon_thp"), 8 * MIB);
    assert_eq!(stat("thp", "anon"), 8 * MIB);
    assert_eq!(stat("thp", "thp_fault_alloc"), 4);
    assert_eq!(vm("thp_fault_alloc"), 4);
    let swapped = stat("pro", "pswpout");
    assert!(swapped >= 2048, "{swapped}");
    assert_eq!(stat("pro", "pgsteal_direct"), swapped);
    assert_eq!(vm("pswpout"), swapped);
    assert_eq!(stat("pro", "swapcached"), 0);
    assert_eq!(stat("pro", "pgsteal_proactive"), 0);
    let proactive = stat("cache", "pgsteal_proactive");
    assert!(proactive >= 1024, "{proactive}");
    assert!(stat("cache", "pgscan_proactive") >= proactive);
    assert_eq!(stat("cache", "pgsteal"), proactive);
    assert_eq!(stat("cache", "pgscan_direct"), 0);
    assert_eq!(stat("cache", "file"), 16 * MIB - proactive * 4096);
    assert_eq!(vm("pgscan_proactive") + vm("pgsteal_proactive"), 0);
    assert_eq!(vm("pgscan_direct") + vm("pgsteal_direct"), 0);
}

/// timeseries.csv carries memory.events.local per cgroup (`memory.events.local.<key>:
/// <path>`, counts so far): in EVENTS, each column only grows, c2's stay 0, and the
/// last row is what the previous test worked out by hand from the files (c1: its max
/// events, oom 1, oom_kill 1; p: its high events; nothing else).
#[test]
fn memory_events_local_is_in_the_timeseries() {
    let (results, csv) = common::run_checked_csv(EVENTS);
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let rows: Vec<Vec<u64>> = lines
        .map(|l| {
            l.split(',')
                .map(|x| x.parse::<f64>().unwrap() as u64)
                .collect()
        })
        .collect();
    let column = |key: &str, cg: &str| -> Vec<u64> {
        let name = format!("memory.events.local.{key}:{cg}");
        let i = header
            .iter()
            .position(|h| *h == name)
            .unwrap_or_else(|| panic!("no column {name}"));
        rows.iter().map(|r| r[i]).collect()
    };
    let r = &results;
    for cg in ["p", "p/c1", "p/c2"] {
        let local = events(r, cg, true);
        for (k, key) in ["low", "high", "max", "oom", "oom_kill"].iter().enumerate() {
            let c = column(key, cg);
            assert!(c.windows(2).all(|w| w[0] <= w[1]), "{cg} {key}: {c:?}");
            assert_eq!(*c.last().unwrap(), local[k], "{cg} {key}");
        }
        assert!(column("oom_group_kill", cg).iter().all(|&v| v == 0));
    }
    assert_eq!(*column("oom_kill", "p/c1").last().unwrap(), 1);
    assert!(column("max", "p/c2").iter().all(|&v| v == 0));
}
