//! memcg: charging, protection and the proportional memory.low change, on a small
//! machine. The invariant checker (on) verifies every memcg's usage equals the pages
//! charged to it and its descendants.

mod common;

use reclaimsim::report::results::Results;
use reclaimsim::scenario;

/// A workload cgroup re-reading a 500 MiB data set (its working set) and a system
/// cgroup streaming files and keeping 300 MiB of anon, on 1 GiB.
const STEP: &str = r#"[run]
duration = "20s"
[machine]
memory = "1G"
nr_cpus = 4
[machine.swap]
type = "zram"
size = "2G"
[kernel]
vm.swappiness = 100
[[cgroup]]
path = "workload"
memory.low = "600M"
[[cgroup]]
path = "system"
[[workload]]
name = "app"
kind = "file-read"
nr_files = 1
file_size = "500M"
io_size = "4K"
pattern = "uniform"
rate = 100000
cgroup = "workload"
[[workload]]
name = "churn"
kind = "file-read"
nr_files = 2
file_size = "400M"
io_size = "128K"
pattern = "sequential"
rate = 200
cgroup = "system"
[[workload]]
name = "hog"
kind = "anon-hog"
size = "300M"
rate = 50000
cgroup = "system"
"#;

fn run(low: &str, mode: &str) -> Results {
    let low = format!("cgroup.0.memory.low={low}");
    let mode = format!("kernel.memcg_protection={mode}");
    common::run_checked(STEP, &[&low, &mode])
}

fn pgscan_per_sec(r: &Results, cg: &str) -> f64 {
    r.cgroups[cg]["pgscan_per_sec"].as_f64().unwrap()
}

#[test]
fn cgroup_files_report_charges_and_stats() {
    let r = run("0", "proportional");
    let w = &r.cgroups["workload"]["memory"];
    let s = &r.cgroups["system"]["memory"];
    // Each cgroup's memory.current is its anon + file (all its pages are on its LRU)
    // + kernel; kernel is its page tables, stacks and its objects' bytes charged in
    // whole pages (each object over what the last charge left rounds up a page).
    for m in [w, s] {
        let stat = |k: &str| m["stat"][k].as_u64().unwrap();
        let sum = stat("anon") + stat("file") + stat("kernel");
        assert_eq!(m["current"].as_u64().unwrap(), sum);
        assert_eq!(
            stat("slab"),
            stat("slab_reclaimable") + stat("slab_unreclaimable")
        );
        let pages = stat("pagetables") + stat("kernel_stack");
        let objects = stat("kernel") - pages;
        assert!(objects >= stat("slab") && objects < stat("slab") + 4096 * 8);
    }
    // The workload only reads files; the system cgroup holds the anon hog.
    assert_eq!(w["stat"]["anon"].as_u64(), Some(0));
    assert!(s["stat"]["anon"].as_u64().unwrap() > 200 << 20);
    // memory.stat's pgscan is kswapd + direct, and the cgroups' scans add up to the
    // machine's (there is nothing in the root cgroup).
    let total: u64 = ["workload", "system"]
        .iter()
        .map(|c| r.cgroups[*c]["memory"]["stat"]["pgscan"].as_u64().unwrap())
        .sum();
    assert_eq!(total, r.vm("pgscan_kswapd") + r.vm("pgscan_direct"));
}

#[test]
fn protection_above_the_working_set_spares_the_workload() {
    for mode in ["cliff", "proportional"] {
        let r = run("600M", mode);
        assert_eq!(pgscan_per_sec(&r, "workload"), 0.0, "{mode}");
        assert!(pgscan_per_sec(&r, "system") > 1_000.0);
    }
}

#[test]
fn cliff_protection_below_the_working_set_changes_nothing() {
    // The streaming churn is mild: unprotected, the workload keeps most of its 500 MiB.
    // The cliff only acts when usage falls to memory.low, so any memory.low below what
    // the workload keeps anyway scans it as if it had none (the seed's flat control).
    let unprotected = run("0", "cliff");
    let kept = unprotected.cgroups["workload"]["memory"]["current"]
        .as_u64()
        .unwrap();
    assert!(kept > 450 << 20, "workload keeps {kept} bytes unprotected");
    let base = pgscan_per_sec(&unprotected, "workload");
    assert!(base > 100.0, "the workload is scanned: {base}");
    for low in ["450M", "250M"] {
        let cliff = pgscan_per_sec(&run(low, "cliff"), "workload");
        assert!(
            (cliff - base).abs() < 0.1 * base,
            "cliff at memory.low {low}: {cliff} vs {base} with none"
        );
    }
}

#[test]
fn proportional_protection_has_no_cliff() {
    // Just below the working set the proportional scan is well under half the cliff's,
    // and it rises as memory.low falls.
    let cliff = pgscan_per_sec(&run("450M", "cliff"), "workload");
    let prop: Vec<f64> = ["450M", "250M", "0"]
        .iter()
        .map(|l| pgscan_per_sec(&run(l, "proportional"), "workload"))
        .collect();
    assert!(
        prop[0] < 0.5 * cliff,
        "proportional {} vs cliff {cliff}",
        prop[0]
    );
    assert!(prop[0] < prop[1] && prop[1] < prop[2], "{prop:?}");
}

const LIMITED: &str = r#"
[run]
duration = "4s"
[machine]
memory = "1G"
nr_cpus = 2
[machine.swap]
type = "zram"
size = "1G"
[[cgroup]]
path = "limited"
memory.max = "200M"
[[workload]]
name = "big"
kind = "anon"
size = "300M"
pattern = "uniform"
rate = 300000
cgroup = "limited"
[[workload]]
name = "other"
kind = "anon"
size = "100M"
pattern = "uniform"
rate = 100000
"#;

fn run_text(text: &str, sets: &[&str]) -> Results {
    common::run_checked(text, sets)
}

#[test]
fn memory_max_is_enforced_by_limit_reclaim() {
    // 300 MiB of anon in a 200 MiB cgroup on a machine with plenty of room: the
    // cgroup reclaims itself (swapping to zram) and never exceeds its limit; global
    // reclaim never runs, so /proc/vmstat's scan counters stay 0 while the cgroup's
    // memory.stat counts the limit reclaim.
    let r = run_text(LIMITED, &[]);
    let m = &r.cgroups["limited"]["memory"];
    assert_eq!(m["peak"].as_u64(), Some(200 << 20));
    assert!(m["events"]["max"].as_u64().unwrap() > 0);
    assert!(m["stat"]["pgscan"].as_u64().unwrap() > 0);
    assert_eq!(r.vm("pgscan_kswapd") + r.vm("pgscan_direct"), 0);
    assert!(r.vm("pswpout") > 0);
    assert_eq!(r.vm("oom_kill"), 0);
}

#[test]
fn memory_max_without_swap_ooms_inside_the_cgroup_only() {
    // No swap: anon cannot be reclaimed, so the charge fails, the memcg OOM killer
    // runs in `limited` and kills its workload; `other` in the root is untouched.
    let r = run_text(LIMITED, &["machine.swap.type=none"]);
    let e = &r.cgroups["limited"]["memory"]["events"];
    assert_eq!(
        (e["oom"].as_u64(), e["oom_kill"].as_u64()),
        (Some(1), Some(1))
    );
    assert_eq!(r.events.len(), 1);
    assert_eq!(r.events[0].workload, "big");
    assert!(r.workloads["other"].killed_at_ns.is_none());
    assert_eq!(r.workloads["other"].ops, 400_000);
}

const HIGH: &str = r#"
[run]
duration = "10s"
[machine]
memory = "1G"
[[cgroup]]
path = "capped"
memory.high = "100M"
[[workload]]
name = "grow"
kind = "anon"
size = "150M"
pattern = "sequential"
rate = 100000
cgroup = "capped"
"#;

#[test]
fn memory_high_throttles_instead_of_killing() {
    // No swap: nothing in the cgroup can be reclaimed, so going over memory.high gets
    // the task put to sleep, for longer the further over it is, but never killed.
    let r = run_text(HIGH, &[]);
    assert_eq!(r.vm("oom_kill"), 0);
    let m = &r.cgroups["capped"]["memory"];
    assert!(m["events"]["high"].as_u64().unwrap() > 0);
    let current = m["current"].as_u64().unwrap();
    assert!(
        current > 100 << 20 && current < 120 << 20,
        "{}",
        current >> 20
    );
    // At 100000 touches/s the 150 MiB would be in after 0.4 s; throttled, the task
    // got far less done, with sleeps of hundreds of ms (110 MiB is 639 ms a batch).
    let w = &r.workloads["grow"];
    assert!(w.ops < 100_000, "{}", w.ops);
    assert!(w.latency_ns.max > 100_000_000, "{}", w.latency_ns.max);
    assert!(r.psi.memory.full.total > 1_000_000);
    // memory.pressure of the cgroup: its only task is the machine's only stalled task
    // (no global reclaim ran), so it matches /proc/pressure/memory.
    assert_eq!(r.vm("pageoutrun"), 0);
    let p = &r.cgroups["capped"]["memory"]["pressure"];
    assert_eq!(p["some"]["total"].as_u64(), Some(r.psi.memory.some.total));
    assert_eq!(p["full"]["total"].as_u64(), Some(r.psi.memory.full.total));
    // With swap, reclaim holds the cgroup at its high, and the sleeps are short.
    let r = run_text(HIGH, &["machine.swap.type=zram", "machine.swap.size=1G"]);
    let m = &r.cgroups["capped"]["memory"];
    assert!(m["current"].as_u64().unwrap() <= (100 << 20) + (64 << 12));
    assert!(r.vm("pswpout") > 0);
    assert!(r.workloads["grow"].latency_ns.max < 100_000_000);
}

fn cgroup_error(cgroups: &str, workload_cgroup: &str) -> String {
    let text = format!(
        "[machine]\nmemory = \"1G\"\n{cgroups}\n[[workload]]\nname = \"w\"\nkind = \"anon\"\nsize = \"4K\"\ncgroup = \"{workload_cgroup}\"\n"
    );
    scenario::parse_str(&text, "c.toml", &[])
        .unwrap_err()
        .to_string()
}

#[test]
fn bad_cgroup_input_names_the_key() {
    // Line numbers: [machine] is line 1, memory line 2, then the cgroup tables.
    let e = cgroup_error("[[cgroup]]\npath = \"a/b\"", "a/b");
    assert!(
        e.starts_with("c.toml:4: cgroup[0].path: unknown parent `a`"),
        "{e}"
    );
    let e = cgroup_error("[[cgroup]]\npath = \"a\"\n[[cgroup]]\npath = \"a\"", "a");
    assert!(
        e.starts_with("c.toml:6: cgroup[1].path: duplicate cgroup path `a`"),
        "{e}"
    );
    let e = cgroup_error(
        "[[cgroup]]\npath = \"a\"\nmemory.min = \"2G\"\nmemory.max = \"1G\"",
        "a",
    );
    assert!(
        e.starts_with("c.toml:5: cgroup[0].memory.min: 2G is above memory.max (1G)"),
        "{e}"
    );
    let e = cgroup_error("[[cgroup]]\npath = \"a\"\nmemory.lwo = \"1G\"", "a");
    assert!(
        e.starts_with("c.toml:5: cgroup[0].memory.lwo: unknown key (did you mean `low`?)"),
        "{e}"
    );
    let e = cgroup_error("[[cgroup]]\npath = \"a\"", "b");
    assert!(e.contains("workload[0].cgroup: no cgroup `b`"), "{e}");
    let e = cgroup_error("[[cgroup]]\npath = \"/a\"", "a");
    assert!(
        e.contains("cgroup[0].path: `/a` is not a cgroup path"),
        "{e}"
    );
}

#[test]
fn memory_reclaim_action_reclaims_from_the_cgroup() {
    // 400 MiB of anon in a cgroup on a roomy machine: nothing reclaims it until the
    // action writes 100M to memory.reclaim at 2 s; then 100 MiB (25600 pages, or a
    // batch more) goes to zram, counted in the cgroup's pgsteal.
    let text = r#"
[run]
duration = "4s"
[machine]
memory = "1G"
[machine.swap]
type = "zram"
size = "1G"
[[cgroup]]
path = "workload.slice"
[[workload]]
name = "app"
kind = "anon"
size = "400M"
pattern = "uniform"
rate = 100000
cgroup = "workload.slice"
[[action]]
at = "2s"
cgroup = "workload.slice"
write = "memory.reclaim"
value = "100M"
"#;
    let r = run_text(text, &[]);
    let a = &r.actions[0];
    assert_eq!(
        (a.time_ns, a.key.as_str(), a.value.as_str()),
        (2_000_000_000, "workload.slice/memory.reclaim", "100M")
    );
    let stolen = r.cgroups["workload.slice"]["memory"]["stat"]["pgsteal"]
        .as_u64()
        .unwrap();
    assert!((25_600..25_700).contains(&stolen), "{stolen}");
    assert_eq!(
        a.outcome.as_deref(),
        Some(format!("reclaimed {stolen} pages").as_str())
    );
    assert_eq!(
        r.vm("pgscan_kswapd") + r.vm("pgscan_direct"),
        0,
        "not global reclaim"
    );
    // A bad write is an error naming the key.
    let bad = text.replace("write = \"memory.reclaim\"", "write = \"memory.recalim\"");
    let e = scenario::parse_str(&bad, "t.toml", &[])
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("action[0].write") && e.contains("memory.recalim"),
        "{e}"
    );
}

#[test]
fn protection_does_not_bring_the_oom_forward() {
    // scenarios/memcg-oom.toml: a protected 650 MiB db and a hog growing 25 MiB/s.
    // The OOM killer must take the hog, never the protected db, and only once memory
    // and swap are truly full: RAM 1024 MiB + 512 MiB of zram swap − the zram pool's
    // own RAM (512/3 = 170.7 MiB) = 1365.3 MiB for db (650) + hog (25 × (1 + ⌊t⌋)).
    // The proportional behaviour must not OOM earlier than the cliff.
    let text = include_str!("../scenarios/memcg-oom.toml");
    let mut kill_s = Vec::new();
    for mode in ["cliff", "proportional"] {
        let r = run_text(text, &[&format!("kernel.memcg_protection={mode}")]);
        assert!(
            r.workloads["db"].killed_at_ns.is_none(),
            "{mode}: db killed"
        );
        let t = r.workloads["hog"]
            .killed_at_ns
            .expect("the hog runs out of memory") as f64
            / 1e9;
        let demand = 650.0 + 25.0 * (1.0 + t.floor());
        assert!(
            demand >= 0.97 * 1365.3,
            "{mode}: OOM at {t:.1}s with only {demand} MiB asked"
        );
        kill_s.push(t);
    }
    assert!(
        kill_s[1] >= kill_s[0],
        "proportional OOMed at {:.2}s, cliff at {:.2}s",
        kill_s[1],
        kill_s[0]
    );
}

#[test]
fn memory_swap_max_keeps_a_cgroup_out_of_swap() {
    // Two cgroups of anon under pressure on 512 MiB with zram: `noswap` has
    // memory.swap.max = 0, so reclaim cannot swap its pages (anon without swap is not
    // reclaimable for it) while `swapper` swaps as usual.
    let text = r#"
[run]
duration = "4s"
[machine]
memory = "512M"
nr_cpus = 2
[machine.swap]
type = "zram"
size = "1G"
[[cgroup]]
path = "noswap"
memory.swap.max = "0"
[[cgroup]]
path = "swapper"
[[workload]]
name = "a"
kind = "anon"
size = "250M"
pattern = "uniform"
rate = 200000
cgroup = "noswap"
[[workload]]
name = "b"
kind = "anon"
size = "350M"
pattern = "uniform"
rate = 200000
cgroup = "swapper"
"#;
    let r = run_text(text, &[]);
    let cg = |p: &str, k: &str| r.cgroups[p]["memory"]["swap"][k].clone();
    assert_eq!(cg("noswap", "current").as_u64(), Some(0));
    assert_eq!(cg("noswap", "max").as_u64(), Some(0));
    assert!(cg("swapper", "current").as_u64().unwrap() > 0);
    assert_eq!(cg("swapper", "max").as_str(), Some("max"));
    assert_eq!(
        r.cgroups["noswap"]["memory"]["stat"]["pgsteal"].as_u64(),
        Some(0)
    );
    assert!(r.vm("pswpout") > 0);
}

/// `kernel.memcg_stats_flush`: with "rstat" reclaim reads the statistics the last
/// flush left, so a monitoring agent reading memory.stat (which flushes) changes what
/// reclaim does; with "exact" it reads the live counters and the reads change nothing.
/// The direction: `inactive_is_low` sizes the lists from those statistics, and between
/// flushes reclaim drains the inactive list while the stale sizes still say it is
/// not low, so shrink_active_list deactivates nothing until the next flush. Reads
/// every 100 ms leave the sizes fresher than the 2 s periodic flush does: more
/// deactivation, and no more than with exact sizes.
#[test]
fn memory_stat_reads_flush_what_reclaim_sees() {
    let text = std::fs::read_to_string("scenarios/quickstart.toml").unwrap();
    let run = |flush: &str, poll: &str| {
        common::run_checked(
            &text,
            &[
                &format!("kernel.memcg_stats_flush=\"{flush}\""),
                &format!("run.memory_stat_poll=\"{poll}\""),
            ],
        )
    };
    let key = |r: &Results| {
        (
            r.vm("pgscan_kswapd"),
            r.vm("pgdeactivate"),
            r.vm("workingset_activate_file"),
        )
    };
    let [quiet, polled, exact_quiet, exact_polled] = std::thread::scope(|s| {
        [
            ("rstat", "0s"),
            ("rstat", "100ms"),
            ("exact", "0s"),
            ("exact", "100ms"),
        ]
        .map(|(flush, poll)| s.spawn(move || run(flush, poll)))
        .map(|h| h.join().unwrap())
    });
    let deactivated = |r: &Results| r.vm("pgdeactivate");
    assert!(
        deactivated(&quiet) < deactivated(&polled),
        "rstat: {} quiet, {} polled",
        deactivated(&quiet),
        deactivated(&polled)
    );
    assert!(
        deactivated(&polled) <= deactivated(&exact_quiet),
        "rstat polled {}, exact {}",
        deactivated(&polled),
        deactivated(&exact_quiet)
    );
    assert_eq!(
        key(&exact_quiet),
        key(&exact_polled),
        "nothing to flush under exact"
    );
}

/// A cgroup write computed from the cgroup's state when the action runs: a 64 MiB
/// mapping touched in order (16384 pages, all resident by 1 s: each first touch is a
/// 1 us fault) has memory.current = 64M, so "memory.current - 16M" writes 48M to
/// memory.max, and limit reclaim brings usage under it. Expressions that do not
/// parse are refused at the value's key.
#[test]
fn a_write_computed_from_memory_current() {
    let text = r#"
[run]
duration = "2s"
[machine]
memory = "512M"
[machine.swap]
type = "zram"
size = "512M"
[[cgroup]]
path = "app"
[[workload]]
name = "app"
kind = "anon"
size = "64M"
pattern = "sequential"
cgroup = "app"
[[action]]
at = "1s"
cgroup = "app"
write = "memory.max"
value = "memory.current - 16M"
"#;
    let r = common::run_checked(text, &[]);
    let m = &r.cgroups["app"]["memory"];
    // memory.current at 1 s is the 64 MiB and the process's kernel memory: 32 page
    // tables, a 4-page stack, and its objects' bytes charged in whole pages: mm_struct
    // (1352 with its objcg pointer) 1 page, leaving 2744; signal_cache (1160) from
    // that; sighand_cache (2120) 1 page; files_cache (712) and the VMA (184) from
    // what is left; task_struct (9992) 3 pages: 5. 41 pages in all.
    let kernel = 41 * 4096;
    assert_eq!(m["max"].as_u64(), Some((48 << 20) + kernel));
    assert!(
        m["current"].as_u64().unwrap() <= (48 << 20) + kernel,
        "{}",
        m["current"]
    );
    assert_eq!(m["peak"].as_u64(), Some((64 << 20) + kernel));
    for bad in ["memory.current -", "memory.stat - 1M", "memory.current 16M"] {
        let e = scenario::parse_str(&text.replace("memory.current - 16M", bad), "t.toml", &[])
            .expect_err("refused")
            .to_string();
        assert!(e.contains("action[0].value"), "{e}");
    }
}

/// memory.high enforced in the charge path (v5.18+'s `try_charge_memcg`): a task
/// more than MEMCG_CHARGE_BATCH pages over memory.high reclaims before its charge
/// returns, not only on its way back to user space. One read() of 64 MiB into a
/// cgroup with memory.high = 16M: every refill of the 64-page stock over high adds
/// 64 to `memcg_nr_pages_over_high`, and the second one (128 > 64) reclaims. Worked
/// by hand, memory.current never exceeds high by more than those two batches and the
/// readahead window in flight (read_ahead_kb = 128: 32 pages, locked until read):
/// 4096 + 128 + 32 pages. Left to the return to user space, as before v5.18, the
/// whole 64 MiB would be charged first.
#[test]
fn one_large_read_is_held_near_memory_high_in_the_charge_path() {
    let text = r#"[run]
duration = "2s"
stop_when_done = true
[machine]
memory = "1G"
[[cgroup]]
path = "box"
memory.high = "16M"
[[workload]]
name = "reader"
kind = "file-read"
cgroup = "box"
nr_files = 1
file_size = "64M"
io_size = "64M"
pattern = "sequential"
ops = 1
"#;
    let r = common::run_checked(text, &[]);
    let memory = &r.cgroups["box"]["memory"];
    let peak_pages = memory["peak"].as_u64().unwrap() / 4096;
    assert!(peak_pages > 4096, "peak {peak_pages} pages");
    assert!(peak_pages <= 4096 + 2 * 64 + 32, "peak {peak_pages} pages");
    // The read completed, reclaiming as it went: 64 MiB is 16384 pages, 12288 and
    // more of them over high.
    assert_eq!(r.workloads["reader"].ops, 1);
    assert!(memory["events"]["high"].as_u64().unwrap() > 0);
    assert!(memory["stat"]["pgsteal"].as_u64().unwrap() >= 16384 - 4096 - 2 * 64 - 32);
    // The control: without memory.high the whole file is charged (with the few
    // pages of the process's and the file's kernel objects).
    let r = common::run_checked(text, &["cgroup.0.memory.high=\"max\""]);
    let peak = r.cgroups["box"]["memory"]["peak"].as_u64().unwrap();
    assert!(
        (64 << 20..(64 << 20) + (64 << 10)).contains(&peak),
        "{peak}"
    );
}
